package items

import (
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	dg "github.com/netagent/netagent/depgraph"
)

// RouteType is the type of a route. The zero RouteType is unicast.
type RouteType uint8

// The route types netagent manages.
const (
	RouteUnicast RouteType = iota
	RouteBlackhole
	RouteUnreachable
	RouteProhibit
)

// String returns "unicast", "blackhole", "unreachable" or "prohibit".
func (t RouteType) String() string {
	switch t {
	case RouteUnicast:
		return "unicast"
	case RouteBlackhole:
		return "blackhole"
	case RouteUnreachable:
		return "unreachable"
	case RouteProhibit:
		return "prohibit"
	}
	return fmt.Sprintf("type(%d)", uint8(t))
}

// Route is a route in a routing table. Its name is the kernel's identity of
// the route: "<table> <dst> metric <metric>" ("main 0.0.0.0/0 metric 100",
// "table 100 2001:db8::/32 metric 1024"); the family is that of Dst. (The
// kernel keys IPv4 routes by table, dst, tos and priority, IPv6 routes by
// table, dst and metric; netagent never sets a tos.) A multipath (ECMP)
// route is one route: its Nexthops replace Gw, Dev and OnLink. Every field
// outside the name (nexthops, onlink, mtu, pref included) is changed in
// place with NLM_F_REPLACE, so a Route never needs a recreate: a different
// key is a different item.
//
// The configurator sets RouteProtocol on every route it creates.
type Route struct {
	// The fields are in an order that leaves no padding: a host may hold
	// 100k routes, twice (intended and read back), and the struct's size
	// class is what each costs (TestRouteSize).

	Dst netip.Prefix // masked; 0.0.0.0/0 or ::/0 for a default route
	Gw  netip.Addr   // zero for none
	Src netip.Addr   // preferred source; zero for none
	Dev string       // "" for none
	// Nexthops makes a multipath route (RTA_MULTIPATH, two or more); Gw,
	// Dev and OnLink are then unset. Their order does not matter (Equal
	// compares them as a set).
	Nexthops []Nexthop
	// Table is the routing table; 0 means TableMain (254), in the name and
	// in Equal alike.
	Table uint32
	// Metric is the route priority. An IPv6 route with metric 0 gets
	// IPv6DefaultMetric (1024) from the kernel, so the two are the same in
	// the name and in Equal.
	Metric uint32
	// MTU is the path MTU (RTAX_MTU in RTA_METRICS); 0 for none.
	MTU uint32
	// Scope: routes with only a Dev are usually ScopeLink (as `ip route`
	// sets them); the zero value is global.
	Scope Scope
	// Kind is the route type (rtm_type); a field named Type would clash
	// with the Type method.
	Kind RouteType
	// OnLink (RTNH_F_ONLINK) takes Gw as on the link of Dev even when no
	// address of Dev covers it.
	OnLink bool
	// Pref is an IPv6 route's preference (RTA_PREF); the zero value is
	// medium, the kernel's default. IPv4 routes have none.
	Pref RoutePref

	// The fields below only shape the dependencies; the renderer fills them.

	// CarrierLink names the external Link whose carrier gates the route: the
	// route is withdrawn while the link has no carrier and comes back with
	// it. The renderer sets it to Dev when Dev is a physical interface, for
	// a route with a gateway and no Dev to the physical interface the
	// gateway is reached through, and leaves it "" otherwise.
	CarrierLink string
	// GwAddress is the Name of the Address item (see AddressName) whose
	// subnet holds Gw, so that the route is added after the address that
	// makes the gateway reachable; "" for none.
	GwAddress string
	// Deps are further items that must exist first (say, the address
	// holding Src).
	Deps []dg.ItemRef
}

var _ dg.Item = (*Route)(nil)

// Nexthop is one path of a multipath route.
type Nexthop struct {
	Gw  netip.Addr // zero for none (then Dev is set)
	Dev string     // "" for none: the kernel resolves it from Gw
	// Weight is 1-256; 0 means 1. The kernel stores Weight-1 in rtnh_hops.
	Weight uint16
	// OnLink is RTNH_F_ONLINK on this nexthop.
	OnLink bool
}

// EffectiveWeight returns Weight, or 1 for 0.
func (n Nexthop) EffectiveWeight() uint16 {
	if n.Weight == 0 {
		return 1
	}
	return n.Weight
}

