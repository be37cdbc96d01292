package l3

import (
	"bytes"
	"net"
	"net/netip"
	"testing"

	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/items"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netlink/nl"
	"golang.org/x/sys/unix"
)

// payload returns a request's message without its netlink header: the
// layout the kernel uses for its own notifications and dumps.
func payload(req *nl.NetlinkRequest) []byte { return req.Serialize()[unix.SizeofNlMsghdr:] }

func TestBroadcastOf(t *testing.T) {
	for in, want := range map[string]string{
		"192.0.2.10/24": "192.0.2.255", "10.1.2.3/8": "10.255.255.255", "172.16.5.1/20": "172.16.15.255",
	} {
		if got := broadcastOf(netip.MustParsePrefix(in)).String(); got != want {
			t.Errorf("broadcastOf(%s) = %s, want %s", in, got, want)
		}
	}
}

func TestRouteKindsRoundTrip(t *testing.T) {
	for _, k := range []items.RouteType{items.RouteUnicast, items.RouteBlackhole, items.RouteUnreachable, items.RouteProhibit} {
		if got, ok := kindOfRTN(int(rtnOf(k))); !ok || got != k {
			t.Errorf("kind %s: round trip gives %s, %v", k, got, ok)
		}
	}
	if _, ok := kindOfRTN(unix.RTN_LOCAL); ok {
		t.Error("local routes are not managed")
	}
}

func TestRouteRequest(t *testing.T) {
	r := &items.Route{Dst: netip.MustParsePrefix("192.0.2.0/24"), Gw: netip.MustParseAddr("10.0.0.1"), Dev: "up0",
		Table: 1000, Metric: 5, Src: netip.MustParseAddr("10.0.0.2"), Scope: items.ScopeLink}
	add := payload(routeRequest(unix.RTM_NEWROUTE, unix.NLM_F_CREATE, r, routeDevs{"up0": 7}))
	msg := nl.DeserializeRtMsg(add)
	if msg.Protocol != items.RouteProtocol || msg.Dst_len != 24 || msg.Scope != unix.RT_SCOPE_LINK || msg.Type != unix.RTN_UNICAST || msg.Table != unix.RT_TABLE_UNSPEC {
		t.Errorf("add header: %+v", msg.RtMsg)
	}
	attrs := attrMap(t, add[unix.SizeofRtMsg:])
	for typ, want := range map[uint16][]byte{
		unix.RTA_TABLE: nl.Uint32Attr(1000), unix.RTA_DST: {192, 0, 2, 0}, unix.RTA_PRIORITY: nl.Uint32Attr(5),
		unix.RTA_GATEWAY: {10, 0, 0, 1}, unix.RTA_OIF: nl.Uint32Attr(7), unix.RTA_PREFSRC: {10, 0, 0, 2},
	} {
		if !bytes.Equal(attrs[typ], want) {
			t.Errorf("add attribute %d = %v, want %v", typ, attrs[typ], want)
		}
	}
	del := payload(routeRequest(unix.RTM_DELROUTE, 0, r, routeDevs{"up0": 7}))
	msg = nl.DeserializeRtMsg(del)
	attrs = attrMap(t, del[unix.SizeofRtMsg:])
	if msg.Protocol != items.RouteProtocol || msg.Scope != unix.RT_SCOPE_NOWHERE || msg.Type != 0 ||
		attrs[unix.RTA_GATEWAY] != nil || attrs[unix.RTA_OIF] != nil {
		t.Errorf("a delete must name only the identity and the protocol: %+v %v", msg.RtMsg, attrs)
	}
	if routeMetric(add) != 5 {
		t.Errorf("routeMetric = %d, want 5", routeMetric(add))
	}
	// An IPv6 route of metric 0 is sent with the kernel's 1024, so that a
	// delete never matches "any metric".
	v6 := &items.Route{Dst: netip.MustParsePrefix("2001:db8::/32"), Kind: items.RouteBlackhole}
	if got := routeMetric(payload(routeRequest(unix.RTM_DELROUTE, 0, v6, nil))); got != items.IPv6DefaultMetric {
		t.Errorf("IPv6 delete metric = %d", got)
	}
}

