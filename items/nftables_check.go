package items

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	dg "github.com/netagent/netagent/depgraph"
)

// ItemFieldDiff is one attribute of an item that differs between the
// intended item and the running one, named as the item's own detail
// ("chain input rule 2 dport").
type ItemFieldDiff struct {
	Field      string
	Want, Have string
}

// FieldDiffer is an item whose differences from another item of its type
// are better told by the item than field by field: check (agent/host)
// uses it instead of its generic comparison.
type FieldDiffer interface {
	DiffFields(have dg.Item) []ItemFieldDiff
}

var _ FieldDiffer = (*NftTable)(nil)

// nftElementsShown bounds the set elements one difference names.
const nftElementsShown = 10

// DiffFields lists how the running table have differs from t, attribute
// by attribute, in the canonical form both are compared in: a chain
// missing or extra, a chain's type, hook, priority, policy or device, a
// rule by its chain and index and then by attribute (a rule added or
// removed is one difference, not a shift of all that follow), a set
// missing or extra, its type or flags, its elements missing and extra.
func (t *NftTable) DiffFields(have dg.Item) []ItemFieldDiff {
	h, ok := have.(*NftTable)
	if !ok || h == nil {
		return nil
	}
	w, r := t.byName(), h.byName()
	var out []ItemFieldDiff
	out = diffNftChains(out, w.Chains, r.Chains)
	out = diffNftSets(out, "set ", w.Sets, r.Sets)
	return diffNftSets(out, "map ", nftMapsAsSets(w.Maps), nftMapsAsSets(r.Maps))
}

// byName is t's canonical form with its chains, sets and maps in the
// order of their names (their order has no meaning; see Equal).
func (t *NftTable) byName() NftTable {
	c := t.Canonical()
	c.Chains, c.Sets, c.Maps = sortedBy(c.Chains, chainName), sortedBy(c.Sets, setName), sortedBy(c.Maps, mapName)
	return c
}

// nftMapsAsSets are verdict maps as sets of "key : verdict" elements, for
// their differences ("map svc elements: want 23 : drop (missing), ...").
func nftMapsAsSets(maps []NftMap) []NftSet {
	var out []NftSet
	for _, m := range maps {
		out = append(out, NftSet{Name: m.Name, Type: m.Type, Interval: m.Interval, Elements: m.MapElementStrings()})
	}
	return out
}

func diffNftChains(out []ItemFieldDiff, want, have []NftChain) []ItemFieldDiff {
	haveBy := IndexNamed(have, func(c *NftChain) string { return c.Name })
	wanted := map[string]bool{}
	for _, w := range want {
		wanted[w.Name] = true
		h, ok := haveBy[w.Name]
		if !ok {
			out = append(out, ItemFieldDiff{"chain " + w.Name, nftChainString(w), "none"})
			continue
		}
		for _, a := range [][3]string{
			{"type", w.Type, h.Type}, {"hook", w.Hook, h.Hook}, {"priority", nftPriorityString(w.Priority), nftPriorityString(h.Priority)},
			{"policy", w.Policy, h.Policy}, {"device", w.Device, h.Device},
		} {
			if a[1] != a[2] {
				out = append(out, ItemFieldDiff{"chain " + w.Name + " " + a[0], orNone(a[1]), orNone(a[2])})
			}
		}
		out = diffNftRules(out, "chain "+w.Name, w.Rules, h.Rules)
	}
	for _, h := range have {
		if !wanted[h.Name] {
			out = append(out, ItemFieldDiff{"chain " + h.Name, "none", nftChainString(h)})
		}
	}
	return out
}

func nftChainString(c NftChain) string {
	if !c.Base() {
		return fmt.Sprintf("regular, %d rules", len(c.Rules))
	}
	return fmt.Sprintf("type %s hook %s priority %s policy %s, %d rules", c.Type, c.Hook, nftPriorityString(c.Priority), c.Policy, len(c.Rules))
}

