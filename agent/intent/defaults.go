package intent

import (
	"fmt"
	"net/netip"
)

// Defaults the format documents for fields left out.
const (
	DefaultVXLANPort = 4789 // IANA's VXLAN port
	TableMain        = 254  // the main routing table
	// IPv6DefaultMetric is the metric the kernel gives an IPv6 route
	// added with metric 0; the two are the same route.
	IPv6DefaultMetric = 1024
)

// IsUp reports whether the interface should be administratively up.
func (i *Interface) IsUp() bool { return i.State != StateDown }

// EffectiveType returns the route type, unicast when unset.
func (r *Route) EffectiveType() RouteType { return orDefault(r.Type, RouteUnicast) }

// EffectiveTable returns the routing table, TableMain when unset.
func (r *Route) EffectiveTable() uint32 { return orDefault(r.Table, TableMain) }

// EffectiveMetric returns the metric as the kernel keeps it: an IPv6 route's
// metric 0 is IPv6DefaultMetric.
func (r *Route) EffectiveMetric() uint32 {
	if r.Metric == 0 && r.EffectiveFamily() == FamilyIPv6 {
		return IPv6DefaultMetric
	}
	return r.Metric
}

// EffectiveFamily returns the route's family: Family if set, else that of
// To, Via or Src (the first that is an address), else IPv4. Validate checks
// that they agree.
func (r *Route) EffectiveFamily() Family {
	if r.Family != "" {
		return r.Family
	}
	fams := []Family{prefixFamily(r.To), addrFamily(r.Via), addrFamily(r.Src)}
	for _, n := range r.Nexthops {
		fams = append(fams, addrFamily(n.Via))
	}
	return firstFamily(FamilyIPv4, fams...)
}

// Dst returns the route's destination prefix, masked; "default" is
// 0.0.0.0/0 or ::/0 by EffectiveFamily.
func (r *Route) Dst() (netip.Prefix, error) {
	if r.To == "default" {
		if r.EffectiveFamily() == FamilyIPv6 {
			return netip.PrefixFrom(netip.IPv6Unspecified(), 0), nil
		}
		return netip.PrefixFrom(netip.IPv4Unspecified(), 0), nil
	}
	p, err := netip.ParsePrefix(r.To)
	if err != nil {
		return netip.Prefix{}, fmt.Errorf("route destination %q: %w", r.To, err)
	}
	return p.Masked(), nil
}

// EffectiveAction returns the rule's action, lookup when unset.
func (r *Rule) EffectiveAction() RuleAction { return orDefault(r.Action, ActionLookup) }

// EffectivePref returns the route's preference, medium when unset.
func (r *Route) EffectivePref() RoutePref { return orDefault(r.Pref, PrefMedium) }

// EffectiveFamily returns the rule's family: Family if set, else that of
// From or To, else IPv4 (which Validate does not accept).
func (r *Rule) EffectiveFamily() Family {
	if r.Family != "" {
		return r.Family
	}
	return firstFamily(FamilyIPv4, prefixFamily(r.From), prefixFamily(r.To))
}

// EffectiveFamily returns the chain's family, ipv4 when unset.
func (c *Chain) EffectiveFamily() ChainFamily { return orDefault(c.Family, ChainIPv4) }

// EffectivePosition returns the jump's position, 1 when unset.
func (c *Chain) EffectivePosition() int { return orDefault(c.Position, 1) }

// Families returns the families the chain goes to: one, or both.
func (c *Chain) Families() []Family {
	switch c.EffectiveFamily() {
	case ChainIPv6:
		return []Family{FamilyIPv6}
	case ChainBoth:
		return []Family{FamilyIPv4, FamilyIPv6}
	}
	return []Family{FamilyIPv4}
}

// orDefault returns v, or def when v is the zero value.
func orDefault[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}

// firstFamily returns the first non-empty family, or def.
func firstFamily(def Family, fams ...Family) Family {
	for _, f := range fams {
		if f != "" {
			return f
		}
	}
	return def
}

// addrFamily returns the family of the address s, or "" if s is not one.
func addrFamily(s string) Family {
	a, err := netip.ParseAddr(s)
	if err != nil {
		return ""
	}
	return familyOf(a)
}

// prefixFamily returns the family of the prefix s, or "" if s is not one.
func prefixFamily(s string) Family {
	p, err := netip.ParsePrefix(s)
	if err != nil {
		return ""
	}
	return familyOf(p.Addr())
}

// familyOf returns the family of a.
func familyOf(a netip.Addr) Family {
	if a.Is4() {
		return FamilyIPv4
	}
	return FamilyIPv6
}
