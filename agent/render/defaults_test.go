package render

import (
	"net/netip"
	"slices"
	"testing"
	"time"

	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/items"
)

// Units and defaults are converted between the intent and the items: each
// case renders one document and checks one item.
func TestRenderInterfaceDefaults(t *testing.T) {
	cases := []struct {
		name, doc string
		check     func(*items.Interface) bool
	}{
		{"bridge forward delay: centiseconds to a duration",
			`{"name": "br0", "type": "bridge", "bridge": {"stp": true, "forwardDelay": 400}}`,
			func(i *items.Interface) bool {
				return items.AttrsOf[*items.BridgeAttrs](i).ForwardDelay == 4*time.Second && items.AttrsOf[*items.BridgeAttrs](i).STP
			}},
		{"bridge forward delay: a duration with its unit",
			`{"name": "br0", "type": "bridge", "bridge": {"stp": true, "forwardDelay": "15s"}}`,
			func(i *items.Interface) bool {
				return items.AttrsOf[*items.BridgeAttrs](i).ForwardDelay == 15*time.Second
			}},
		{"bridge without section: kernel defaults",
			`{"name": "br0", "type": "bridge"}`,
			func(i *items.Interface) bool { return i.Attrs == nil }},
		{"vxlan without port: IANA's 4789, explicitly; learning on",
			`{"name": "vx0", "type": "vxlan", "vxlan": {"vni": 7, "remote": "192.0.2.2"}}`,
			func(i *items.Interface) bool {
				return items.AttrsOf[*items.VxlanAttrs](i).Port == 4789 && items.AttrsOf[*items.VxlanAttrs](i).Learning && items.AttrsOf[*items.VxlanAttrs](i).VNI == 7 &&
					items.AttrsOf[*items.VxlanAttrs](i).Remote == netip.MustParseAddr("192.0.2.2") && !items.AttrsOf[*items.VxlanAttrs](i).Local.IsValid()
			}},
		{"vxlan learning off",
			`{"name": "vx0", "type": "vxlan", "vxlan": {"vni": 7, "port": 8472, "learning": false}}`,
			func(i *items.Interface) bool {
				return items.AttrsOf[*items.VxlanAttrs](i).Port == 8472 && !items.AttrsOf[*items.VxlanAttrs](i).Learning
			}},
		{"mtu 0 leaves the kernel's; state up by default",
			`{"name": "br0", "type": "bridge"}`,
			func(i *items.Interface) bool { return i.MTU == 0 && i.AdminUp }},
		{"state down, mtu, mac, alias",
			`{"name": "br0", "type": "bridge", "state": "down", "mtu": 9000, "mac": "02:00:00:00:00:01", "alias": "lan"}`,
			func(i *items.Interface) bool {
				return !i.AdminUp && i.MTU == 9000 && i.MAC.String() == "02:00:00:00:00:01" && i.Alias == "lan"
			}},
		{"bond: kernel names, unset stays unset",
			`{"name": "bond0", "type": "bond", "bond": {"mode": "active-backup", "miimon": 100}}`,
			func(i *items.Interface) bool {
				return *items.AttrsOf[*items.BondAttrs](i) == items.BondAttrs{Mode: "active-backup", Miimon: 100}
			}},
		{"vlan protocol left to the default",
			`{"name": "br0.7", "type": "vlan", "vlan": {"parent": "eth0", "id": 7}}, {"name": "eth0", "type": "physical"}`,
			func(i *items.Interface) bool {
				return *items.AttrsOf[*items.VLANAttrs](i) == items.VLANAttrs{Parent: "eth0", ID: 7}
			}},
		{"macvlan mode",
			`{"name": "mv0", "type": "macvlan", "macvlan": {"parent": "eth0", "mode": "bridge"}}, {"name": "eth0", "type": "physical"}`,
			func(i *items.Interface) bool {
				return *items.AttrsOf[*items.MacvlanAttrs](i) == items.MacvlanAttrs{Parent: "eth0", Mode: "bridge"}
			}},
		{"veth in another namespace",
			`{"name": "v0", "type": "veth", "veth": {"peer": "eth0", "peerNetns": "ctr"}}`,
			func(i *items.Interface) bool {
				return *items.AttrsOf[*items.VethAttrs](i) == items.VethAttrs{Peer: "eth0", PeerNetns: "ctr"}
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := mustRender(t, parse(t, `{"version": 1, "interfaces": [`+c.doc+`]}`))
			var it *items.Interface // the one under test: not the physical parent
			for x := range g.Items() {
				if i, ok := x.(*items.Interface); ok && i.Kind != items.KindPhysical {
					it = i
				}
			}
			if !c.check(it) {
				t.Errorf("rendered %s", it)
			}
		})
	}
}

