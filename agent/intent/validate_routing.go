package intent

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"
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
	oneOf(c, at.field("pref"), r.Pref, routePrefs)
	to, toOK := c.routeDst(at.field("to"), r.To)
	claims := []famClaim{familyClaim(r.Family, famOK), to, c.gateway(r, at), c.optAddr(at, "src", r.Src)}
	claims = append(claims, c.nexthops(r, at)...)
	famOK = c.agree(at, claims...) && famOK
	if typeOK {
		c.routeTarget(r, at)
	}
	c.table(at.field("table"), r.Table, false)
	c.routeMTU(r, at)
	if r.Pref != "" && r.EffectiveFamily() != FamilyIPv6 {
		c.fail(at.field("pref"), "is for IPv6 routes only (the kernel keeps no preference on IPv4 routes)")
	}
	return toOK && famOK
}

// routeMTU checks a route's mtu: 68 (IPv4) or 1280 (IPv6) up to 65535.
func (c *checker) routeMTU(r *Route, at Origin) {
	if r.MTU == 0 {
		return
	}
	least := uint32(68)
	if r.EffectiveFamily() == FamilyIPv6 {
		least = 1280
	}
	if r.MTU < least || r.MTU > 65535 {
		c.fail(at.field("mtu"), "%d is out of range (%d-65535 for %s)", r.MTU, least, famName(r.EffectiveFamily()))
	}
}

// nexthops checks a multipath route's nexthops and returns the family
// claims of their vias: at least two, each with a via or a dev (IPv6: a
// via, the kernel joins only gateway routes into one multipath route), a
// weight of 1-256, onlink only with both, no two alike; exclusive with the
// route's own via, dev and onlink.
func (c *checker) nexthops(r *Route, at Origin) []famClaim {
	if len(r.Nexthops) == 0 {
		return nil
	}
	o := at.field("nexthops")
	for _, f := range []struct {
		name string
		set  bool
	}{{"via", r.Via != ""}, {"dev", r.Dev != ""}, {"onlink", r.OnLink}} {
		if f.set {
			c.fail(at.field(f.name), "not allowed with nexthops (give it per nexthop)")
		}
	}
	if len(r.Nexthops) < 2 {
		c.fail(o, "needs at least two nexthops (one is a plain route: use via and dev)")
	}
	var claims []famClaim
	seen := map[string]Origin{}
	for i := range r.Nexthops {
		n := &r.Nexthops[i]
		no := o.index(i)
		cl := c.optAddr(no, "via", n.Via)
		cl.field = fmt.Sprintf("nexthops[%d].via", i)
		claims = append(claims, cl)
		switch {
		case n.Via == "" && n.Dev == "":
			c.fail(no, "needs via or dev")
		case n.Via == "" && r.EffectiveFamily() == FamilyIPv6:
			c.fail(no.field("via"), "is required in an IPv6 multipath route")
		}
		if cl.fam != "" {
			if a := netip.MustParseAddr(n.Via); a.IsLinkLocalUnicast() && n.Dev == "" {
				c.fail(no.field("via"), "link-local gateway %s needs dev", a)
			}
		}
		if n.Dev != "" {
			c.ref(no.field("dev"), n.Dev)
			if def, ok := c.links[n.Dev]; ok && !def.peer && def.ifc.State == StateDown {
				c.fail(no.field("dev"), "%q %s", n.Dev, downNote)
			}
		}
		if n.Weight < 0 || n.Weight > 256 {
			c.fail(no.field("weight"), "%d is out of range (1-256)", n.Weight)
		}
		if n.OnLink && (n.Via == "" || n.Dev == "") {
			c.fail(no.field("onlink"), "needs via and dev")
		}
		key := normAddr(n.Via) + " dev " + n.Dev
		if first, dup := seen[key]; dup {
			c.fail(no, "the same nexthop as %s", first.Path)
		} else {
			seen[key] = no
		}
	}
	return claims
}

// normAddr returns the canonical form of an address, or s.
func normAddr(s string) string {
	if a, err := netip.ParseAddr(s); err == nil {
		return a.String()
	}
	return s
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
		for _, f := range []struct {
			name string
			set  bool
		}{{"via", r.Via != ""}, {"dev", r.Dev != ""}, {"onlink", r.OnLink}, {"nexthops", len(r.Nexthops) > 0}} {
			if f.set {
				c.fail(at.field(f.name), "not allowed for a %s route", t)
			}
		}
		return
	}
	if r.OnLink && (r.Via == "" || r.Dev == "") {
		c.fail(at.field("onlink"), "needs via and dev")
	}
	if len(r.Nexthops) > 0 {
		return // checked by nexthops
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
			c.gotoTarget(r, at)
		}
	}
}

// gotoTarget checks that a goto rule jumps forward to a priority that a
// rule of the intent of the same family has (the kernel refuses a jump
// back or to itself, and a jump to no rule never matches anything).
func (c *checker) gotoTarget(r *Rule, at Origin) {
	if r.EffectiveAction() != ActionGoto || r.Goto == 0 {
		return
	}
	if r.Goto <= r.Priority {
		c.fail(at.field("goto"), "%d is not after this rule's priority %d (a goto jumps forward)", r.Goto, r.Priority)
		return
	}
	for i := range c.in.Rules {
		if o := &c.in.Rules[i]; o.Priority == r.Goto && o.EffectiveFamily() == r.EffectiveFamily() {
			return
		}
	}
	c.fail(at.field("goto"), "no %s rule of the intent has priority %d", famName(r.EffectiveFamily()), r.Goto)
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
	selOK := c.ruleSelectors(r, at)
	return c.ruleAction(r, at) && r.Priority != 0 && famOK && fromOK && toOK && selOK
}

