package items

import (
	"net/netip"
	"slices"
	"strings"
)

// The Validate methods check what the kernel would refuse or silently
// change, so that the renderer can reject a bad intent before anything
// reaches the kernel. Every error wraps ErrInvalid.

// validIfName reports whether the kernel would accept name as an interface
// name (dev_valid_name): 1 to 15 bytes, not "." or "..", no '/', ':' or
// whitespace.
func validIfName(name string) bool {
	if name == "" || len(name) > 15 || name == "." || name == ".." {
		return false
	}
	return !strings.ContainsAny(name, "/: \t\n\r\v\f")
}

var (
	iptTables = []string{"filter", "nat", "mangle", "raw", "security"}
)

// Validate checks the interface name, the kind, that only the kind's
// attributes are set, and the attributes themselves (KindAttrs.Problem).
func (i *Interface) Validate() error {
	if !validIfName(i.IfName) {
		return invalid(i, "bad interface name %q", i.IfName)
	}
	if i.MTU < 0 {
		return invalid(i, "negative mtu %d", i.MTU)
	}
	if len(i.MAC) != 0 && len(i.MAC) != 6 {
		return invalid(i, "mac %s is not 6 bytes", i.MAC)
	}
	if i.Match != nil {
		if p := i.Match.problem(i.Kind); p != "" {
			return invalid(i, "match: %s", p)
		}
	}
	return i.checkAttrs()
}

// sameFamily reports whether every valid address is of family f.
func sameFamily(f Family, addrs ...netip.Addr) bool {
	for _, a := range addrs {
		if a.IsValid() && (FamilyOf(a) != f || a.Is4In6()) {
			return false
		}
	}
	return true
}

// Validate checks the names and the master's kind.
func (p *Port) Validate() error {
	switch {
	case !validIfName(p.IfName):
		return invalid(p, "bad interface name %q", p.IfName)
	case !validIfName(p.Master) || p.Master == p.IfName:
		return invalid(p, "bad master %q", p.Master)
	case !TakesPorts(p.MasterKind):
		return invalid(p, "master kind %q takes no ports", p.MasterKind)
	case p.Cost != 0 && p.MasterKind != KindBridge:
		return invalid(p, "cost on a %s port", p.MasterKind)
	}
	return p.bridgeProblem()
}

// Validate checks the device and the address, and that a label is only set
// on an IPv4 address and fits an interface name.
func (a *Address) Validate() error {
	switch {
	case !validIfName(a.Dev):
		return invalid(a, "bad device name %q", a.Dev)
	case !a.Prefix.IsValid() || a.Prefix.Addr().Is4In6():
		return invalid(a, "bad prefix")
	case a.Label != "" && (!a.Prefix.Addr().Is4() || len(a.Label) > 15):
		return invalid(a, "label %q: only on IPv4 addresses, at most 15 bytes", a.Label)
	}
	return nil
}

// Validate checks that Dst is a masked prefix, that Gw and Src are of its
// family, that a unicast route has a Gw or a Dev or two or more Nexthops
// (and not both) and other types have none, that OnLink has a Gw and a
// Dev, that Pref is only on IPv6 routes, and each nexthop.
func (r *Route) Validate() error {
	f := r.Family()
	if len(r.Nexthops) > 0 {
		return r.validateMultipath()
	}
	switch {
	case r.OnLink && (!r.Gw.IsValid() || r.Dev == ""):
		return invalid(r, "onlink without gateway and device")
	case r.Pref != RoutePrefMedium && (f != FamilyIPv6 || r.Pref > RoutePrefHigh):
		return invalid(r, "pref %s on an IPv4 route or unknown", r.Pref)
	case !r.Dst.IsValid() || r.Dst.Addr().Is4In6() || r.Dst != r.Dst.Masked():
		return invalid(r, "dst %s is not a masked prefix", r.Dst)
	case !sameFamily(f, r.Gw, r.Src):
		return invalid(r, "gateway or source not of the destination's family")
	case r.Kind > RouteProhibit:
		return invalid(r, "unknown route type %d", r.Kind)
	case r.Kind == RouteUnicast && !r.Gw.IsValid() && r.Dev == "":
		return invalid(r, "unicast route without gateway or device")
	case r.Gw.IsLinkLocalUnicast() && r.Dev == "":
		return invalid(r, "link-local gateway %s without device", r.Gw)
	case r.Kind != RouteUnicast && (r.Gw.IsValid() || r.Dev != ""):
		return invalid(r, "%s route with gateway or device", r.Kind)
	case r.Dev != "" && !validIfName(r.Dev):
		return invalid(r, "bad device name %q", r.Dev)
	case r.CarrierLink != "" && !validIfName(r.CarrierLink):
		return invalid(r, "bad carrier link name %q", r.CarrierLink)
	}
	return nil
}

