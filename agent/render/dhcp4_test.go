package render

import (
	"fmt"
	"net/netip"
	"slices"
	"testing"

	"github.com/netagent/netagent/agent/intent"
	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/items"
	"github.com/netagent/netagent/items/lease4"
)

const dhcpIntent = `{"version": 1,
 "interfaces": [
  {"name": "up0", "type": "physical", "dhcp4": {"hostname": "edge-1", "routeMetric": 100}},
  {"name": "lan0", "type": "physical", "addresses": ["192.168.1.1/24"]}],
 "routes": [
  {"to": "203.0.113.0/24", "via": "10.77.0.1", "dev": "up0"},
  {"to": "198.51.100.0/24", "via": "10.77.0.1"},
  {"to": "192.0.2.0/24", "via": "192.168.1.254"}]}`

func renderDHCP(t *testing.T, facts Facts) *dg.Graph {
	t.Helper()
	in, err := intent.Parse([]byte(dhcpIntent))
	if err != nil {
		t.Fatal(err)
	}
	g, err := RenderWith(in, facts)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func routeOf(t *testing.T, g *dg.Graph, dst string) *items.Route {
	t.Helper()
	for it := range g.Items() {
		if r, ok := it.(*items.Route); ok && r.Dst.String() == dst {
			return r
		}
	}
	t.Fatalf("no route to %s", dst)
	return nil
}

// Without a known lease: the lease item (needing up0 and its carrier);
// the static routes through a gateway only the lease can hold wait for
// the lease; the route through lan0's own subnet does not.
func TestRenderDHCP4LeaseUnknown(t *testing.T) {
	g := renderDHCP(t, Facts{})
	it, ok := g.Get(items.DHCP4LeaseRef("up0"))
	if !ok || it.(*items.DHCP4Lease).Hostname != "edge-1" {
		t.Fatalf("lease item %v", it)
	}
	lease := items.DHCP4AddressRef("up0")
	for _, dst := range []string{"203.0.113.0/24", "198.51.100.0/24"} {
		if r := routeOf(t, g, dst); !slices.Contains(r.Deps, lease) {
			t.Errorf("route %s deps %v, want the lease", dst, r.Deps)
		}
	}
	if r := routeOf(t, g, "192.0.2.0/24"); slices.Contains(r.Deps, lease) {
		t.Errorf("the static LAN route waits for the lease: %v", r.Deps)
	}
	for it := range g.Items() {
		if a, ok := it.(*items.Address); ok && a.Dev == "up0" {
			t.Errorf("an address on up0 without a lease: %v", a)
		}
	}
}

// With the lease known: its address and default route (with the intent's
// metric), depending on the lease; the static routes wait for the leased
// address (their gateway's subnet) instead of the lease item.
func TestRenderDHCP4LeaseKnown(t *testing.T) {
	l := &lease4.Lease{Interface: "up0", Address: netip.MustParsePrefix("10.77.0.100/24"),
		Server: netip.MustParseAddr("10.77.0.1"), Router: netip.MustParseAddr("10.77.0.1")}
	g := renderDHCP(t, Facts{Leases: map[string]*lease4.Lease{"up0": l}})
	addr, ok := g.Get(items.AddressRef("up0", l.Address))
	if !ok || !slices.Contains(addr.(*items.Address).Deps, items.DHCP4LeaseRef("up0")) {
		t.Fatalf("lease address %v", addr)
	}
	def := routeOf(t, g, "0.0.0.0/0")
	if def.Gw != l.Router || def.Metric != 100 || !slices.Contains(def.Deps, items.DHCP4LeaseRef("up0")) {
		t.Errorf("default route %v deps %v", def, def.Deps)
	}
	for _, dst := range []string{"203.0.113.0/24", "198.51.100.0/24"} {
		r := routeOf(t, g, dst)
		if r.GwAddress != items.AddressName("up0", l.Address) {
			t.Errorf("route %s GwAddress %q, want the leased address", dst, r.GwAddress)
		}
	}
	if sub, _ := g.ScopeOf(items.AddressRef("up0", l.Address)); sub != "" {
		t.Errorf("lease address in subgraph %q", sub)
	}
}

// A static default route of the same metric wins over the lease's.
func TestRenderDHCP4StaticWins(t *testing.T) {
	in, err := intent.Parse([]byte(`{"version": 1,
 "interfaces": [{"name": "up0", "type": "physical", "dhcp4": true}],
 "routes": [{"to": "0.0.0.0/0", "via": "10.77.0.254", "dev": "up0"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	l := &lease4.Lease{Interface: "up0", Address: netip.MustParsePrefix("10.77.0.100/24"), Router: netip.MustParseAddr("10.77.0.1")}
	g, err := RenderWith(in, Facts{Leases: map[string]*lease4.Lease{"up0": l}})
	if err != nil {
		t.Fatal(err)
	}
	if r := routeOf(t, g, "0.0.0.0/0"); r.Gw != netip.MustParseAddr("10.77.0.254") {
		t.Errorf("default route %v, want the intent's", r)
	}
}

// The edge router of examples/ (a DHCP uplink, a LAN bridge, NAT, DNS)
// renders: the uplink's lease item, and with a lease its address and
// default route; the LAN does not depend on the lease; resolv.conf has
// the intent's server and domain first, then the lease's.
func TestRenderEdgeRouterExample(t *testing.T) {
	in := parseFile(t, "../../examples/edge-router.json")
	l := &lease4.Lease{Interface: "wan0", Address: netip.MustParsePrefix("10.77.0.100/24"), Router: netip.MustParseAddr("10.77.0.1"),
		DNS: []netip.Addr{netip.MustParseAddr("10.77.0.53")}, Domains: []string{"isp.example"}}
	g, err := RenderWith(in, Facts{Leases: map[string]*lease4.Lease{"wan0": l}, ResolvConf: "/run/netagent/resolv.conf"})
	if err != nil {
		t.Fatal(err)
	}
	if it, ok := g.Get(items.DNSRef("/run/netagent/resolv.conf")); !ok {
		t.Error("no dns item")
	} else if d := it.(*items.DNS); fmt.Sprint(d.Nameservers, d.Search) != "[192.168.50.53 10.77.0.53] [lan.example isp.example]" {
		t.Errorf("dns %v %v, want the intent's server and domain, then the lease's", d.Nameservers, d.Search)
	}
	if _, ok := g.Get(items.DHCP4LeaseRef("wan0")); !ok {
		t.Error("no lease item for wan0")
	}
	if r := routeOf(t, g, "0.0.0.0/0"); r.Dev != "wan0" || r.Metric != 100 {
		t.Errorf("default route %v", r)
	}
	for it := range g.Items() {
		for _, d := range it.Dependencies() {
			if d.RequiredItem != items.DHCP4LeaseRef("wan0") {
				continue
			}
			switch it := it.(type) {
			case *items.Address:
				if it.Dev != "wan0" {
					t.Errorf("%v depends on the lease", it)
				}
			case *items.Route:
				if it.Dev != "wan0" {
					t.Errorf("%v depends on the lease", it)
				}
			default:
				t.Errorf("%v depends on the lease", it)
			}
		}
	}
}

// A lease waits for the carrier of its interface's Link only where there
// is one, a physical interface: on a bridge netagent creates (no Link item:
// the link read-back gives it as an Interface alone), the DHCPv4 and DHCPv6
// leases need the interface only, else they would wait for ever.
func TestRenderLeaseCarrierOnlyPhysical(t *testing.T) {
	in, err := intent.Parse([]byte(`{"version": 1, "interfaces": [
	  {"name": "up0", "type": "physical", "dhcp4": {}, "ipv6": {"dhcp6": true}},
	  {"name": "br0", "type": "bridge", "dhcp4": {"routeMetric": 200}, "ipv6": {"dhcp6": true}},
	  {"name": "eth0", "type": "physical", "master": "br0"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	g, err := RenderWith(in, Facts{})
	if err != nil {
		t.Fatal(err)
	}
	for _, dev := range []string{"up0", "br0"} {
		for _, ref := range []dg.ItemRef{items.DHCP4LeaseRef(dev), items.DHCP6LeaseRef(dev)} {
			it, ok := g.Get(ref)
			if !ok {
				t.Fatalf("no %v", ref)
			}
			var carrier, iface bool
			for _, d := range it.Dependencies() {
				switch d.RequiredItem {
				case items.LinkRef(dev):
					carrier = d.MustSatisfy != nil && d.MustSatisfy(&items.Link{IfName: dev, Carrier: true}) &&
						!d.MustSatisfy(&items.Link{IfName: dev})
				case items.InterfaceRef(dev):
					iface = true
				}
			}
			if want := dev == "up0"; carrier != want || !iface {
				t.Errorf("%v: waits for the carrier %v (want %v), for interface/%s %v: %v", ref, carrier, want, dev, iface, it.Dependencies())
			}
		}
	}
}