// String describes the nexthop `ip route` style.
func (n Nexthop) String() string {
	var b strings.Builder
	b.WriteString("nexthop")
	if n.Gw.IsValid() {
		b.WriteString(" via " + n.Gw.String())
	}
	if n.Dev != "" {
		b.WriteString(" dev " + n.Dev)
	}
	fmt.Fprintf(&b, " weight %d", n.EffectiveWeight())
	if n.OnLink {
		b.WriteString(" onlink")
	}
	return b.String()
}

// compareNexthops orders nexthops for set comparison.
func compareNexthops(a, b Nexthop) int {
	if c := a.Gw.Compare(b.Gw); c != 0 {
		return c
	}
	if c := strings.Compare(a.Dev, b.Dev); c != 0 {
		return c
	}
	if c := int(a.EffectiveWeight()) - int(b.EffectiveWeight()); c != 0 {
		return c
	}
	switch {
	case a.OnLink == b.OnLink:
		return 0
	case b.OnLink:
		return -1
	}
	return 1
}

// SortedNexthops returns a sorted copy of ns (weights as EffectiveWeight).
func SortedNexthops(ns []Nexthop) []Nexthop {
	out := slices.Clone(ns)
	for i := range out {
		out[i].Weight = out[i].EffectiveWeight()
	}
	slices.SortFunc(out, compareNexthops)
	return out
}

// RoutePref is an IPv6 route preference (RFC 4191). The zero value is
// medium.
type RoutePref uint8

// The preferences, medium first: the kernel's default.
const (
	RoutePrefMedium RoutePref = iota
	RoutePrefLow
	RoutePrefHigh
)

// String returns "medium", "low" or "high".
func (p RoutePref) String() string {
	switch p {
	case RoutePrefMedium:
		return "medium"
	case RoutePrefLow:
		return "low"
	case RoutePrefHigh:
		return "high"
	}
	return fmt.Sprintf("pref(%d)", uint8(p))
}

// Type returns TypeRoute.
func (r *Route) Type() string { return TypeRoute }

// Name returns "<table> <dst> metric <metric>".
func (r *Route) Name() string {
	var buf [96]byte
	b := appendTableName(buf[:0], r.TableID())
	b = append(b, ' ')
	if r.Dst.IsValid() {
		b = r.Dst.AppendTo(b)
	} else {
		b = append(b, r.Dst.String()...)
	}
	b = append(b, " metric "...)
	b = strconv.AppendUint(b, uint64(r.EffectiveMetric()), 10)
	return string(b)
}

// External returns false.
func (r *Route) External() bool { return false }

// Family returns the family of Dst.
func (r *Route) Family() Family { return FamilyOf(r.Dst.Addr()) }

// TableID returns the table the route goes in: Table, or TableMain for 0.
func (r *Route) TableID() uint32 {
	if r.Table == 0 {
		return TableMain
	}
	return r.Table
}

// EffectiveMetric returns the metric the kernel gives the route: Metric, or
// IPv6DefaultMetric for an IPv6 route with metric 0.
func (r *Route) EffectiveMetric() uint32 {
	if r.Metric == 0 && r.Family() == FamilyIPv6 {
		return IPv6DefaultMetric
	}
	return r.Metric
}

// Dependencies: interface/<Dev> when Dev is set, and that of every
// nexthop's Dev (once each); link/<CarrierLink> with the "carrier up"
// predicate (HasCarrier) when CarrierLink is set; address/<GwAddress> when
// GwAddress is set; then Deps.
//
// Most routes of a table differ only in their name: their lists are one
// shared slice (see routeDepsCache), so that rendering or reading back
// 100k routes does not allocate 100k lists. Callers must not modify it.
func (r *Route) Dependencies() []dg.Dependency {
	if len(r.Nexthops) == 0 && len(r.Deps) == 0 {
		return routeDepsCache.get(routeDepsKey{r.Dev, r.CarrierLink, r.GwAddress}, r.buildDependencies)
	}
	return r.buildDependencies()
}

// buildDependencies builds the list Dependencies returns.
func (r *Route) buildDependencies() []dg.Dependency {
	deps := make([]dg.Dependency, 0, r.depCount())
	if r.Dev != "" {
		deps = append(deps, requires(InterfaceRef(r.Dev), "device"))
	}
	for i, n := range r.Nexthops {
		if r.firstNexthopDev(i) {
			deps = append(deps, requires(InterfaceRef(n.Dev), "nexthop device"))
		}
	}
	if r.CarrierLink != "" {
		deps = append(deps, dg.Dependency{
			RequiredItem: LinkRef(r.CarrierLink),
			MustSatisfy:  HasCarrier,
			Description:  "carrier up",
		})
	}
	if r.GwAddress != "" {
		deps = append(deps, requires(dg.ItemRef{Type: TypeAddress, Name: r.GwAddress}, "gateway on-link"))
	}
	return extraDeps(deps, r.Deps)
}