// Routes get the table, metric and scope the kernel would give them, so
// that read-back compares equal.
func TestRenderRouteDefaults(t *testing.T) {
	cases := []struct {
		route string
		want  items.Route
	}{
		{`{"to": "2001:db8::/32", "dev": "eth0"}`,
			items.Route{Dst: mustPrefix("2001:db8::/32"), Dev: "eth0", Table: 254, Metric: 1024, CarrierLink: "eth0"}},
		{`{"to": "10.1.0.0/16", "dev": "eth0"}`,
			items.Route{Dst: mustPrefix("10.1.0.0/16"), Dev: "eth0", Table: 254, Scope: items.ScopeLink, CarrierLink: "eth0"}},
		{`{"to": "10.2.0.0/16", "via": "192.0.2.1", "table": 100, "metric": 5, "src": "192.0.2.10"}`,
			items.Route{Dst: mustPrefix("10.2.0.0/16"), Gw: netip.MustParseAddr("192.0.2.1"), Table: 100, Metric: 5,
				Src: netip.MustParseAddr("192.0.2.10"), GwAddress: "eth0/192.0.2.10/24", CarrierLink: "eth0"}},
		{`{"to": "10.3.0.0/16", "via": "198.51.100.1", "src": "203.0.113.5"}`,
			items.Route{Dst: mustPrefix("10.3.0.0/16"), Gw: netip.MustParseAddr("198.51.100.1"), Table: 254,
				Src: netip.MustParseAddr("203.0.113.5"), Deps: []dg.ItemRef{items.AddressRef("br0", mustPrefix("203.0.113.5/32"))}}},
		{`{"to": "default", "type": "unreachable", "family": "ipv6"}`,
			items.Route{Dst: mustPrefix("::/0"), Table: 254, Metric: 1024, Kind: items.RouteUnreachable}},
		{`{"to": "10.4.0.0/16", "dev": "br0", "scope": "global"}`,
			items.Route{Dst: mustPrefix("10.4.0.0/16"), Dev: "br0", Table: 254}},
	}
	for _, c := range cases {
		t.Run(c.route, func(t *testing.T) {
			g := mustRender(t, parse(t, `{"version": 1, "interfaces": [
				{"name": "eth0", "type": "physical", "addresses": ["192.0.2.10/24"]},
				{"name": "br0", "type": "bridge", "addresses": ["203.0.113.5/32"]}],
				"routes": [`+c.route+`]}`))
			got := only[*items.Route](t, g)
			if !slices.Equal(got.Deps, c.want.Deps) || got.Scope != c.want.Scope || got.Table != c.want.Table ||
				got.Metric != c.want.Metric || !got.Equal(&c.want) {
				t.Errorf("rendered %+v\nwant     %+v", *got, c.want)
			}
		})
	}
}

// A rule names its family, keeps its mask as given and depends on the
// interfaces it names that the intent declares (a veth peer through its
// veth); foreign names are no dependency.
func TestRenderRule(t *testing.T) {
	g := mustRender(t, parse(t, `{"version": 1,
		"interfaces": [{"name": "v0", "type": "veth", "veth": {"peer": "v0p"}}, {"name": "br0", "type": "bridge"}],
		"rules": [{"priority": 10, "fwmark": 1, "iif": "v0p", "oif": "br0", "table": 7, "family": "ipv6"},
		          {"priority": 11, "to": "10.0.0.0/8", "iif": "eth9", "table": 8}]}`))
	want := []*items.Rule{
		{Priority: 10, Family: items.FamilyIPv6, Mark: 1, IifName: "v0p", OifName: "br0", Table: 7,
			Deps: []dg.ItemRef{items.InterfaceRef("v0"), items.InterfaceRef("br0")}},
		{Priority: 11, Family: items.FamilyIPv4, To: mustPrefix("10.0.0.0/8"), IifName: "eth9", Table: 8},
	}
	for _, w := range want {
		got, ok := g.Get(dg.Ref(w))
		if !ok || !got.Equal(w) {
			t.Errorf("rule %s: got %v", w.Name(), got)
		}
	}
}

