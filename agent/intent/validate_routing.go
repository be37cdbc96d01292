package intent

import (
	"fmt"
	"net/netip"
)

// routes checks every route, and that no two share an identity.
func (c *checker) routes() {
	seen := map[string]Origin{}
	for i := range c.in.Routes {
		r := &c.in.Routes[i]
		at := locate(r.Origin, "routes", i)
		if c.route(r, at) {
			c.unique(seen, routeKey(r), at)
			c.kernelPrefixRoute(r, at)
		}
	}
}

// kernelPrefixRoute rejects a route that the kernel adds itself, with its
// own protocol, for an address of the intent: the prefix route of an IPv4
// address (table main, metric 0) or of an IPv6 one (metric 256). netagent
// would find it taken by a route it does not own, at every apply.
func (c *checker) kernelPrefixRoute(r *Route, at Origin) {
	dst, err := r.Dst()
	if err != nil || r.EffectiveTable() != TableMain || r.EffectiveType() != RouteUnicast {
		return
	}
	for i := range c.in.Interfaces {
		ifc := &c.in.Interfaces[i]
		if ifc.State == StateDown {
			continue
		}
		for _, a := range ifc.Addresses {
			p, err := netip.ParsePrefix(a)
			if err != nil || p.Bits() == p.Addr().BitLen() || p.Masked() != dst {
				continue
			}
			metric := uint32(0)
			if p.Addr().Is6() {
				metric = 256
			}
			if r.EffectiveMetric() == metric {
				c.fail(at, "the kernel adds this route itself for address %s of %q (table main, metric %d): leave it out, or give it another metric or table",
					a, ifc.Name, metric)
				return
			}
		}
	}
}

// route checks one route; it returns whether its identity is sound.
func (c *checker) route(r *Route, at Origin) bool {
	typeOK := oneOf(c, at.field("type"), r.Type, routeTypes)
	famOK := oneOf(c, at.field("family"), r.Family, families)
	oneOf(c, at.field("scope"), r.Scope, scopes)
	to, toOK := c.routeDst(at.field("to"), r.To)
	famOK = c.agree(at, familyClaim(r.Family, famOK), to, c.gateway(r, at), c.optAddr(at, "src", r.Src)) && famOK
	if typeOK {
		c.routeTarget(r, at)
	}
	c.table(at.field("table"), r.Table, false)
	return toOK && famOK
}

// routeDst checks a route's destination: "default" or a CIDR prefix.
func (c *checker) routeDst(o Origin, to string) (famClaim, bool) {
	switch to {
	case "":
		c.fail(o, `is required ("default" or a CIDR prefix)`)
		return famClaim{}, false
	case "default":
		return famClaim{}, true
	}
	p, ok := c.network(o, to)
	if !ok {
		return famClaim{}, false
	}
	return famClaim{field: "to", text: to, fam: familyOf(p.Addr())}, true
}

// gateway checks a route's via: a unicast address; a link-local one needs
// a dev.
func (c *checker) gateway(r *Route, at Origin) famClaim {
	cl := c.optAddr(at, "via", r.Via)
	if cl.fam == "" {
		return cl
	}
	a := netip.MustParseAddr(r.Via)
	if a.IsLinkLocalUnicast() && r.Dev == "" {
		c.fail(at.field("via"), "link-local gateway %s needs dev", a)
	}
	if owner := c.addressOwner(a); owner != "" && a.Is6() {
		c.fail(at.field("via"), "%s is an address of %q in the intent: the kernel refuses a local IPv6 gateway", a, owner)
	}
	switch {
	case r.Scope == ScopeHost:
		c.fail(at.field("scope"), "%q is not allowed with via", r.Scope)
	case r.Scope == ScopeLink && cl.fam == FamilyIPv4:
		c.fail(at.field("scope"), `%q is not allowed with an IPv4 via: the kernel refuses a gateway at link scope ("Nexthop has invalid gateway")`, r.Scope)
	}
	return cl
}

// addressOwner returns the interface of the intent that has the address a,
// or "".
func (c *checker) addressOwner(a netip.Addr) string {
	for i := range c.in.Interfaces {
		for _, s := range c.in.Interfaces[i].Addresses {
			if p, err := netip.ParsePrefix(s); err == nil && p.Addr() == a {
				return c.in.Interfaces[i].Name
			}
		}
	}
	return ""
}

// optAddr checks the unicast address in field, if set, and returns its
// family claim.
func (c *checker) optAddr(at Origin, field, s string) famClaim {
	if s == "" {
		return famClaim{}
	}
	a, ok := c.unicastAddr(at.field(field), s)
	if !ok {
		return famClaim{}
	}
	return famClaim{field: field, text: s, fam: familyOf(a)}
}

// routeTarget checks via and dev against the route type: a unicast route
// needs one of them, the others take neither.
func (c *checker) routeTarget(r *Route, at Origin) {
	if t := r.EffectiveType(); t != RouteUnicast {
		for _, f := range []struct{ name, value string }{{"via", r.Via}, {"dev", r.Dev}} {
			if f.value != "" {
				c.fail(at.field(f.name), "not allowed for a %s route", t)
			}
		}
		return
	}
	if r.Via == "" && r.Dev == "" {
		c.fail(at, "a unicast route needs via or dev")
	}
	if r.Dev != "" {
		c.ref(at.field("dev"), r.Dev)
	}
	c.overDownLink(r, at)
}