func attrMap(t *testing.T, b []byte) map[uint16][]byte {
	t.Helper()
	attrs, err := nl.ParseRouteAttr(b)
	if err != nil {
		t.Fatal(err)
	}
	m := make(map[uint16][]byte)
	for _, a := range attrs {
		m[a.Attr.Type] = a.Value
	}
	return m
}

func TestRouteFromKernelHints(t *testing.T) {
	names := map[int]string{1: "lo", 2: "up0"}
	deps := []dg.ItemRef{{Type: "address", Name: "up0/10.0.0.2/24"}}
	cases := []struct {
		name string
		k    netlink.Route
		hint *items.Route
		want items.Route
	}{{
		name: "IPv6 reject route on lo reads back without a device",
		k:    netlink.Route{Family: unix.AF_INET6, Dst: mustNet("2001:db8::/32"), Type: unix.RTN_BLACKHOLE, LinkIndex: 1, Table: 254, Priority: 1024},
		want: items.Route{Dst: netip.MustParsePrefix("2001:db8::/32"), Kind: items.RouteBlackhole, Table: 254, Metric: 1024},
	}, {
		name: "the device the kernel picked for a gateway, table 0, metric 0 and deps come from the hint",
		k:    netlink.Route{Family: unix.AF_INET6, Gw: net.ParseIP("2001:db8::1"), Type: unix.RTN_UNICAST, LinkIndex: 2, Table: 254, Priority: 1024},
		hint: &items.Route{Dst: netip.MustParsePrefix("::/0"), Gw: netip.MustParseAddr("2001:db8::1"), Scope: items.ScopeLink, CarrierLink: "up0", Deps: deps},
		want: items.Route{Dst: netip.MustParsePrefix("::/0"), Gw: netip.MustParseAddr("2001:db8::1"), Scope: items.ScopeLink, CarrierLink: "up0", Deps: deps},
	}, {
		name: "without a hint the device is read",
		k:    netlink.Route{Family: unix.AF_INET, Gw: net.IPv4(10, 0, 0, 1).To4(), Type: unix.RTN_UNICAST, LinkIndex: 2, Table: 100},
		want: items.Route{Dst: netip.MustParsePrefix("0.0.0.0/0"), Gw: netip.MustParseAddr("10.0.0.1"), Dev: "up0", Table: 100},
	}}
	for _, c := range cases {
		got, ok := routeFromKernel(&c.k, names, c.hint)
		if !ok || !got.Equal(&c.want) || got.Table != c.want.Table || got.Metric != c.want.Metric {
			t.Errorf("%s:\n got %v (%v)\nwant %v", c.name, got, ok, &c.want)
		}
	}
	for _, k := range []netlink.Route{
		{Family: unix.AF_INET, Type: unix.RTN_UNICAST, MultiPath: []*netlink.NexthopInfo{{LinkIndex: 2}}},
		{Family: unix.AF_INET, Type: unix.RTN_UNICAST, Tos: 4},
		{Family: unix.AF_INET, Type: unix.RTN_LOCAL},
	} {
		if _, ok := routeFromKernel(&k, names, nil); ok {
			t.Errorf("%v read back, want left out", k)
		}
	}
}

func mustNet(s string) *net.IPNet {
	_, n, err := net.ParseCIDR(s)
	if err != nil {
		panic(err)
	}
	return n
}

func TestRuleFromKernel(t *testing.T) {
	k := ruleMsg{Family: unix.AF_INET, Prio: 100, Table: 100, Action: frActToTbl, Mark: 1, Mask: 0xffffffff,
		SrcLen: 8, Src: netip.MustParseAddr("10.0.0.0")}
	hint := &items.Rule{Priority: 100, Family: items.FamilyIPv4, From: netip.MustParsePrefix("10.0.0.0/8"), Mark: 1, Table: 100,
		Deps: []dg.ItemRef{items.InterfaceRef("up0")}}
	got, ok := decodeRule(k, hint)
	if !ok || !got.Equal(hint) || got.Mask != 0 {
		t.Errorf("got %+v, want %+v (the default mask spelled as the hint spells it)", got, hint)
	}
	k.Tos = 4
	if _, ok := decodeRule(k, nil); ok {
		t.Error("a rule with a tos selector read back")
	}
}

