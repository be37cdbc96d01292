package intent

import (
	"fmt"
	"net/netip"
)

// The routes section.
var routesSection = listSection("routes", func(in *Intent) *[]Route { return &in.Routes },
	func(x *Route) *Origin { return &x.Origin }, oneKey(routeKey), (*checker).routes, true)

// Route is a route. To is "default" or a CIDR prefix; the family comes from
// To, Via, Src, the nexthops' Via or Family, which must agree (IPv4 when
// nothing says). Nexthops makes a multipath (ECMP) route and excludes Via,
// Dev and OnLink.
type Route struct {
	To       string    `json:"to"`
	Via      string    `json:"via,omitempty"`
	Dev      string    `json:"dev,omitempty"`
	OnLink   bool      `json:"onlink,omitempty"` // needs via and dev
	Nexthops []Nexthop `json:"nexthops,omitempty"`
	Table    TableID   `json:"table,omitempty"` // 0: main (254); a name in JSON (TableID)
	Metric   uint32    `json:"metric,omitempty"`
	Scope    Scope     `json:"scope,omitempty"` // "": the kernel's choice
	Src      string    `json:"src,omitempty"`
	Type     RouteType `json:"type,omitempty"` // "": unicast
	MTU      uint32    `json:"mtu,omitempty"`  // 0: none
	Pref     RoutePref `json:"pref,omitempty"` // IPv6 only; "": medium
	Family   Family    `json:"family,omitempty"`

	Drift DriftPolicy `json:"drift,omitempty"` // "": the file's (DriftPolicy)

	Origin Origin `json:"-"`
}

// Nexthop is one path of a multipath route: a via, a dev, or both.
type Nexthop struct {
	Via    string `json:"via,omitempty"`
	Dev    string `json:"dev,omitempty"`
	Weight int    `json:"weight,omitempty"` // 1-256; 0: 1
	OnLink bool   `json:"onlink,omitempty"` // needs via and dev
}

// RoutePref is an IPv6 route's preference (RFC 4191).
type RoutePref string

// The route preferences.
const (
	PrefLow    RoutePref = "low"
	PrefMedium RoutePref = "medium"
	PrefHigh   RoutePref = "high"
)

// routePrefs are the route preferences, for Validate.
var routePrefs = []RoutePref{PrefLow, PrefMedium, PrefHigh}

// EffectiveType returns the route type, unicast when unset.
func (r *Route) EffectiveType() RouteType { return orDefault(r.Type, RouteUnicast) }

// EffectiveTable returns the routing table, TableMain when unset.
func (r *Route) EffectiveTable() uint32 { return orDefault(uint32(r.Table), TableMain) }

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
	if f := firstFamily("", prefixFamily(r.To), addrFamily(r.Via), addrFamily(r.Src)); f != "" {
		return f
	}
	for _, n := range r.Nexthops {
		if f := addrFamily(n.Via); f != "" {
			return f
		}
	}
	return FamilyIPv4
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

// EffectivePref returns the route's preference, medium when unset.
func (r *Route) EffectivePref() RoutePref { return orDefault(r.Pref, PrefMedium) }

// routes checks every route, and that no two share an identity. A route is
// checked first at the empty path, which costs no string; only a route
// with a problem is checked again at its own path, for the messages.
func (c *checker) routes() {
	seen := make(map[routeID]int, len(c.in.Routes))
	at := func(i int) Origin { return c.in.Locate(c.in.Routes[i].Origin, "routes", i) }
	for i := range c.in.Routes {
		r := &c.in.Routes[i]
		n := len(c.errs)
		ok := c.route(r, Origin{})
		if len(c.errs) > n {
			c.errs = c.errs[:n]
			ok = c.route(r, at(i))
		}
		if !ok {
			continue
		}
		id := routeIdentity(r)
		if first, dup := seen[id]; dup {
			c.fail(at(i), "%s is already defined at %s", routeKey(r), at(first))
		} else {
			seen[id] = i
		}
		c.kernelPrefixRoute(r, id, at, i)
	}
}

// routeID is routeKey as a comparable value: equal for two sound routes
// exactly when their routeKey is.
type routeID struct {
	dst           netip.Prefix
	v6            bool
	table, metric uint32
}

// routeIdentity returns the routeID of a sound route, parsing its
// destination once.
func routeIdentity(r *Route) routeID {
	dst, _ := r.Dst()
	fam := r.Family
	switch {
	case fam != "":
	case r.To != "default":
		fam = familyOf(dst.Addr()) // To comes first in EffectiveFamily
	default:
		fam = r.EffectiveFamily()
	}
	id := routeID{dst: dst, v6: fam == FamilyIPv6, table: r.EffectiveTable(), metric: r.Metric}
	if id.metric == 0 && id.v6 {
		id.metric = IPv6DefaultMetric // as EffectiveMetric
	}
	return id
}

