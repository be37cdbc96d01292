package intent

import "net/netip"

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
	if s == "" {
		return "" // without the error ParseAddr would make
	}
	a, err := netip.ParseAddr(s)
	if err != nil {
		return ""
	}
	return familyOf(a)
}

// prefixFamily returns the family of the prefix s, or "" if s is not one.
func prefixFamily(s string) Family {
	if s == "" {
		return ""
	}
	p, ok := addrPrefix(s)
	if !ok {
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