// validateMultipath checks a route with Nexthops.
func (r *Route) validateMultipath() error {
	switch {
	case r.Kind != RouteUnicast:
		return invalid(r, "%s route with nexthops", r.Kind)
	case len(r.Nexthops) < 2:
		return invalid(r, "one nexthop: a plain route")
	case r.Gw.IsValid() || r.Dev != "" || r.OnLink:
		return invalid(r, "nexthops with a gateway, device or onlink of the route")
	case !sameFamily(r.Family(), r.Src):
		return invalid(r, "source not of the destination's family")
	case r.Pref != RoutePrefMedium && (r.Family() != FamilyIPv6 || r.Pref > RoutePrefHigh):
		return invalid(r, "pref %s on an IPv4 route or unknown", r.Pref)
	}
	for _, n := range r.Nexthops {
		switch {
		case !n.Gw.IsValid() && n.Dev == "":
			return invalid(r, "%s without gateway or device", n)
		case n.Gw.IsValid() && !sameFamily(r.Family(), n.Gw):
			return invalid(r, "%s not of the destination's family", n)
		case n.Gw.IsLinkLocalUnicast() && n.Dev == "":
			return invalid(r, "%s: link-local gateway without device", n)
		case n.Dev != "" && !validIfName(n.Dev):
			return invalid(r, "%s: bad device name", n)
		case n.OnLink && (!n.Gw.IsValid() || n.Dev == ""):
			return invalid(r, "%s: onlink without gateway and device", n)
		case n.Weight > 256:
			return invalid(r, "%s: weight above 256", n)
		}
	}
	return nil
}

// Validate checks the family, the prefixes, the interface names, the
// action, that exactly a lookup has a table and exactly a goto a later
// priority, and that port and uid ranges do not end before they start.
func (r *Rule) Validate() error {
	switch {
	case r.Action > RuleProhibit:
		return invalid(r, "unknown action %d", r.Action)
	case (r.Action == RuleLookup) != (r.Table != 0):
		return invalid(r, "a table without lookup, or no table")
	case (r.Action == RuleGoto) != (r.Goto != 0), r.Goto != 0 && r.Goto <= r.Priority:
		return invalid(r, "goto without a later priority, or a goto target without goto")
	case r.SPort.Start > r.SPort.End || r.DPort.Start > r.DPort.End || r.UIDs != nil && r.UIDs.Start > r.UIDs.End:
		return invalid(r, "a port or uid range ends before it starts")
	case r.SuppressPrefixlen != nil && (r.Action != RuleLookup || int(*r.SuppressPrefixlen) > familyBits(r.Family)):
		return invalid(r, "suppress_prefixlength without lookup or beyond the family's length")
	}
	switch {
	case r.Family != FamilyIPv4 && r.Family != FamilyIPv6:
		return invalid(r, "family must be ipv4 or ipv6")
	case !rulePrefixOK(r.Family, r.From) || !rulePrefixOK(r.Family, r.To):
		return invalid(r, "from or to is not a masked prefix of the rule's family")
	case r.IifName != "" && !validIfName(r.IifName), r.OifName != "" && !validIfName(r.OifName):
		return invalid(r, "bad iif or oif name")
	}
	return nil
}

// familyBits is the address length of f in bits.
func familyBits(f Family) int {
	if f == FamilyIPv6 {
		return 128
	}
	return 32
}

func rulePrefixOK(f Family, p netip.Prefix) bool {
	return !p.IsValid() || (FamilyOf(p.Addr()) == f && !p.Addr().Is4In6() && p == p.Masked())
}

// Validate checks the device, the address and that a MAC is given.
func (n *Neighbor) Validate() error {
	switch {
	case !validIfName(n.Dev):
		return invalid(n, "bad device name %q", n.Dev)
	case !n.IP.IsValid() || n.IP.Is4In6():
		return invalid(n, "bad address")
	case len(n.MAC) == 0:
		return invalid(n, "no mac")
	}
	return nil
}

// Validate checks the family, the table, the chain name and the rules.
func (c *IptablesChain) Validate() error {
	switch {
	case c.Family != FamilyIPv4 && c.Family != FamilyIPv6:
		return invalid(c, "family must be ipv4 or ipv6")
	case !slices.Contains(iptTables, c.Table):
		return invalid(c, "unknown table %q", c.Table)
	case c.Chain == "" || len(c.Chain) > 28 || strings.HasPrefix(c.Chain, "-") || strings.ContainsAny(c.Chain, " \t\n"):
		return invalid(c, "bad chain name %q", c.Chain)
	case c.Position < 0:
		return invalid(c, "negative position")
	case c.BlockStart < 0 || c.BlockStart > c.EffectivePosition():
		return invalid(c, "block start %d is not in 1-%d", c.BlockStart, c.EffectivePosition())
	case slices.ContainsFunc(c.Rules, func(rule []string) bool { return len(rule) == 0 }):
		return invalid(c, "empty rule")
	}
	return nil
}

// Validate checks that the key is a well-formed net.* key and that the value
// is one line.
func (s *Sysctl) Validate() error {
	switch {
	case !strings.HasPrefix(s.Key, "net.") || strings.HasSuffix(s.Key, ".") ||
		strings.Contains(s.Key, "..") || strings.ContainsAny(s.Key, " \t\n"):
		return invalid(s, "key is not a net.* sysctl key")
	case strings.ContainsAny(s.Value, "\n\r"):
		return invalid(s, "value spans lines")
	}
	return nil
}