// routeDepsKey is what the dependencies of a route without nexthops and
// extra Deps are a function of.
type routeDepsKey struct{ dev, carrierLink, gwAddress string }

// routeDepsCache holds the shared dependency lists of routes without
// nexthops and extra Deps, at most routeDepsMax of them (a host has a few
// devices and gateways; past that, lists are built per call).
var routeDepsCache depsCache[routeDepsKey]

const routeDepsMax = 4096

// depsCache is a bounded, concurrency-safe map of immutable dependency
// lists.
type depsCache[K comparable] struct {
	m sync.Map // K → []dg.Dependency, full (cap == len, so an append copies)
	n atomic.Int64
}

// get returns the list for k, building it with build on a miss.
func (c *depsCache[K]) get(k K, build func() []dg.Dependency) []dg.Dependency {
	if v, ok := c.m.Load(k); ok {
		return v.([]dg.Dependency)
	}
	deps := slices.Clip(build())
	if c.n.Load() < routeDepsMax {
		if v, loaded := c.m.LoadOrStore(k, deps); loaded {
			return v.([]dg.Dependency)
		}
		c.n.Add(1)
	}
	return deps
}

// depCount returns how many dependencies Dependencies lists.
func (r *Route) depCount() int {
	k := len(r.Deps)
	if r.Dev != "" {
		k++
	}
	for i := range r.Nexthops {
		if r.firstNexthopDev(i) {
			k++
		}
	}
	if r.CarrierLink != "" {
		k++
	}
	if r.GwAddress != "" {
		k++
	}
	return k
}

// firstNexthopDev reports whether nexthop i's Dev is neither the route's
// Dev nor that of an earlier nexthop (a handful at most: no map).
func (r *Route) firstNexthopDev(i int) bool {
	dev := r.Nexthops[i].Dev
	if dev == r.Dev {
		return false
	}
	for _, n := range r.Nexthops[:i] {
		if n.Dev == dev {
			return false
		}
	}
	return true
}

// Equal compares every field (Table and Metric as TableID and
// EffectiveMetric).
func (r *Route) Equal(other dg.Item) bool {
	o, ok := other.(*Route)
	if !ok || o == nil {
		return false
	}
	return r.Dst == o.Dst && r.Gw == o.Gw && r.Dev == o.Dev &&
		r.TableID() == o.TableID() && r.EffectiveMetric() == o.EffectiveMetric() &&
		r.Scope == o.Scope && r.Src == o.Src && r.Kind == o.Kind &&
		r.OnLink == o.OnLink && r.MTU == o.MTU && r.Pref == o.Pref &&
		slices.Equal(SortedNexthops(r.Nexthops), SortedNexthops(o.Nexthops)) &&
		r.CarrierLink == o.CarrierLink && r.GwAddress == o.GwAddress &&
		slices.Equal(r.Deps, o.Deps)
}

// String describes the route in one line, `ip route` style.
func (r *Route) String() string {
	var b strings.Builder
	b.WriteString("route ")
	if r.Kind != RouteUnicast {
		b.WriteString(r.Kind.String() + " ")
	}
	b.WriteString(r.Dst.String())
	if r.Gw.IsValid() {
		b.WriteString(" via " + r.Gw.String())
	}
	if r.Dev != "" {
		b.WriteString(" dev " + r.Dev)
	}
	if r.OnLink {
		b.WriteString(" onlink")
	}
	fmt.Fprintf(&b, " table %s metric %d scope %s",
		strings.TrimPrefix(TableName(r.TableID()), "table "), r.EffectiveMetric(), r.Scope)
	if r.Src.IsValid() {
		b.WriteString(" src " + r.Src.String())
	}
	if r.MTU != 0 {
		fmt.Fprintf(&b, " mtu %d", r.MTU)
	}
	if r.Pref != RoutePrefMedium {
		b.WriteString(" pref " + r.Pref.String())
	}
	for _, n := range r.Nexthops {
		b.WriteString(" " + n.String())
	}
	return b.String()
}
