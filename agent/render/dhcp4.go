package render

import (
	"slices"

	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/items"
	"github.com/netagent/netagent/items/lease4"
)

// addLeases indexes the interfaces with dhcp4 and the addresses of their
// known leases, which routes then find as declared addresses (their
// gateway's subnet).
func (x *index) addLeases(facts Facts) {
	x.dhcp4 = map[string]bool{}
	for name, ifc := range x.ifaces {
		if !ifc.DHCP4.Enabled() {
			continue
		}
		l := facts.Leases[name]
		x.dhcp4[name] = l != nil
		if l != nil {
			x.addrs = append(x.addrs, declaredAddr{dev: name, prefix: l.Address, item: items.AddressName(name, l.Address)})
		}
	}
}

// leaseItems renders, for each interface with dhcp4, its lease item (which
// needs the interface and its carrier) and, when the lease is known
// (Facts), what the lease gives, each depending on the lease item: the
// address, and with useRoutes the default route through the router or
// the classless routes of option 121 (lease4.Items). They go into the
// interface's file. An object the intent declares itself (the same
// address, the same route) wins over the lease's: the lease's is left out.
func (b *builder) leaseItems() {
	for i := range b.in.Interfaces {
		ifc := &b.in.Interfaces[i]
		d := ifc.DHCP4
		if !d.Enabled() {
			continue
		}
		at := field(b.in.Locate(ifc.Origin, "interfaces", i), "dhcp4")
		b.object(ifc.Drift, ifc.Origin)
		b.put(&items.DHCP4Lease{Dev: ifc.Name, Hostname: d.Hostname, ClientID: d.ClientID, VendorClass: d.VendorClass}, at)
		l := b.facts.Leases[ifc.Name]
		if l == nil {
			continue
		}
		o := lease4.RouteOptions{UseRoutes: d.EffectiveUseRoutes(), Metric: uint32(d.RouteMetric), Physical: b.idx.isPhysical(ifc.Name)}
		for _, it := range lease4.Items(l, o) {
			if b.g.Contains(dg.Ref(it)) {
				continue
			}
			b.put(it.(validator), at)
		}
	}
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
