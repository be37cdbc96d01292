package items

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"

	dg "github.com/netagent/netagent/depgraph"
)

// Rule is a policy routing rule that looks up a table. The kernel cannot
// modify a rule in place, so the name holds every selector, `ip rule` style:
// "ipv4 100: from 10.0.0.0/8 fwmark 0x1/0xffffffff iif lan0 lookup 100".
// Any change of a selector is another item; only Deps can differ between two
// items of one name, and changing them needs no kernel change.
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
	Table   uint32 // non-zero
	// Deps are items that must exist first: the renderer lists
	// interface/<IifName> and interface/<OifName> when the intent declares
	// those interfaces. (The kernel accepts a rule naming an absent
	// interface; it only stays inactive until the interface appears.)
	Deps []dg.ItemRef
}

var _ dg.Item = (*Rule)(nil)

// Type returns TypeRule.
func (r *Rule) Type() string { return TypeRule }

// Name returns the canonical key of every selector (see Rule).
func (r *Rule) Name() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %d:", r.Family, r.Priority)
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
	b.WriteString(" lookup " + strings.TrimPrefix(TableName(r.Table), "table "))
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
		slices.Equal(r.Deps, o.Deps)
}

// String describes the rule in one line.
func (r *Rule) String() string { return "rule " + r.Name() }