// A from or to of length 0 ("::/0", as systemd-networkd's test
// configurations write "from all") is no selector at all: the kernel keeps
// none, and an item that kept it would differ from the read-back for ever.
func TestRenderRuleAllPrefix(t *testing.T) {
	g := mustRender(t, parse(t, `{"version": 1,
		"rules": [{"priority": 100, "from": "::/0", "table": 8},
		          {"priority": 101, "from": "0.0.0.0/0", "to": "0.0.0.0/0", "table": 9}]}`))
	want := []*items.Rule{
		{Priority: 100, Family: items.FamilyIPv6, Table: 8},
		{Priority: 101, Family: items.FamilyIPv4, Table: 9},
	}
	for _, w := range want {
		got, ok := g.Get(dg.Ref(w))
		if !ok || !got.Equal(w) {
			t.Errorf("rule %s: got %v", w.Name(), got)
		}
	}
}

// A chain of family "both" is one item per family, its rules split into
// arguments; the jump position stays as given (0 is 1), and a lone jump's
// block starts there.
func TestRenderChains(t *testing.T) {
	g := mustRender(t, parse(t, `{"version": 1, "firewall": {"chains": [
		{"table": "filter", "name": "IN", "jumpFrom": "INPUT", "position": 2, "family": "both",
		 "rules": ["-p tcp --dport 22 -m comment --comment 'ssh in' -j ACCEPT"]}]}}`))
	for _, f := range []items.Family{items.FamilyIPv4, items.FamilyIPv6} {
		want := &items.IptablesChain{Family: f, Table: "filter", Chain: "IN", JumpFrom: "INPUT", Position: 2, BlockStart: 2,
			Rules: [][]string{{"-p", "tcp", "--dport", "22", "-m", "comment", "--comment", "ssh in", "-j", "ACCEPT"}}}
		got, ok := g.Get(dg.Ref(want))
		if !ok || !got.Equal(want) {
			t.Errorf("chain %s: got %v", want.Name(), got)
		}
	}
}

// Chains jumped to from one built-in chain form one block per family:
// ordered by position (absent: 1; explicit first at a tie), then by name,
// starting at the first position. Issue 7: two chains with no position
// both claimed position 1 and swapped on every apply.
func TestRenderChainBlocks(t *testing.T) {
	g := mustRender(t, parse(t, `{"version": 1, "firewall": {"chains": [
		{"table": "filter", "name": "Z", "jumpFrom": "FORWARD", "family": "both", "position": 1},
		{"table": "filter", "name": "B", "jumpFrom": "FORWARD", "family": "both"},
		{"table": "filter", "name": "A", "jumpFrom": "FORWARD"},
		{"table": "filter", "name": "X", "jumpFrom": "FORWARD", "family": "ipv6", "position": 7},
		{"table": "filter", "name": "IN", "jumpFrom": "INPUT", "position": 4},
		{"table": "nat", "name": "A", "jumpFrom": "POSTROUTING", "position": 3},
		{"table": "filter", "name": "NOJUMP"}]}}`))
	for _, want := range []struct {
		fam                  items.Family
		table, name          string
		position, blockStart int
	}{
		{items.FamilyIPv4, "filter", "Z", 1, 1}, {items.FamilyIPv4, "filter", "A", 2, 1},
		{items.FamilyIPv4, "filter", "B", 3, 1},
		{items.FamilyIPv6, "filter", "Z", 1, 1}, {items.FamilyIPv6, "filter", "B", 2, 1},
		{items.FamilyIPv6, "filter", "X", 3, 1},
		{items.FamilyIPv4, "filter", "IN", 4, 4}, {items.FamilyIPv4, "nat", "A", 3, 3},
		{items.FamilyIPv4, "filter", "NOJUMP", 0, 0},
	} {
		ref := dg.Ref(&items.IptablesChain{Family: want.fam, Table: want.table, Chain: want.name})
		got, ok := g.Get(ref)
		c, _ := got.(*items.IptablesChain)
		if !ok || c.Position != want.position || c.BlockStart != want.blockStart {
			t.Errorf("%s: got %v, want position %d in the block from %d", ref.Name, got, want.position, want.blockStart)
		}
	}
}