// downNote ends the error of a route over a link declared down.
const downNote = `is declared "state": "down", and the kernel keeps no route over a link that is down`

// overDownLink rejects a unicast route that could only go over an interface
// the intent declares down: its dev, or, without a dev, the only declared
// interfaces whose addresses hold its gateway. The kernel refuses such a
// route ("Device for nexthop is not up", "Nexthop has invalid gateway"), so
// the intent could never converge.
func (c *checker) overDownLink(r *Route, at Origin) {
	if r.Dev != "" {
		if def, ok := c.links[r.Dev]; ok && !def.peer && def.ifc.State == StateDown {
			c.fail(at.field("dev"), "%q %s", r.Dev, downNote)
		}
		return
	}
	gw, err := netip.ParseAddr(r.Via)
	if err != nil {
		return
	}
	var down []string
	for i := range c.in.Interfaces {
		ifc := &c.in.Interfaces[i]
		if !holds(ifc.Addresses, gw) {
			continue
		}
		if ifc.State != StateDown {
			return
		}
		down = append(down, ifc.Name)
	}
	if len(down) > 0 {
		c.fail(at.field("via"), "%s is reached only over %q, which %s", gw, down[0], downNote)
	}
}

// holds reports whether one of the addresses (CIDR) has gw in its subnet.
func holds(addrs []string, gw netip.Addr) bool {
	for _, a := range addrs {
		if p, err := netip.ParsePrefix(a); err == nil && p.Masked().Contains(gw) {
			return true
		}
	}
	return false
}

// table checks a routing table number: 253 (default) and 255 (local) are
// the kernel's; 0 means main for a route and is missing for a rule.
func (c *checker) table(o Origin, t uint32, required bool) {
	switch {
	case t == 0 && required:
		c.fail(o, "is required (1-4294967295)")
	case t == 253:
		c.fail(o, "253 is reserved for the kernel's default table")
	case t == 255:
		c.fail(o, "255 is reserved for the kernel's local table")
	}
}

// rules checks every rule, and that no two share a priority and selectors.
func (c *checker) rules() {
	seen := map[string]Origin{}
	for i := range c.in.Rules {
		r := &c.in.Rules[i]
		at := locate(r.Origin, "rules", i)
		if c.rule(r, at) {
			c.unique(seen, ruleKey(r), at)
		}
	}
}

// rule checks one rule; it returns whether its identity is sound.
func (c *checker) rule(r *Rule, at Origin) bool {
	if r.Priority == 0 {
		c.fail(at.field("priority"), "is required (1-4294967295; 0 is the local table's rule)")
	}
	famOK := oneOf(c, at.field("family"), r.Family, families)
	from, fromOK := c.selector(at, "from", r.From)
	to, toOK := c.selector(at, "to", r.To)
	famOK = c.agree(at, familyClaim(r.Family, famOK), from, to) && famOK
	if r.Family == "" && r.From == "" && r.To == "" {
		c.fail(at.field("family"), "is required when neither from nor to is set (ipv4 or ipv6)")
		famOK = false
	}
	if r.FwMask != 0 && r.FwMark&^r.FwMask != 0 {
		c.fail(at.field("fwmark"), "%#x has bits outside fwmask %#x", r.FwMark, r.FwMask)
	}
	c.optIfname(at.field("iif"), r.IIF)
	c.optIfname(at.field("oif"), r.OIF)
	c.table(at.field("table"), r.Table, true)
	return r.Priority != 0 && famOK && fromOK && toOK
}

// selector checks a rule's from or to prefix, if set.
func (c *checker) selector(at Origin, field, s string) (famClaim, bool) {
	if s == "" {
		return famClaim{}, true
	}
	p, ok := c.network(at.field(field), s)
	if !ok {
		return famClaim{}, false
	}
	return famClaim{field: field, text: s, fam: familyOf(p.Addr())}, true
}

// optIfname checks the syntax of an interface name, if set, that may name
// an interface the agent does not define.
func (c *checker) optIfname(o Origin, name string) {
	if name != "" {
		c.ifname(o, name)
	}
}

// neighbors checks every neighbor entry, and that no two share a dev and ip.
func (c *checker) neighbors() {
	seen := map[string]Origin{}
	for i := range c.in.Neighbors {
		n := &c.in.Neighbors[i]
		at := locate(n.Origin, "neighbors", i)
		if c.neighbor(n, at) {
			c.unique(seen, neighborKey(n), at)
		}
	}
}

// neighbor checks one neighbor entry; it returns whether its identity is
// sound.
func (c *checker) neighbor(n *Neighbor, at Origin) bool {
	devOK := c.required(at.field("dev"), n.Dev)
	if devOK {
		_, devOK = c.ref(at.field("dev"), n.Dev)
	}
	ipOK := c.required(at.field("ip"), n.IP)
	if ipOK {
		_, ipOK = c.unicastAddr(at.field("ip"), n.IP)
	}
	if c.required(at.field("mac"), n.MAC) {
		c.mac(at.field("mac"), n.MAC, true)
	}
	return devOK && ipOK
}

// tableName returns "main" for TableMain, else the number.
func tableName(t uint32) string {
	if t == TableMain {
		return "main"
	}
	return fmt.Sprint(t)
}
