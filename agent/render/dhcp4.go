package render

import (
	"net/netip"
	"slices"

	"github.com/netagent/netagent/agent/intent"
	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/items"
	"github.com/netagent/netagent/items/lease4"
)

// addLeases indexes the interfaces with dhcp4 and the addresses of their
// known leases, which routes then find as declared addresses (their
// gateway's subnet). With a lease known, of either family, it first takes
// the intent's claims (leaseclaims.go), from the declared addresses alone:
// a lease whose address would take over one is refused (refused4), and
// stays unknown to the routes, which wait for it as for no lease.
func (x *index) addLeases(in *intent.Intent, facts Facts) {
	x.dhcp4 = map[string]bool{}
	if len(facts.Leases) > 0 || len(facts.DHCP6) > 0 {
		x.claims = x.leaseClaims(in)
	}
	for name, l := range facts.DHCP6 {
		if why := addressRefusal(x.claims, name, netip.PrefixFrom(l.Address, 128), false); why != "" {
			x.refused6 = withReason(x.refused6, name, why)
		}
	}
	for name, ifc := range x.ifaces {
		if !ifc.DHCP4.Enabled() {
			continue
		}
		l := facts.Leases[name]
		if l != nil {
			if why := addressRefusal(x.claims, name, l.Address, true); why != "" {
				x.refused4 = withReason(x.refused4, name, why)
				l = nil
			}
		}
		x.dhcp4[name] = l != nil
		if l != nil {
			x.addrs = append(x.addrs, declaredAddr{dev: name, prefix: l.Address, item: items.AddressName(name, l.Address)})
		}
	}
}

// withReason sets m[name] to why, making m if need be.
func withReason(m map[string]string, name, why string) map[string]string {
	if m == nil {
		m = map[string]string{}
	}
	m[name] = why
	return m
}

// leaseItems renders, for each interface with dhcp4, its lease item (which
// needs the interface, and its carrier when physical: carrierLink) and, when the lease is known
// (Facts), what the lease gives, each depending on the lease item: the
// address, and with useRoutes the default route through the router or
// the classless routes of option 121 (lease4.Items). They go into the
// interface's file. An object the intent declares itself (the same
// address, the same route) wins over the lease's: the lease's is left out.
// What would take over the intent's own networks is left out too
// (leaseclaims.go): all of the lease for its address, a route for itself,
// the lease item saying why (Refused).
func (b *builder) leaseItems() {
	for i := range b.in.Interfaces {
		ifc := &b.in.Interfaces[i]
		d := ifc.DHCP4
		if !d.Enabled() {
			continue
		}
		at := field(b.in.Locate(ifc.Origin, "interfaces", i), "dhcp4")
		b.object(ifc.Drift, ifc.Origin)
		lease := &items.DHCP4Lease{Dev: ifc.Name, Hostname: d.Hostname, ClientID: d.ClientID, VendorClass: d.VendorClass,
			CarrierLink: b.carrierLink(ifc.Name), Refused: b.idx.refused4[ifc.Name]}
		var its []dg.Item
		if l := b.facts.Leases[ifc.Name]; l != nil && lease.Refused == "" {
			o := lease4.RouteOptions{UseRoutes: d.EffectiveUseRoutes(), UseDNS: d.EffectiveUseDNS(), Metric: uint32(d.RouteMetric),
				Physical: b.idx.isPhysical(ifc.Name)}
			its, lease.Refused = b.allowedLeaseItems(ifc.Name, lease4.Items(l, o))
		}
		b.put(lease, at)
		for _, it := range its {
			b.put(it.(validator), at)
		}
	}
}

// carrierLink is the CarrierLink of a lease on dev: dev when physical,
// the only interfaces with a Link item that reports a carrier; "" for one
// netagent creates (a bridge, a veth), which has none to wait for.
func (b *builder) carrierLink(dev string) string {
	if b.idx.isPhysical(dev) {
		return dev
	}
	return ""
}

// allowedLeaseItems returns the items of a lease on dev that the intent
// declares not itself and that take over nothing of it (routeRefusal),
// and why the others are left out ("; "-joined).
func (b *builder) allowedLeaseItems(dev string, its []dg.Item) (keep []dg.Item, refused string) {
	for _, it := range its {
		if b.g.Contains(dg.Ref(it)) {
			continue
		}
		if r, ok := it.(*items.Route); ok {
			if why := routeRefusal(b.idx.claims, dev, r); why != "" {
				refused = joinReasons(refused, why)
				continue
			}
		}
		keep = append(keep, it)
	}
	return keep, refused
}

// joinReasons appends why to reasons.
func joinReasons(reasons, why string) string {
	if reasons == "" {
		return why
	}
	return reasons + "; " + why
}

// leaseDeps makes an IPv4 route through a gateway that no declared subnet
// holds wait for the leases not yet known that may hold it: the lease of
// its device when that has dhcp4, else, for a route without a device,
// those of every interface with dhcp4. It waits for the lease's address
// (items.DHCP4AddressRef), which no item is until the lease is known:
// then its address is a declared subnet like any other
// (index.addLeases), and the route waits for that address (GwAddress).
func (b *builder) leaseDeps(it *items.Route, dev string) {
	if !it.Gw.IsValid() || !it.Gw.Is4() || it.GwAddress != "" || len(b.idx.dhcp4) == 0 {
		return
	}
	if dev != "" {
		if known, ok := b.idx.dhcp4[dev]; ok && !known {
			it.Deps = append(it.Deps, items.DHCP4AddressRef(dev))
		}
		return
	}
	if len(it.Deps) > 0 { // an on-link route holds the gateway
		return
	}
	var waits []string
	for name, known := range b.idx.dhcp4 {
		if !known {
			waits = append(waits, name)
		}
	}
	slices.Sort(waits)
	for _, name := range waits {
		it.Deps = append(it.Deps, items.DHCP4AddressRef(name))
	}
}

// LeaseRefused returns why g, rendered with leases, leaves out some of
// what the lease of the lease item ref gives (DHCP4Lease.Refused,
// DHCP6Lease.Refused; leaseclaims.go): "" when nothing is, or g has no
// such item.
func LeaseRefused(g *dg.Graph, ref dg.ItemRef) string {
	if g == nil {
		return ""
	}
	switch it, _ := g.Get(ref); l := it.(type) {
	case *items.DHCP4Lease:
		return l.Refused
	case *items.DHCP6Lease:
		return l.Refused
	}
	return ""
}