func nftPriorityString(p *NftPriority) string {
	if p == nil {
		return ""
	}
	return fmt.Sprint(p.Value)
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// diffNftRules compares a chain's rules: the common prefix and suffix
// match; of the rest, rules at the same index differ attribute by
// attribute, and the longer side's remaining rules are added or extra.
func diffNftRules(out []ItemFieldDiff, chain string, want, have []NftRule) []ItemFieldDiff {
	lo := 0
	for lo < len(want) && lo < len(have) && reflect.DeepEqual(want[lo], have[lo]) {
		lo++
	}
	wh, hh := len(want), len(have)
	for wh > lo && hh > lo && reflect.DeepEqual(want[wh-1], have[hh-1]) {
		wh, hh = wh-1, hh-1
	}
	for i := lo; i < wh || i < hh; i++ {
		field := fmt.Sprintf("%s rule %d", chain, i)
		switch {
		case i >= hh:
			out = append(out, ItemFieldDiff{field, nftRuleString(want[i]), "none"})
		case i >= wh:
			out = append(out, ItemFieldDiff{field, "none", nftRuleString(have[i])})
		default:
			out = diffNftRule(out, field, want[i], have[i])
		}
	}
	return out
}

// diffNftRule compares two rules by their JSON attributes.
func diffNftRule(out []ItemFieldDiff, field string, want, have NftRule) []ItemFieldDiff {
	wv, hv := reflect.ValueOf(want), reflect.ValueOf(have)
	for i := range wv.NumField() {
		f := wv.Type().Field(i)
		if reflect.DeepEqual(wv.Field(i).Interface(), hv.Field(i).Interface()) {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		out = append(out, ItemFieldDiff{field + " " + name, nftJSON(wv.Field(i)), nftJSON(hv.Field(i))})
	}
	return out
}

// nftJSON shows an attribute as its JSON, "none" when it is unset.
func nftJSON(v reflect.Value) string {
	if v.IsZero() {
		return "none"
	}
	b, err := json.Marshal(v.Interface())
	if err != nil {
		return fmt.Sprint(v.Interface())
	}
	return string(b)
}

func nftRuleString(r NftRule) string {
	b, _ := json.Marshal(r)
	return string(b)
}

// diffNftSets compares sets, or maps as sets (kind "map ").
func diffNftSets(out []ItemFieldDiff, kind string, want, have []NftSet) []ItemFieldDiff {
	haveBy := IndexNamed(have, func(s *NftSet) string { return s.Name })
	wanted := map[string]bool{}
	for _, w := range want {
		wanted[w.Name] = true
		h, ok := haveBy[w.Name]
		if !ok {
			out = append(out, ItemFieldDiff{kind + w.Name, nftSetString(w), "none"})
			continue
		}
		if w.Type != h.Type {
			out = append(out, ItemFieldDiff{kind + w.Name + " type", w.Type, h.Type})
		}
		if w.Interval != h.Interval {
			out = append(out, ItemFieldDiff{kind + w.Name + " interval", fmt.Sprint(w.Interval), fmt.Sprint(h.Interval)})
		}
		if w.Timeout != h.Timeout {
			out = append(out, ItemFieldDiff{kind + w.Name + " timeout", orNone(w.Timeout), orNone(h.Timeout)})
		}
		missing, extra := MinusStrings(w.Elements, h.Elements), MinusStrings(h.Elements, w.Elements)
		if len(missing)+len(extra) > 0 {
			out = append(out, ItemFieldDiff{kind + w.Name + " elements",
				nftElementList(missing, "missing"), nftElementList(extra, "not intended")})
		}
	}
	for _, h := range have {
		if !wanted[h.Name] {
			out = append(out, ItemFieldDiff{kind + h.Name, "none", nftSetString(h)})
		}
	}
	return out
}

func nftSetString(s NftSet) string {
	flags := ""
	if s.Interval {
		flags = " interval"
	}
	return fmt.Sprintf("type %s%s, %d elements", s.Type, flags, len(s.Elements))
}

// nftElementList names at most nftElementsShown elements, and what they
// are.
func nftElementList(els []string, what string) string {
	if len(els) == 0 {
		return "none"
	}
	s := strings.Join(els[:min(len(els), nftElementsShown)], " ")
	if len(els) > nftElementsShown {
		s += fmt.Sprintf(" and %d more", len(els)-nftElementsShown)
	}
	return fmt.Sprintf("%s (%s)", s, what)
}

// MinusStrings returns the members of a not in b, in a's order.
func MinusStrings(a, b []string) []string {
	in := make(map[string]bool, len(b))
	for _, s := range b {
		in[s] = true
	}
	var out []string
	for _, s := range a {
		if !in[s] {
			out = append(out, s)
		}
	}
	return out
}

// IndexNamed maps the name of each member of list to its name.
func IndexNamed[T any](list []T, name func(*T) string) map[string]*T {
	out := make(map[string]*T, len(list))
	for i := range list {
		out[name(&list[i])] = &list[i]
	}
	return out
}
