package items

import (
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	dg "github.com/netagent/netagent/depgraph"
)

// RuleAction is what a rule does with the packets it matches (the
// fib_rule_hdr action). The zero RuleAction looks up Table.
type RuleAction uint8

// The actions netagent manages.
const (
	RuleLookup RuleAction = iota
	RuleGoto
	RuleBlackhole
	RuleUnreachable
	RuleProhibit
)

// String returns "lookup", "goto", "blackhole", "unreachable" or "prohibit".
func (a RuleAction) String() string {
	switch a {
	case RuleLookup:
		return "lookup"
	case RuleGoto:
		return "goto"
	case RuleBlackhole:
		return "blackhole"
	case RuleUnreachable:
		return "unreachable"
	case RuleProhibit:
		return "prohibit"
	}
	return fmt.Sprintf("action(%d)", uint8(a))
}

// PortRange is a rule's sport or dport selector (FRA_SPORT_RANGE,
// FRA_DPORT_RANGE); the zero PortRange selects any port.
type PortRange struct {
	Start, End uint16
}

// IsSet reports whether the range selects anything.
func (p PortRange) IsSet() bool { return p != PortRange{} }

// String returns "80" or "1000-2000".
func (p PortRange) String() string {
	if p.Start == p.End {
		return strconv.Itoa(int(p.Start))
	}
	return fmt.Sprintf("%d-%d", p.Start, p.End)
}

// UIDRange is a rule's uidrange selector (FRA_UID_RANGE), inclusive.
type UIDRange struct {
	Start, End uint32
}

// String returns "1000-1999".
func (u UIDRange) String() string { return fmt.Sprintf("%d-%d", u.Start, u.End) }

// ipProtoNames are the names `ip rule` prints for FRA_IP_PROTO.
var ipProtoNames = map[uint8]string{1: "icmp", 6: "tcp", 17: "udp", 33: "dccp", 47: "gre",
	50: "esp", 51: "ah", 58: "ipv6-icmp", 132: "sctp"}

// IPProtoName returns the name of an IP protocol number ("tcp"), or the
// number.
func IPProtoName(p uint8) string {
	if n, ok := ipProtoNames[p]; ok {
		return n
	}
	return strconv.Itoa(int(p))
}

// IPProtoByName returns the number of a protocol name IPProtoName gives.
func IPProtoByName(name string) (uint8, bool) {
	for p, n := range ipProtoNames {
		if n == name {
			return p, true
		}
	}
	return 0, false
}

// Rule is a policy routing rule. The kernel cannot modify a rule in place,
// so the name holds every selector and the action, `ip rule` style:
// "ipv4 100: not from 10.0.0.0/8 fwmark 0x1/0xffffffff iif lan0 ipproto tcp
// dport 80 lookup 100 suppress_prefixlength 0". Any change of a selector or
// the action is another item; only Deps can differ between two items of
// one name, and changing them needs no kernel change.
//
// The configurator sets RouteProtocol on every rule it creates.
type Rule struct {
	Priority uint32 // always sent: the kernel would pick one otherwise
	Family   Family
	From     netip.Prefix // zero for all
	To       netip.Prefix // zero for all
	Mark     uint32
	// Mask is the fwmark mask. With a non-zero Mark, 0 means 0xffffffff
	// (as the kernel takes it), in the name and in Equal alike.
	Mask    uint32
	IifName string // "" for any
	OifName string // "" for any
	// IPProto is the IP protocol (FRA_IP_PROTO); 0 for any.
	IPProto uint8
	SPort   PortRange // zero for any
	DPort   PortRange // zero for any
	UIDs    *UIDRange // nil for any
	// Invert (FIB_RULE_INVERT, `ip rule add not ...`) matches the packets
	// the selectors do not.
	Invert bool
	// Action is what the rule does; Table is set exactly for RuleLookup,
	// Goto exactly for RuleGoto (a later priority).
	Action RuleAction
	Table  uint32
	Goto   uint32
	// SuppressPrefixlen (FRA_SUPPRESS_PREFIXLEN) rejects a lookup's route
	// of this prefix length or less; nil for none.
	SuppressPrefixlen *uint8
	// Deps are items that must exist first: the renderer lists
	// interface/<IifName> and interface/<OifName> when the intent declares
	// those interfaces, and the rules a goto jumps to. (The kernel accepts
	// a rule naming an absent interface; it only stays inactive until the
	// interface appears.)
	Deps []dg.ItemRef
}