func TestDeleteMatches(t *testing.T) {
	req := encodeRule(&items.Rule{Priority: 300, Family: items.FamilyIPv4, From: netip.MustParsePrefix("10.0.0.0/8"), Table: 100})
	rule := func(f func(r *items.Rule)) *ruleMsg {
		r := &items.Rule{Priority: 300, Family: items.FamilyIPv4, From: netip.MustParsePrefix("10.0.0.0/8"), Table: 100}
		f(r)
		m := encodeRule(r)
		return &m
	}
	for name, c := range map[string]struct {
		k    *ruleMsg
		want bool
	}{
		"itself":           {rule(func(*items.Rule) {}), true},
		"with an iif":      {rule(func(r *items.Rule) { r.IifName = "up0" }), true},
		"with a mark":      {rule(func(r *items.Rule) { r.Mark = 1 }), true},
		"with ports":       {rule(func(r *items.Rule) { r.IPProto, r.DPort = 6, items.PortRange{Start: 80, End: 80} }), true},
		"inverted":         {rule(func(r *items.Rule) { r.Invert = true }), true},
		"another source":   {rule(func(r *items.Rule) { r.From = netip.MustParsePrefix("10.1.0.0/16") }), false},
		"no source":        {rule(func(r *items.Rule) { r.From = netip.Prefix{} }), false},
		"another table":    {rule(func(r *items.Rule) { r.Table = 101 }), false},
		"another priority": {rule(func(r *items.Rule) { r.Priority = 301 }), false},
		"another action":   {rule(func(r *items.Rule) { r.Table, r.Action = 0, items.RuleBlackhole }), false},
	} {
		if got := deleteMatches(&req, c.k); got != c.want {
			t.Errorf("%s: deleteMatches = %v, want %v", name, got, c.want)
		}
	}
}

func TestAddrMessageRoundTrip(t *testing.T) {
	a := &items.Address{Dev: "up0", Prefix: netip.MustParsePrefix("192.0.2.10/24"), Label: "up0:web", Scope: items.ScopeLink}
	k, ok := parseAddr(payload(addrRequest(unix.RTM_NEWADDR, unix.NLM_F_CREATE, a, 3)))
	if !ok || k.index != 3 || k.prefix != a.Prefix || k.label != "up0:web" || k.scope != uint8(items.ScopeLink) || !k.owned() {
		t.Errorf("parsed %+v", k)
	}
	if got := addrItemOf(&k, "up0", nil); !got.Equal(a) {
		t.Errorf("item %v, want %v", got, a)
	}
	v6 := &items.Address{Dev: "up0", Prefix: netip.MustParsePrefix("2001:db8::1/64")}
	k, ok = parseAddr(payload(addrRequest(unix.RTM_NEWADDR, unix.NLM_F_CREATE, v6, 3)))
	if !ok || k.prefix != v6.Prefix || k.flags&unix.IFA_F_NODAD == 0 || !k.owned() {
		t.Errorf("parsed IPv6 %+v", k)
	}
	// The default label is the interface name, read back as "" unless the
	// intent spelled it out.
	def := kernelAddr{prefix: netip.MustParsePrefix("192.0.2.11/24"), label: "up0"}
	if got := addrItemOf(&def, "up0", nil); got.Label != "" {
		t.Errorf("default label read back as %q", got.Label)
	}
	if got := addrItemOf(&def, "up0", &items.Address{Label: "up0"}); got.Label != "up0" {
		t.Errorf("explicit default label read back as %q", got.Label)
	}
}

func TestNeighMessageRoundTrip(t *testing.T) {
	n := &items.Neighbor{Dev: "up0", IP: netip.MustParseAddr("2001:db8::5"), MAC: net.HardwareAddr{2, 0, 0, 0, 0, 5}}
	k, ok := parseNeigh(payload(neighRequest(unix.RTM_NEWNEIGH, unix.NLM_F_CREATE, n, 4)))
	if !ok || k.index != 4 || k.ip != n.IP || !bytes.Equal(k.mac, n.MAC) || !k.owned() || k.state != netlink.NUD_PERMANENT || !k.static() {
		t.Errorf("parsed %+v", k)
	}
	learned := kernelNeigh{state: netlink.NUD_STALE}
	if learned.static() {
		t.Error("a stale entry is the kernel's cache, not a static entry")
	}
}
