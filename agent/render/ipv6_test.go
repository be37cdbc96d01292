package render

import (
	"net/netip"
	"testing"

	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/items"
)

// sysctlValues returns the sysctl items of g, key to value.
func sysctlValues(g *dg.Graph) map[string]string {
	out := map[string]string{}
	for it := range g.Items() {
		if s, ok := it.(*items.Sysctl); ok {
			out[s.Key] = s.Value
		}
	}
	return out
}

// acceptRA renders the interface's sysctls: accept_ra 2 where it forwards
// IPv6 (the intent's own keys, else the kernel's all.forwarding), else 1;
// the knobs turn their sysctls off; disable_ipv6 comes last; dhcp6 alone
// only turns IPv6 on.
func TestRenderIPv6AcceptRA(t *testing.T) {
	for _, tc := range []struct {
		name    string
		doc     string
		facts   Facts
		want    map[string]string
		wantLen int
	}{
		{"plain", `"interfaces": [{"name": "eth0", "type": "physical", "ipv6": {"acceptRA": true}}]`, Facts{},
			map[string]string{"net.ipv6.conf.eth0.accept_ra": "1", "net.ipv6.conf.eth0.autoconf": "1", "net.ipv6.conf.eth0.accept_ra_pinfo": "1",
				"net.ipv6.conf.eth0.accept_ra_defrtr": "1", "net.ipv6.conf.eth0.disable_ipv6": "0"}, 5},
		{"kernel forwards", `"interfaces": [{"name": "eth0", "type": "physical", "ipv6": {"acceptRA": true}}]`, Facts{IPv6Forwarding: true},
			map[string]string{"net.ipv6.conf.eth0.accept_ra": "2"}, 5},
		{"intent forwards", `"interfaces": [{"name": "eth0", "type": "physical", "ipv6": {"acceptRA": true}}], "sysctls": {"net.ipv6.conf.all.forwarding": "1"}`, Facts{},
			map[string]string{"net.ipv6.conf.eth0.accept_ra": "2"}, 6},
		{"intent stops the kernel forwarding", `"interfaces": [{"name": "eth0", "type": "physical", "ipv6": {"acceptRA": true}}], "sysctls": {"net.ipv6.conf.all.forwarding": "0"}`, Facts{IPv6Forwarding: true},
			map[string]string{"net.ipv6.conf.eth0.accept_ra": "1"}, 6},
		{"interface's own forwarding wins", `"interfaces": [{"name": "eth0.7", "type": "physical", "ipv6": {"acceptRA": true}}], "sysctls": {"net.ipv6.conf.all.forwarding": "0", "net.ipv6.conf.eth0.7.forwarding": "1"}`, Facts{},
			map[string]string{"net.ipv6.conf.eth0/7.accept_ra": "2"}, 7},
		{"knobs off", `"interfaces": [{"name": "eth0", "type": "physical", "ipv6": {"acceptRA": true, "acceptRADefRoute": false, "acceptRAPrefixes": false}}]`, Facts{},
			map[string]string{"net.ipv6.conf.eth0.accept_ra": "1", "net.ipv6.conf.eth0.autoconf": "0", "net.ipv6.conf.eth0.accept_ra_pinfo": "0",
				"net.ipv6.conf.eth0.accept_ra_defrtr": "0"}, 5},
		{"dhcp6 alone", `"interfaces": [{"name": "eth0", "type": "physical", "ipv6": {"dhcp6": true}}]`, Facts{},
			map[string]string{"net.ipv6.conf.eth0.disable_ipv6": "0"}, 1},
		{"nothing", `"interfaces": [{"name": "eth0", "type": "physical", "ipv6": {}}]`, Facts{}, map[string]string{}, 0},
	} {
		g, err := RenderWith(parse(t, `{"version": 1, `+tc.doc+`}`), tc.facts)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		got := sysctlValues(g)
		if len(got) != tc.wantLen {
			t.Errorf("%s: %d sysctls %v, want %d", tc.name, len(got), got, tc.wantLen)
		}
		for k, v := range tc.want {
			if got[k] != v {
				t.Errorf("%s: %s = %q, want %q (all: %v)", tc.name, k, got[k], v, got)
			}
		}
	}
	g := mustRender(t, parse(t, `{"version": 1, "interfaces": [{"name": "eth0", "type": "physical", "ipv6": {"acceptRA": true}}]}`))
	ref := dg.ItemRef{Type: items.TypeSysctl, Name: "net.ipv6.conf.eth0.disable_ipv6"}
	deps := g.Dependencies(ref)
	var needs []string
	for _, d := range deps {
		needs = append(needs, d.RequiredItem.Name)
	}
	want := []string{"eth0", "net.ipv6.conf.eth0.accept_ra", "net.ipv6.conf.eth0.autoconf", "net.ipv6.conf.eth0.accept_ra_pinfo", "net.ipv6.conf.eth0.accept_ra_defrtr"}
	if len(needs) != len(want) {
		t.Fatalf("disable_ipv6 needs %v, want %v", needs, want)
	}
	for i := range want {
		if needs[i] != want[i] {
			t.Errorf("disable_ipv6 needs %v, want %v", needs, want)
		}
	}
}

