package nftables

import (
	"encoding/json"
	"reflect"
	"slices"

	"github.com/google/nftables/expr"

	"github.com/netagent/netagent/items"
)

// diffTable returns the ops, in one batch's order, that turn netagent's
// table as dumped (with its rules' handles) into want, touching only what
// differs: unchanged rules keep their handles and counters, unchanged
// chains and sets stay. A base chain whose hook, priority, type or device
// changes (the kernel cannot change them in place) is deleted and added
// again with its rules; a set whose type or flags change likewise, with
// the rules that look it up.
//
// The order is the kernel's: rules go before the chains and sets they
// reference, sets and chains come before the rules that use them.
func diffTable(have Dumped, want *items.NftTable) []Op {
	wc := want.Canonical()
	return diffCanonical(have, want, &wc)
}

// diffCanonical is diffTable given want's canonical form wc too.
func diffCanonical(have Dumped, want, wc *items.NftTable) []Op {
	d := &differ{ref: items.NftTable{Family: want.Family, Table: want.Table, Sets: want.Sets, Maps: want.Maps}}
	// A dump is in canonical form already (the codec decodes to it).
	hc := have.Table
	d.sets(hc.Sets, wc.Sets)
	d.maps(hc.Maps, wc.Maps)
	d.chains(hc.Chains, wc.Chains, have.Handles)
	return d.ordered()
}

// differ collects a diff's ops by the step of the batch they belong to.
type differ struct {
	ref                 items.NftTable // the table every op is in, with want's sets (for the rules' lookups)
	delRules, delChains []Op
	delSets, delElems   []Op
	addSets, addElems   []Op
	addChains, addRules []Op
	delMaps, addMaps    []Op // verdict maps and their elements (maps_diff.go)
	recreatedSets       map[string]bool
	recreatedChains     map[string]bool
}

func (d *differ) op(kind OpKind) Op { return Op{Kind: kind, Table: d.ref} }

func (d *differ) ordered() []Op {
	var out []Op
	for _, ops := range [][]Op{d.delRules, d.delMaps, d.delChains, d.delSets, d.delElems, d.addSets, d.addElems, d.addChains, d.addMaps, d.addRules} {
		out = append(out, ops...)
	}
	return out
}

func byName[T any](list []T, name func(*T) string) map[string]*T { return items.IndexNamed(list, name) }

func setName(s *items.NftSet) string     { return s.Name }
func chainName(c *items.NftChain) string { return c.Name }

// sets diffs the sets: added, deleted, recreated (another type or
// flags), or their elements added and deleted.
func (d *differ) sets(have, want []items.NftSet) {
	d.recreatedSets = map[string]bool{}
	wantBy := byName(want, setName)
	for _, h := range have {
		w, ok := wantBy[h.Name]
		if !ok || !sameSet(h, *w) {
			del := d.op(OpDeleteSet)
			del.Set = items.NftSet{Name: h.Name}
			d.delSets = append(d.delSets, del)
			d.recreatedSets[h.Name] = ok
			continue
		}
		d.elements(h, *w)
	}
	haveBy := byName(have, setName)
	for _, w := range want {
		if h, ok := haveBy[w.Name]; !ok || d.recreatedSets[h.Name] {
			add := d.op(OpAddSet)
			add.Set = w
			d.addSets = append(d.addSets, add)
		}
	}
}

// sameSet says whether h and w are the same set but for their elements.
func sameSet(h, w items.NftSet) bool {
	h.Elements, w.Elements = nil, nil
	return reflect.DeepEqual(h, w)
}

// elements diffs a kept set's elements (canonical, so equal strings are
// equal keys).
func (d *differ) elements(h, w items.NftSet) {
	// Both in strictly ascending order of their keys (a dump and an
	// intent as rendered): one walk along both, no map of 100k strings.
	del, add, ok := items.NftElementsDiff(h.Type, h.Interval, h.Elements, w.Elements)
	if !ok {
		del, add = items.MinusStrings(h.Elements, w.Elements), items.MinusStrings(w.Elements, h.Elements)
	}
	s := h
	if len(del) > 0 {
		s.Elements = del
		op := d.op(OpDeleteElements)
		op.Set = s
		d.delElems = append(d.delElems, op)
	}
	if len(add) > 0 {
		s.Elements = add
		op := d.op(OpAddElements)
		op.Set = s
		d.addElems = append(d.addElems, op)
	}
}

// chains diffs the chains: added, deleted, recreated (a base chain's
// hook, priority, type or device), a base chain's policy changed in
// place, and the rules of the kept ones.
func (d *differ) chains(have, want []items.NftChain, handles map[string][]uint64) {
	d.recreatedChains = map[string]bool{}
	wantBy := byName(want, chainName)
	for _, h := range have {
		if w, ok := wantBy[h.Name]; !ok || !sameHook(h, *w) {
			d.recreatedChains[h.Name] = ok
			ch := items.NftChain{Name: h.Name}
			flush, del := d.op(OpFlushChain), d.op(OpDeleteChain)
			flush.Chain, del.Chain = ch, ch
			d.delChains = append(d.delChains, flush, del)
		}
	}
	// The flushes first: a deleted chain's rules may jump to another.
	slices.SortStableFunc(d.delChains, func(a, b Op) int { return int(a.Kind) - int(b.Kind) })
	haveBy := byName(have, chainName)
	for _, w := range want {
		h, ok := haveBy[w.Name]
		if !ok || d.recreatedChains[w.Name] {
			d.addChain(w, true)
			continue
		}
		if h.Policy != w.Policy {
			d.addChain(w, false)
		}
		d.rules(w.Name, h.Rules, handles[w.Name], w.Rules)
	}
}