var _ dg.Item = (*Rule)(nil)

// Type returns TypeRule.
func (r *Rule) Type() string { return TypeRule }

// Name returns the canonical key of every selector and the action (see
// Rule).
func (r *Rule) Name() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %d:", r.Family, r.Priority)
	if r.Invert {
		b.WriteString(" not")
	}
	if r.From.IsValid() {
		b.WriteString(" from " + r.From.String())
	} else {
		b.WriteString(" from all")
	}
	if r.To.IsValid() {
		b.WriteString(" to " + r.To.String())
	}
	if r.Mark != 0 || r.Mask != 0 {
		fmt.Fprintf(&b, " fwmark %#x/%#x", r.Mark, r.EffectiveMask())
	}
	if r.IifName != "" {
		b.WriteString(" iif " + r.IifName)
	}
	if r.OifName != "" {
		b.WriteString(" oif " + r.OifName)
	}
	if r.UIDs != nil {
		b.WriteString(" uidrange " + r.UIDs.String())
	}
	if r.IPProto != 0 {
		b.WriteString(" ipproto " + IPProtoName(r.IPProto))
	}
	if r.SPort.IsSet() {
		b.WriteString(" sport " + r.SPort.String())
	}
	if r.DPort.IsSet() {
		b.WriteString(" dport " + r.DPort.String())
	}
	switch r.Action {
	case RuleLookup:
		b.WriteString(" lookup " + strings.TrimPrefix(TableName(r.Table), "table "))
	case RuleGoto:
		fmt.Fprintf(&b, " goto %d", r.Goto)
	default:
		b.WriteString(" " + r.Action.String())
	}
	if r.SuppressPrefixlen != nil {
		fmt.Fprintf(&b, " suppress_prefixlength %d", *r.SuppressPrefixlen)
	}
	return b.String()
}

// EffectiveMask returns the fwmark mask the kernel uses: Mask, or 0xffffffff
// for a non-zero Mark with Mask 0.
func (r *Rule) EffectiveMask() uint32 {
	if r.Mask == 0 && r.Mark != 0 {
		return 0xffffffff
	}
	return r.Mask
}

// External returns false.
func (r *Rule) External() bool { return false }

// Dependencies: Deps.
func (r *Rule) Dependencies() []dg.Dependency { return extraDeps(nil, r.Deps) }

// Equal compares every field (Mask as EffectiveMask).
func (r *Rule) Equal(other dg.Item) bool {
	o, ok := other.(*Rule)
	if !ok || o == nil {
		return false
	}
	return r.Priority == o.Priority && r.Family == o.Family && r.From == o.From &&
		r.To == o.To && r.Mark == o.Mark && r.EffectiveMask() == o.EffectiveMask() &&
		r.IifName == o.IifName && r.OifName == o.OifName && r.Table == o.Table &&
		r.IPProto == o.IPProto && r.SPort == o.SPort && r.DPort == o.DPort &&
		ptrEqual(r.UIDs, o.UIDs) && r.Invert == o.Invert && r.Action == o.Action &&
		r.Goto == o.Goto && ptrEqual(r.SuppressPrefixlen, o.SuppressPrefixlen) &&
		slices.Equal(r.Deps, o.Deps)
}

// String describes the rule in one line.
func (r *Rule) String() string { return "rule " + r.Name() }