// dhcp6 renders the lease item, after IPv6 is on; a known lease (Facts)
// adds its address as a /128 depending on the lease item, unless the
// intent declares that address itself.
func TestRenderDHCP6(t *testing.T) {
	doc := `{"version": 1, "interfaces": [{"name": "up0", "type": "physical", "ipv6": {"dhcp6": true}}]}`
	g := mustRender(t, parse(t, doc))
	l := only[*items.DHCP6Lease](t, g)
	if len(l.Deps) != 1 || l.Deps[0].Name != "net.ipv6.conf.up0.disable_ipv6" {
		t.Errorf("lease deps %v", l.Deps)
	}
	for it := range g.Items() {
		if _, ok := it.(*items.Address); ok {
			t.Errorf("an address without a lease: %v", it)
		}
	}
	a := netip.MustParseAddr("2001:db8:77::123")
	g, err := RenderWith(parse(t, doc), Facts{DHCP6: map[string]Lease6{"up0": {Address: a}, "other0": {Address: a}}})
	if err != nil {
		t.Fatal(err)
	}
	addr := only[*items.Address](t, g)
	if addr.Dev != "up0" || addr.Prefix != netip.PrefixFrom(a, 128) || len(addr.Deps) != 1 || addr.Deps[0] != items.DHCP6LeaseRef("up0") {
		t.Errorf("lease address %+v", addr)
	}
	declared := `{"version": 1, "interfaces": [{"name": "up0", "type": "physical", "addresses": ["2001:db8:77::123/128"], "ipv6": {"dhcp6": true}}]}`
	g, err = RenderWith(parse(t, declared), Facts{DHCP6: map[string]Lease6{"up0": {Address: a}}})
	if err != nil {
		t.Fatal(err)
	}
	if addr := only[*items.Address](t, g); len(addr.Deps) != 0 {
		t.Errorf("the intent's own address should win: %+v", addr)
	}
}

// examples/ipv6-uplink.json, a router's IPv6 uplink: accept_ra 2 (it
// forwards), the lease item, and with a resolv.conf and a lease the DNS
// item merging the intent's server with the lease's.
func TestRenderIPv6UplinkExample(t *testing.T) {
	in := parseFile(t, "../../examples/ipv6-uplink.json")
	lease := netip.MustParseAddr("2001:db8:77::123")
	g, err := RenderWith(in, Facts{ResolvConf: "/etc/resolv.conf", DHCP6: map[string]Lease6{"uplink0": {Address: lease}},
		LeaseDNS: []items.LinkDNS{{Dev: "uplink0", Nameservers: []netip.Addr{netip.MustParseAddr("2001:db8:77::53")}}}})
	if err != nil {
		t.Fatal(err)
	}
	if got := sysctlValues(g)["net.ipv6.conf.uplink0.accept_ra"]; got != "2" {
		t.Errorf("accept_ra %q, want 2 on a forwarding router", got)
	}
	only[*items.DHCP6Lease](t, g)
	if d := only[*items.DNS](t, g); len(d.Nameservers) != 2 || d.Nameservers[0].String() != "2001:4860:4860::8888" {
		t.Errorf("dns %v", d)
	}
}