// ruleAction checks the action and what it takes: lookup a table, goto a
// priority, the others neither.
func (c *checker) ruleAction(r *Rule, at Origin) bool {
	if !oneOf(c, at.field("action"), r.Action, ruleActions) {
		return false
	}
	act := r.EffectiveAction()
	if act == ActionLookup {
		c.table(at.field("table"), r.Table, true)
	} else if r.Table != 0 {
		c.fail(at.field("table"), "not allowed with action %q (only lookup takes a table)", act)
	}
	switch {
	case act == ActionGoto && r.Goto == 0:
		c.fail(at.field("goto"), "is required with action \"goto\" (the priority of a later rule)")
	case act != ActionGoto && r.Goto != 0:
		c.fail(at.field("goto"), "needs action \"goto\"")
	}
	if r.SuppressPrefixlength != nil && act != ActionLookup {
		c.fail(at.field("suppressPrefixlength"), "needs action \"lookup\"")
	}
	return true
}

// ruleSelectors checks ipproto, sport, dport, uidrange and
// suppressPrefixlength; it returns whether they are sound (they are part of
// the rule's identity).
func (c *checker) ruleSelectors(r *Rule, at Origin) bool {
	ok := true
	proto, protoOK := uint8(0), true
	if r.IPProto != "" {
		proto, protoOK = parseIPProto(r.IPProto)
		if !protoOK {
			c.fail(at.field("ipproto"), "%q is not a protocol (a name: tcp, udp, sctp, dccp, icmp, ipv6-icmp, gre, esp, ah; or a number 1-255)", r.IPProto)
			ok = false
		}
	}
	for _, f := range []struct{ name, value string }{{"sport", r.SPort}, {"dport", r.DPort}} {
		if f.value == "" {
			continue
		}
		if _, _, err := parseRange(f.value, 1, 65535); err != nil {
			c.fail(at.field(f.name), "%q: %v", f.value, err)
			ok = false
		} else if protoOK && proto != 0 && !hasPorts(proto) {
			c.fail(at.field(f.name), "ipproto %s has no ports (tcp, udp, sctp or dccp have)", r.IPProto)
		}
	}
	if r.UIDRange != "" {
		if _, _, err := parseRange(r.UIDRange, 0, 4294967294); err != nil {
			c.fail(at.field("uidrange"), "%q: %v", r.UIDRange, err)
			ok = false
		}
	}
	if p := r.SuppressPrefixlength; p != nil {
		most := 32
		if r.EffectiveFamily() == FamilyIPv6 {
			most = 128
		}
		if *p < 0 || *p > most {
			c.fail(at.field("suppressPrefixlength"), "%d is out of range (0-%d for %s)", *p, most, famName(r.EffectiveFamily()))
			ok = false
		}
	}
	return ok
}

// ipProtos are the protocol names ipproto takes, as iproute2 spells them.
var ipProtos = map[string]uint8{"icmp": 1, "tcp": 6, "udp": 17, "dccp": 33, "gre": 47, "esp": 50,
	"ah": 51, "ipv6-icmp": 58, "icmpv6": 58, "sctp": 132}

// parseIPProto reads a protocol name or number (1-255).
func parseIPProto(s string) (uint8, bool) {
	if p, ok := ipProtos[strings.ToLower(s)]; ok {
		return p, true
	}
	n, err := strconv.ParseUint(s, 10, 8)
	return uint8(n), err == nil && n > 0
}

// ParseIPProto returns the number of an ipproto Validate accepts.
func ParseIPProto(s string) uint8 {
	p, _ := parseIPProto(s)
	return p
}

// hasPorts reports whether the protocol carries ports the kernel matches.
func hasPorts(p uint8) bool { return p == 6 || p == 17 || p == 33 || p == 132 }

// parseRange reads "N" or "N-M" with lo <= N <= M <= hi.
func parseRange(s string, lo, hi uint64) (uint64, uint64, error) {
	a, b, isRange := strings.Cut(s, "-")
	if !isRange {
		b = a
	}
	start, err1 := strconv.ParseUint(a, 10, 32)
	end, err2 := strconv.ParseUint(b, 10, 32)
	switch {
	case err1 != nil || err2 != nil:
		return 0, 0, fmt.Errorf("want a number or a range N-M of numbers %d-%d", lo, hi)
	case start < lo || end > hi:
		return 0, 0, fmt.Errorf("out of range (%d-%d)", lo, hi)
	case start > end:
		return 0, 0, fmt.Errorf("the range ends before it starts")
	}
	return start, end, nil
}

// ParseRange returns the bounds of a sport, dport or uidrange Validate
// accepts.
func ParseRange(s string) (start, end uint32) {
	a, b, _ := parseRange(s, 0, 4294967295)
	return uint32(a), uint32(b)
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