// A chain whose rules jump or go to another chain of the intent, in the
// same table and family, depends on it, so that it is created after it and
// deleted before it; built-in targets and foreign chains are no dependency.
func TestRenderChainJumpsToChain(t *testing.T) {
	g := mustRender(t, parse(t, `{"version": 1, "firewall": {"chains": [
		{"table": "filter", "name": "IN", "jumpFrom": "INPUT", "family": "both",
		 "rules": ["-p tcp --dport 22 -j ACCEPT", "-i eth0 -j LOG-DROP", "-j FOREIGN", "-j IN-TOO"]},
		{"table": "filter", "name": "IN4", "rules": ["-i eth1 --goto V4-ONLY", "-j LOG-DROP"]},
		{"table": "filter", "name": "LOG-DROP", "family": "both", "rules": ["-j LOG", "-j DROP"]},
		{"table": "filter", "name": "V4-ONLY", "rules": ["-j RETURN"]},
		{"table": "nat", "name": "IN-TOO", "rules": ["-j RETURN"]}]}}`))
	for ref, want := range map[dg.ItemRef][]dg.ItemRef{
		chainRef(items.FamilyIPv4, "filter", "IN"):  {chainRef(items.FamilyIPv4, "filter", "LOG-DROP")},
		chainRef(items.FamilyIPv6, "filter", "IN"):  {chainRef(items.FamilyIPv6, "filter", "LOG-DROP")},
		chainRef(items.FamilyIPv4, "filter", "IN4"): {chainRef(items.FamilyIPv4, "filter", "V4-ONLY"), chainRef(items.FamilyIPv4, "filter", "LOG-DROP")},
	} {
		got, ok := g.Get(ref)
		if !ok {
			t.Fatalf("%s not rendered", ref)
		}
		if deps := got.(*items.IptablesChain).Deps; !slices.Equal(deps, want) {
			t.Errorf("%s depends on %v, want %v", ref, deps, want)
		}
	}
}

// Sysctl keys of interfaces whose name has a dot get the slash sysctl(8)
// uses, and depend on the interface.
func TestRenderSysctlKeys(t *testing.T) {
	g := mustRender(t, parse(t, `{"version": 1,
		"interfaces": [{"name": "br0", "type": "bridge"}, {"name": "br0.7", "type": "vlan", "vlan": {"parent": "br0", "id": 7}}],
		"sysctls": {"net.ipv4.conf.br0.7.rp_filter": "2", "net.ipv4.conf.br0.rp_filter": "1", "net.core.somaxconn": "4096"}}`))
	want := map[string][]dg.ItemRef{
		"net.ipv4.conf.br0/7.rp_filter": {items.InterfaceRef("br0.7")},
		"net.ipv4.conf.br0.rp_filter":   {items.InterfaceRef("br0")},
		"net.core.somaxconn":            nil,
	}
	for key, deps := range want {
		ref := dg.ItemRef{Type: items.TypeSysctl, Name: key}
		if !g.Contains(ref) {
			t.Errorf("%s missing", ref)
			continue
		}
		var got []dg.ItemRef
		for _, d := range g.Dependencies(ref) {
			got = append(got, d.RequiredItem)
		}
		if !slices.Equal(got, deps) {
			t.Errorf("%s depends on %v, want %v", key, got, deps)
		}
	}
}

// A point-to-point address renders with its peer, and a route through
// the peer finds it: the peer's prefix is on the link (GwAddress, the
// carrier link); a route from the address depends on it by its name.
func TestRenderPointToPoint(t *testing.T) {
	g := mustRender(t, parse(t, `{"version": 1, "interfaces": [
		{"name": "ppp0", "type": "physical", "addresses": ["10.9.0.1 peer 10.9.0.2/32"]}],
		"routes": [{"to": "10.2.0.0/16", "via": "10.9.0.2", "src": "10.9.0.1"}]}`))
	a := only[*items.Address](t, g)
	if a.Prefix != mustPrefix("10.9.0.1/32") || a.Peer != netip.MustParseAddr("10.9.0.2") || a.Name() != "ppp0/10.9.0.1/32" {
		t.Errorf("rendered %s", a)
	}
	r := only[*items.Route](t, g)
	if r.GwAddress != a.Name() || r.CarrierLink != "ppp0" {
		t.Errorf("rendered %+v, want GwAddress %s on ppp0", *r, a.Name())
	}
}