// kernelPrefixRoute rejects a route that the kernel adds itself, with its
// own protocol, for an address of the intent: the prefix route of an IPv4
// address (table main, metric 0) or of an IPv6 one (metric 256). netagent
// would find it taken by a route it does not own, at every apply.
func (c *checker) kernelPrefixRoute(r *Route, id routeID, at func(int) Origin, i int) {
	if id.table != TableMain || r.EffectiveType() != RouteUnicast {
		return
	}
	if !c.kernelRoutes().bits[id.dst.Bits()] {
		return // no address has a prefix of this length
	}
	for _, k := range c.kernelRoutes().byDst[id.dst] {
		if id.metric == k.metric {
			c.fail(at(i), "the kernel adds this route itself for address %s of %q (table main, metric %d): leave it out, or give it another metric or table",
				k.addr, k.ifc, k.metric)
			return
		}
	}
}

// kernelRoute is the prefix route the kernel adds for an address.
type kernelRoute struct {
	addr, ifc string // the address as written, and its interface
	metric    uint32
}

// kernelRoutes are the prefix routes the kernel adds, by destination, and
// the lengths of their prefixes, which spare most routes the lookup.
type kernelRoutes struct {
	byDst map[netip.Prefix][]kernelRoute
	bits  [129]bool
}

// kernelRoutes returns, by destination, the prefix routes the kernel adds
// for the addresses of the interfaces that are not declared down, in the
// order of the intent. It is made once per Validate.
func (c *checker) kernelRoutes() *kernelRoutes {
	if c.prefixRoutes != nil {
		return c.prefixRoutes
	}
	c.prefixRoutes = &kernelRoutes{byDst: map[netip.Prefix][]kernelRoute{}}
	for i := range c.in.Interfaces {
		ifc := &c.in.Interfaces[i]
		if ifc.State == StateDown {
			continue
		}
		for _, a := range ifc.Addresses {
			p, peer, err := ParseAddress(a)
			if err != nil || p.Bits() == p.Addr().BitLen() {
				continue
			}
			if peer.IsValid() {
				p = netip.PrefixFrom(peer, p.Bits()) // the kernel routes the peer's prefix
			}
			metric := uint32(0)
			if p.Addr().Is6() {
				metric = 256
			}
			c.prefixRoutes.byDst[p.Masked()] = append(c.prefixRoutes.byDst[p.Masked()], kernelRoute{a, ifc.Name, metric})
			c.prefixRoutes.bits[p.Bits()] = true
		}
	}
	return c.prefixRoutes
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
	c.table(at.field("table"), uint32(r.Table), false)
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
			if a := cl.addr; a.IsLinkLocalUnicast() && n.Dev == "" {
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
	a := cl.addr
	if a.IsLinkLocalUnicast() && r.Dev == "" {
		c.fail(at.field("via"), "link-local gateway %s needs dev", a)
	}
	if a.Is6() {
		if owner := c.addressOwner(a); owner != "" {
			c.fail(at.field("via"), "%s is an address of %q in the intent: the kernel refuses a local IPv6 gateway", a, owner)
		}
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
// or "": the first in the intent's order. The index is made once per
// Validate.
func (c *checker) addressOwner(a netip.Addr) string {
	if c.owners == nil {
		c.owners = map[netip.Addr]string{}
		for i := range c.in.Interfaces {
			for _, s := range c.in.Interfaces[i].Addresses {
				if p, ok := addrPrefix(s); ok {
					if _, ok := c.owners[p.Addr()]; !ok {
						c.owners[p.Addr()] = c.in.Interfaces[i].Name
					}
				}
			}
		}
	}
	return c.owners[a]
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
	return famClaim{field: field, text: s, fam: familyOf(a), addr: a}
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
		p, peer, err := ParseAddress(a)
		if peer.IsValid() {
			p = netip.PrefixFrom(peer, p.Bits()) // the peer's prefix is on the link
		}
		if err == nil && p.Masked().Contains(gw) {
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

// routeKey is the kernel's identity of a route: family, table, destination
// and metric (an IPv6 metric 0 being 1024).
func routeKey(r *Route) string {
	to := r.To
	if dst, err := r.Dst(); err == nil {
		to = dst.String()
		if dst.Bits() == 0 {
			to = "default"
		}
	}
	return fmt.Sprintf("%s route to %s in table %s, metric %d",
		famName(r.EffectiveFamily()), to, tableName(r.EffectiveTable()), r.EffectiveMetric())
}

// tableName returns "main" for TableMain, else the number.
func tableName(t uint32) string {
	if t == TableMain {
		return "main"
	}
	return fmt.Sprint(t)
}
