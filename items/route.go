package items

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"

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
// table, dst and metric; netagent never sets a tos.) Every other field is
// changed in place with NLM_F_REPLACE, so a Route never needs a recreate.
//
// The configurator sets RouteProtocol on every route it creates.
type Route struct {
	Dst netip.Prefix // masked; 0.0.0.0/0 or ::/0 for a default route
	Gw  netip.Addr   // zero for none
	Dev string       // "" for none
	// Table is the routing table; 0 means TableMain (254), in the name and
	// in Equal alike.
	Table uint32
	// Metric is the route priority. An IPv6 route with metric 0 gets
	// IPv6DefaultMetric (1024) from the kernel, so the two are the same in
	// the name and in Equal.
	Metric uint32
	// Scope: routes with only a Dev are usually ScopeLink (as `ip route`
	// sets them); the zero value is global.
	Scope Scope
	Src   netip.Addr // preferred source; zero for none
	// Kind is the route type (rtm_type); a field named Type would clash
	// with the Type method.
	Kind RouteType

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

// Type returns TypeRoute.
func (r *Route) Type() string { return TypeRoute }

// Name returns "<table> <dst> metric <metric>".
func (r *Route) Name() string {
	return fmt.Sprintf("%s %s metric %d", TableName(r.TableID()), r.Dst, r.EffectiveMetric())
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

// Dependencies: interface/<Dev> when Dev is set; link/<CarrierLink> with
// the "carrier up" predicate (HasCarrier) when CarrierLink is set;
// address/<GwAddress> when GwAddress is set; then Deps.
func (r *Route) Dependencies() []dg.Dependency {
	var deps []dg.Dependency
	if r.Dev != "" {
		deps = append(deps, requires(InterfaceRef(r.Dev), "device"))
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
	fmt.Fprintf(&b, " table %s metric %d scope %s",
		strings.TrimPrefix(TableName(r.TableID()), "table "), r.EffectiveMetric(), r.Scope)
	if r.Src.IsValid() {
		b.WriteString(" src " + r.Src.String())
	}
	return b.String()
}
