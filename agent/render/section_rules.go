package render

import (
	"net/netip"
	"slices"
	"strings"

	"github.com/netagent/netagent/agent/intent"
	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/items"
)

// The rules section. A rule's iif and oif may name foreign interfaces,
// which ToIntent leaves undeclared.
var rulesSection = section{
	path:   "rules",
	render: (*builder).rules,
	toIntent: func(inv *inverter, out *intent.Intent) {
		for _, r := range sectionItems[*items.Rule](inv) {
			out.Rules = append(out.Rules, ruleToIntent(r))
		}
	},
}

// rules renders every rule. A rule depends on the interfaces it names that
// the intent declares (on its veth for a veth peer); others may be foreign.
// A goto rule depends on the rules of its family at the priority it jumps
// to, so that it is never left pointing at nothing (the kernel marks such
// a rule unresolved and skips it).
func (b *builder) rules() {
	list := make([]*items.Rule, len(b.in.Rules))
	for i := range b.in.Rules {
		list[i] = ruleItem(&b.in.Rules[i])
		list[i].Deps = b.ruleDeps(b.in.Rules[i].IIF, b.in.Rules[i].OIF)
	}
	for i, it := range list {
		if it.Action == items.RuleGoto {
			var targets []dg.ItemRef
			for _, t := range list {
				if t.Priority == it.Goto && t.Family == it.Family {
					targets = append(targets, dg.Ref(t))
				}
			}
			slices.SortFunc(targets, func(a, b dg.ItemRef) int { return strings.Compare(a.Name, b.Name) })
			it.Deps = append(it.Deps, targets...)
		}
		b.object(b.in.Rules[i].Drift, b.in.Rules[i].Origin)
		b.put(it, b.in.Locate(b.in.Rules[i].Origin, "rules", i))
	}
}

// ruleItem converts a rule (without its dependencies).
func ruleItem(r *intent.Rule) *items.Rule {
	it := &items.Rule{
		Priority: r.Priority,
		Family:   families[r.EffectiveFamily()],
		From:     ruleSelector(r.From),
		To:       ruleSelector(r.To),
		Mark:     r.FwMark,
		Mask:     r.FwMask,
		IifName:  r.IIF,
		OifName:  r.OIF,
		IPProto:  intent.ParseIPProto(r.IPProto),
		SPort:    portRange(r.SPort),
		DPort:    portRange(r.DPort),
		Invert:   r.Not,
		Action:   ruleActions[r.EffectiveAction()],
		Table:    uint32(r.Table),
		Goto:     r.Goto,
	}
	if r.UIDRange != "" {
		start, end := intent.ParseRange(r.UIDRange)
		it.UIDs = &items.UIDRange{Start: start, End: end}
	}
	if p := r.SuppressPrefixlength; p != nil {
		v := uint8(*p)
		it.SuppressPrefixlen = &v
	}
	return it
}

// portRange converts a sport or dport ("" is none).
func portRange(s string) items.PortRange {
	if s == "" {
		return items.PortRange{}
	}
	start, end := intent.ParseRange(s)
	return items.PortRange{Start: uint16(start), End: uint16(end)}
}

var ruleActions = map[intent.RuleAction]items.RuleAction{
	intent.ActionLookup:      items.RuleLookup,
	intent.ActionGoto:        items.RuleGoto,
	intent.ActionBlackhole:   items.RuleBlackhole,
	intent.ActionUnreachable: items.RuleUnreachable,
	intent.ActionProhibit:    items.RuleProhibit,
}

// ruleDeps returns the interface items that the named interfaces are, in
// order and without duplicates.
func (b *builder) ruleDeps(names ...string) []dg.ItemRef {
	var deps []dg.ItemRef
	for _, n := range names {
		owner := n
		if veth, ok := b.idx.peers[n]; ok {
			owner = veth.Name
		} else if _, ok := b.idx.ifaces[n]; !ok {
			continue
		}
		if ref := items.InterfaceRef(owner); !containsRef(deps, ref) {
			deps = append(deps, ref)
		}
	}
	return deps
}

// optPrefix parses an optional prefix ("" gives the zero Prefix).
func optPrefix(s string) netip.Prefix {
	p, _ := netip.ParsePrefix(s) // Validate checked it
	return p
}

// ruleSelector is a rule's from or to: the zero Prefix for none and for a
// prefix of length 0 ("0.0.0.0/0", "::/0"), which the kernel keeps as none.
func ruleSelector(s string) netip.Prefix {
	if p := optPrefix(s); p.Bits() > 0 {
		return p
	}
	return netip.Prefix{}
}

// ruleToIntent converts a Rule item, leaving out the defaults.
func ruleToIntent(r *items.Rule) intent.Rule {
	out := intent.Rule{
		Priority: r.Priority,
		From:     addrString(r.From),
		To:       addrString(r.To),
		FwMark:   r.Mark,
		FwMask:   r.EffectiveMask(),
		IIF:      r.IifName,
		OIF:      r.OifName,
		Table:    intent.TableID(r.Table),
		Not:      r.Invert,
		Goto:     r.Goto,
	}
	if r.Mark != 0 && out.FwMask == 0xffffffff {
		out.FwMask = 0
	}
	if r.Action != items.RuleLookup {
		out.Action = ruleActionNames[r.Action]
	}
	if r.IPProto != 0 {
		out.IPProto = items.IPProtoName(r.IPProto)
	}
	if r.SPort.IsSet() {
		out.SPort = r.SPort.String()
	}
	if r.DPort.IsSet() {
		out.DPort = r.DPort.String()
	}
	if r.UIDs != nil {
		out.UIDRange = r.UIDs.String()
	}
	if p := r.SuppressPrefixlen; p != nil {
		v := int(*p)
		out.SuppressPrefixlength = &v
	}
	if out.From == "" && out.To == "" {
		out.Family = intent.FamilyIPv4
		if r.Family == items.FamilyIPv6 {
			out.Family = intent.FamilyIPv6
		}
	}
	return out
}

var ruleActionNames = map[items.RuleAction]intent.RuleAction{
	items.RuleGoto:        intent.ActionGoto,
	items.RuleBlackhole:   intent.ActionBlackhole,
	items.RuleUnreachable: intent.ActionUnreachable,
	items.RuleProhibit:    intent.ActionProhibit,
}
