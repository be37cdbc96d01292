package oneshot

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/netagent/netagent/agent/host"
	"github.com/netagent/netagent/agent/intent"
	"github.com/netagent/netagent/agent/render"
	"github.com/netagent/netagent/configurators"
	"github.com/netagent/netagent/configurators/dhcp"
	"github.com/netagent/netagent/configurators/dhcp6"
	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/items"
	"github.com/netagent/netagent/items/lease4"
)

// Shown is what `netagent show` found in the kernel.
type Shown struct {
	// Items are netagent's objects and the links around them, without
	// what the leases kept give (listed with the lease); with all, the
	// links of netagent's interfaces once, as netagent's.
	Items []dg.Item
	// Foreign (all) are the objects that are not netagent's.
	Foreign *configurators.Foreign
	// Kept and Kept6 are the leases the state directory keeps.
	Kept  map[string]*lease4.Lease
	Kept6 map[string]*dhcp6.Lease
	// dhcp4 are the dhcp4 sections of the interfaces with a kept lease.
	dhcp4 map[string]*intent.DHCP4
}

// Show reads what the kernel of the namespace holds (nothing changes);
// all adds the objects that are not netagent's. o.ResolvConf is where to
// read the DNS netagent wrote.
func Show(ctx context.Context, o *Options, all bool) (*Shown, error) {
	rt, err := host.Open(o.Netns, o.StateDir, o.log())
	if err != nil {
		return nil, err
	}
	defer rt.Close()
	cur, err := rt.ReadCurrent(nil)
	if err != nil {
		return nil, &StepError{Step: "show", Err: err}
	}
	var list []dg.Item
	for it := range cur.Items() {
		list = append(list, it)
	}
	s := &Shown{Kept: dhcp.KeptLeases(rt.StateDir(), time.Now()), Kept6: dhcp6.KeptLeases(rt.StateDir(), time.Now())}
	metrics := leaseMetrics(list, s.Kept)
	s.dhcp4 = dhcp4Sections(rt, s.Kept, metrics)
	list = withoutLeaseItems(list, s.Kept, s.Kept6)
	if o.ResolvConf != "" {
		list = append(list, showDNS(o.ResolvConf, s.Kept, s.Kept6)...)
	}
	if all {
		list = withoutManagedLinks(list)
		if s.Foreign, err = configurators.ReadForeign(rt.Target(), rt.StateDir()); err != nil {
			return nil, &StepError{Step: "show", Err: err}
		}
	}
	s.Items = list
	return s, nil
}

// Intent is what show found as an intent document (show --json: valid
// input for apply), the interfaces with a kept lease with their dhcp4 or
// dhcp6 section.
func (s *Shown) Intent() *intent.Intent {
	return withDHCP(render.ToIntent(s.Items), s.dhcp4, s.Kept6)
}

// AllJSON is show --all --json.
func (s *Shown) AllJSON() *ShowAll { return showAllJSON(s.Items, s.Foreign) }

// ShowSection is a titled section of show's text.
type ShowSection struct {
	Title string
	Lines []ShowLine
}

// ShowLine is an object's line in show's text, with the rules of a chain
// (each as iptables takes it after "-A <Chain>").
type ShowLine struct {
	Text  string
	Chain string
	Rules []string
}

// Text is show's text: one section per item type (all: per kind, the
// others' objects marked foreign), then the leases kept.
func (s *Shown) Text(all bool) []ShowSection {
	out := ShowText(s.Items)
	if all {
		out = ShowAllText(s.Items, s.Foreign)
	}
	return append(out, s.keptSections()...)
}

// ShowText is one section per item type of list, one line per item.
func ShowText(list []dg.Item) []ShowSection {
	var out []ShowSection
	for _, s := range showSections {
		sec := ShowSection{Title: s.title}
		for _, it := range list {
			if it.Type() == s.typ {
				sec.Lines = append(sec.Lines, itemLine(it))
			}
		}
		if len(sec.Lines) > 0 {
			out = append(out, sec)
		}
	}
	return out
}

// itemLine is an item's line, with a chain's rules.
func itemLine(it dg.Item) ShowLine {
	l := ShowLine{Text: it.String()}
	if c, ok := it.(*items.IptablesChain); ok {
		l.Chain, l.Rules = c.Chain, joinRules(c.Rules)
	}
	return l
}

func joinRules(rules [][]string) []string {
	out := make([]string, 0, len(rules))
	for _, args := range rules {
		out = append(out, render.JoinRule(args))
	}
	return out
}

// ShowAllText is one section per kind (show --all): netagent's objects,
// then the others' marked "foreign" (as netplan status --diff marks what
// it does not manage).
func ShowAllText(list []dg.Item, f *configurators.Foreign) []ShowSection {
	carriers := carryingLinks(list)
	list = slices.Concat(list, f.AddrNeigh)
	var out []ShowSection
	for _, s := range allSections {
		sec := ShowSection{Title: s.title}
		var others []ShowLine
		for _, it := range list {
			switch {
			case showKind(it) != s.typ:
			case isForeign(it):
				others = append(others, ShowLine{Text: foreignLineOn(it, carriers)})
			default:
				sec.Lines = append(sec.Lines, itemLine(it))
			}
		}
		sec.Lines = append(sec.Lines, others...)
		if s.typ == items.TypeIptablesChain {
			for _, c := range f.Chains {
				sec.Lines = append(sec.Lines, ShowLine{Text: foreignChainLine(&c), Chain: c.Chain, Rules: joinRules(c.Rules)})
			}
		}
		if s.typ == items.TypeNftTable {
			for _, t := range f.Tables {
				sec.Lines = append(sec.Lines, ShowLine{Text: foreignTableLine(&t)})
			}
		}
		if len(sec.Lines) > 0 {
			out = append(out, sec)
		}
	}
	return out
}

// foreignLineOn is foreignLine, saying of a link that netagent's objects
// sit on it.
func foreignLineOn(it dg.Item, carriers map[string]bool) string {
	line := foreignLine(it)
	if carriers[it.Name()] && it.Type() == items.TypeLink {
		line += " (netagent's objects on it)"
	}
	return line
}

// keptSections list the leases the state directory keeps.
func (s *Shown) keptSections() []ShowSection {
	var out []ShowSection
	if len(s.Kept) > 0 {
		sec := ShowSection{Title: "dhcp4 leases (kept in the state directory; their address and routes are left out above)"}
		for _, name := range slices.Sorted(maps.Keys(s.Kept)) {
			sec.Lines = append(sec.Lines, ShowLine{Text: LeaseOf(s.Kept[name]).String()})
		}
		out = append(out, sec)
	}
	if len(s.Kept6) > 0 {
		sec := ShowSection{Title: "dhcp6 leases (kept in the state directory; their address is left out above)"}
		for _, name := range slices.Sorted(maps.Keys(s.Kept6)) {
			l := s.Kept6[name]
			sec.Lines = append(sec.Lines, ShowLine{Text: fmt.Sprintf("dhcp6 %s: %s/128 from server %s, DNS %v, search %v, renew at %s, expires %s",
				name, l.Address, l.Server, l.DNS, l.Search, l.RenewAt().Format(time.RFC3339), l.Expires().Format(time.RFC3339))})
		}
		out = append(out, sec)
	}
	return out
}