// sameHook says whether h can become w in place: both regular chains, or
// base chains of the same type, hook, priority and device.
func sameHook(h, w items.NftChain) bool {
	return h.Base() == w.Base() && h.Type == w.Type && h.Hook == w.Hook && h.Device == w.Device &&
		reflect.DeepEqual(h.Priority, w.Priority)
}

// addChain adds chain w (withRules: and its rules), or on an existing
// chain of the same hook sets its policy.
func (d *differ) addChain(w items.NftChain, withRules bool) {
	op := d.op(OpAddChain)
	op.Chain = w
	op.Chain.Rules = nil
	d.addChains = append(d.addChains, op)
	if !withRules {
		return
	}
	for _, r := range w.Rules {
		d.addRule(w.Name, r, 0)
	}
}

func (d *differ) addRule(chain string, r items.NftRule, before uint64) {
	op := d.op(OpAddRule)
	op.Chain = items.NftChain{Name: chain}
	op.Rule, op.Handle = r, before
	d.addRules = append(d.addRules, op)
}

// maxLCS bounds the table of the longest common subsequence of a chain's
// changed middle; a larger change replaces the middle whole.
const maxLCS = 1 << 22

// rules diffs a kept chain's rules: the longest common subsequence of
// the dumped and the wanted rules stays (handles and counters), the
// other dumped rules are deleted by handle, and each other wanted rule
// is inserted before the next kept rule (appended after the last).
func (d *differ) rules(chain string, have []items.NftRule, handles []uint64, want []items.NftRule) {
	keep := d.keepable(have)
	match := matchRules(have, want, keep) // match[j]: the have index want[j] keeps, or -1
	kept := make([]bool, len(have))
	for _, i := range match {
		if i >= 0 {
			kept[i] = true
		}
	}
	for i, k := range kept {
		if !k {
			del := d.op(OpDeleteRule)
			del.Chain, del.Handle = items.NftChain{Name: chain}, handles[i]
			d.delRules = append(d.delRules, del)
		}
	}
	before := make([]uint64, len(want))
	next := uint64(0)
	for j := len(want) - 1; j >= 0; j-- {
		before[j] = next
		if match[j] >= 0 {
			next = handles[match[j]]
		}
	}
	for j, r := range want {
		if match[j] < 0 {
			d.addRule(chain, r, before[j])
		}
	}
}

// keepable says which dumped rules may stay (nil: all): not those that
// look up a recreated set or jump to a recreated chain (their references
// bind the deleted one).
func (d *differ) keepable(have []items.NftRule) []bool {
	if len(d.recreatedSets) == 0 && len(d.recreatedChains) == 0 {
		return nil
	}
	types := tableTypes(&d.ref)
	keep := make([]bool, len(have))
	for i := range have {
		keep[i] = !d.bindsRecreated(&have[i], types)
	}
	return keep
}

func (d *differ) bindsRecreated(r *items.NftRule, types setTypes) bool {
	exprs, err := encodeRule(d.ref.Family, r, types)
	if err != nil {
		return true
	}
	for _, e := range exprs {
		switch e := e.(type) {
		case *expr.Lookup:
			if _, ok := d.recreatedSets[e.SetName]; ok {
				return true
			}
		case *expr.Verdict:
			if _, ok := d.recreatedChains[e.Chain]; ok && e.Chain != "" {
				return true
			}
		}
	}
	return false
}

// matchRules returns, for each wanted rule, the index of the equal
// dumped rule it keeps (-1: none), the matches in order: the common
// prefix and suffix, and a longest common subsequence of the rest when
// it is small enough.
func matchRules(have, want []items.NftRule, keep []bool) []int {
	match := make([]int, len(want))
	for j := range match {
		match[j] = -1
	}
	keeps := func(i int) bool { return keep == nil || keep[i] }
	eq := func(i, j int) bool { return keeps(i) && have[i].Same(&want[j]) }
	lo := 0
	for ; lo < len(have) && lo < len(want) && eq(lo, lo); lo++ {
		match[lo] = lo
	}
	hi, hj := len(have), len(want)
	for ; hi > lo && hj > lo && eq(hi-1, hj-1); hi, hj = hi-1, hj-1 {
		match[hj-1] = hi - 1
	}
	n, m := hi-lo, hj-lo
	if n == 0 || m == 0 || n*m > maxLCS {
		return match
	}
	hk, wk := ruleKeys(have[lo:hi]), ruleKeys(want[lo:hj])
	eq = func(i, j int) bool { return keeps(i) && hk[i-lo] == wk[j-lo] }
	// l[i][j]: the LCS of have[lo+i:hi] and want[lo+j:hj].
	l := make([]int32, (n+1)*(m+1))
	at := func(i, j int) *int32 { return &l[i*(m+1)+j] }
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if eq(lo+i, lo+j) {
				*at(i, j) = *at(i+1, j+1) + 1
			} else {
				*at(i, j) = max(*at(i+1, j), *at(i, j+1))
			}
		}
	}
	for i, j := 0, 0; i < n && j < m; {
		switch {
		case eq(lo+i, lo+j):
			match[lo+j] = lo + i
			i, j = i+1, j+1
		case *at(i+1, j) >= *at(i, j+1):
			i++
		default:
			j++
		}
	}
	return match
}

// ruleKeys returns each rule's content as a string (JSON), equal for equal
// rules.
func ruleKeys(rules []items.NftRule) []string {
	out := make([]string, len(rules))
	for i, r := range rules {
		b, _ := json.Marshal(r)
		out[i] = string(b)
	}
	return out
}
