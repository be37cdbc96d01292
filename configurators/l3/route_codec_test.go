package l3

import (
	"reflect"
	"testing"

	"github.com/netagent/netagent/items"
	"github.com/vishvananda/netlink/nl"
	"golang.org/x/sys/unix"
)

// routeShapes is every route shape the intent can express (see
// intent.Route and items.Route): both families, default and host routes,
// table 0, main, 255, 256 and above, metrics, scopes, a source, each type,
// with and without a device and a gateway.
func routeShapes() []*items.Route {
	return []*items.Route{
		{Dst: pfx("0.0.0.0/0"), Gw: ip("10.0.0.1")},
		{Dst: pfx("0.0.0.0/0"), Gw: ip("10.0.0.1"), Dev: "up0", Metric: 100},
		{Dst: pfx("10.1.0.0/16"), Dev: "up0", Scope: items.ScopeLink},
		{Dst: pfx("10.2.0.0/16"), Dev: "up0", Scope: items.ScopeLink, Src: ip("10.0.0.2")},
		{Dst: pfx("192.0.2.7/32"), Dev: "up0", Scope: items.ScopeHost, Table: 100},
		{Dst: pfx("192.0.2.0/24"), Gw: ip("10.0.0.1"), Dev: "up0", Table: 1000, Metric: 5,
			Src: ip("10.0.0.2"), Scope: items.ScopeLink},
		{Dst: pfx("198.51.100.0/24"), Gw: ip("10.0.0.1"), Table: items.TableMain},
		{Dst: pfx("198.51.100.0/25"), Gw: ip("10.0.0.1"), Table: 255, Scope: items.ScopeSite},
		{Dst: pfx("198.51.100.128/25"), Gw: ip("10.0.0.1"), Table: 256},
		{Dst: pfx("198.51.101.0/24"), Gw: ip("10.0.0.1"), Table: 4294967295, Metric: 4294967295},
		{Dst: pfx("203.0.113.0/24"), Kind: items.RouteBlackhole},
		{Dst: pfx("203.0.114.0/24"), Kind: items.RouteUnreachable, Table: 300, Metric: 7},
		{Dst: pfx("203.0.115.0/24"), Kind: items.RouteProhibit, Metric: 10},
		{Dst: pfx("::/0"), Gw: ip("2001:db8::1")},
		{Dst: pfx("::/0"), Gw: ip("fe80::1"), Dev: "up0", Metric: 1024},
		{Dst: pfx("2001:db8:1::/48"), Dev: "up0"},
		{Dst: pfx("2001:db8:2::/48"), Gw: ip("2001:db8::1"), Dev: "up0", Table: 100, Metric: 100,
			Src: ip("2001:db8::2")},
		{Dst: pfx("2001:db8:3::1/128"), Gw: ip("2001:db8::1"), Table: 70000},
		{Dst: pfx("2001:db8:4::/48"), Kind: items.RouteBlackhole, Table: 256},
		{Dst: pfx("2001:db8:5::/48"), Kind: items.RouteUnreachable, Metric: 1},
		{Dst: pfx("2001:db8:6::/48"), Kind: items.RouteProhibit},
		// onlink, mtu, pref
		{Dst: pfx("10.3.0.0/16"), Gw: ip("192.0.2.1"), Dev: "up0", OnLink: true, MTU: 1400},
		{Dst: pfx("2001:db8:7::/48"), Gw: ip("2001:db8:ff::1"), Dev: "up1", OnLink: true, Pref: items.RoutePrefHigh, MTU: 1280},
		{Dst: pfx("2001:db8:8::/48"), Dev: "up0", Pref: items.RoutePrefLow},
		{Dst: pfx("203.0.116.0/24"), Kind: items.RouteBlackhole, MTU: 9000},
		// multipath: weights, onlink per nexthop, with and without devices
		{Dst: pfx("10.200.0.0/16"), Table: 100, Metric: 10, MTU: 1400, Nexthops: []items.Nexthop{
			{Gw: ip("10.0.0.1"), Dev: "up0", Weight: 1}, {Gw: ip("10.0.1.1"), Weight: 3},
			{Gw: ip("203.0.113.1"), Dev: "up1", Weight: 256, OnLink: true}, {Dev: "up1", Weight: 2}}},
		{Dst: pfx("0.0.0.0/0"), Src: ip("10.0.0.2"), Nexthops: []items.Nexthop{{Gw: ip("10.0.0.1")}, {Gw: ip("10.0.0.3")}}},
		{Dst: pfx("2001:db8:9::/48"), Pref: items.RoutePrefLow, Nexthops: []items.Nexthop{
			{Gw: ip("2001:db8::1"), Weight: 2}, {Gw: ip("fe80::1"), Dev: "up1", OnLink: true}}},
	}
}

// TestRouteCodecRoundTrip: every shape, encoded and written as the writer
// writes it, decodes to the same item, both with the codec's own parser
// (read-back) and through the fake kernel's independent parser and the
// netlink.Route adapter (the route batch's dumps); a delete of it names
// its identity and nothing else.
func TestRouteCodecRoundTrip(t *testing.T) {
	names := map[int]string{2: "up0", 3: "up1"}
	devs := routeDevs{"up0": 2, "up1": 3}
	for _, r := range routeShapes() {
		t.Run(r.String(), func(t *testing.T) {
			if err := r.Validate(); err != nil {
				t.Fatal(err)
			}
			enc := encodeRoute(r, devs)
			add := payload(enc.request(unix.RTM_NEWROUTE, unix.NLM_F_CREATE))
			m, err := parseRouteMsg(add)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(m, enc) {
				t.Errorf("wire round trip:\n got %+v\nwant %+v", m, enc)
			}
			if m.Protocol != items.RouteProtocol || m.Table != r.TableID() || m.Priority != r.EffectiveMetric() {
				t.Errorf("protocol, table, metric = %d, %d, %d", m.Protocol, m.Table, m.Priority)
			}
			wantHdrTable := uint8(unix.RT_TABLE_UNSPEC)
			if r.TableID() < 256 {
				wantHdrTable = uint8(r.TableID())
			}
			if h := nl.DeserializeRtMsg(add); h.Table != wantHdrTable {
				t.Errorf("rtm_table = %d, want %d", h.Table, wantHdrTable)
			}
			checkDecoded(t, "codec", m, names, r)

			k, err := parseRouteRequest(add)
			if err != nil {
				t.Fatal(err)
			}
			viaLib := routeMsgOf(&k.Route)
			viaLib.Pref, viaLib.HasPref = k.Pref, k.HasPref // netlink.Route has no RTA_PREF
			checkDecoded(t, "netlink.Route", viaLib, names, r)
			if id := routeIdentity(&k.Route); id != r.Name() {
				t.Errorf("routeIdentity = %q, want %q", id, r.Name())
			}
			dumped, err := parseRouteMsg(dumpEntry(k))
			if err != nil {
				t.Fatal(err)
			}
			checkDecoded(t, "the fake's dump entry", dumped, names, r)

			del, err := parseRouteMsg(payload(enc.request(unix.RTM_DELROUTE, 0)))
			if err != nil {
				t.Fatal(err)
			}
			if del.identity() != r.Name() || del.Protocol != items.RouteProtocol ||
				del.Gw.IsValid() || del.OIF != 0 || del.PrefSrc.IsValid() || len(del.Nexthops) > 0 || del.MTU != 0 || del.HasPref ||
				del.Scope != unix.RT_SCOPE_NOWHERE || del.Type != unix.RTN_UNSPEC {
				t.Errorf("delete %+v, want only the identity %q and the protocol", del, r.Name())
			}
		})
	}
}

func checkDecoded(t *testing.T, via string, m routeMsg, names map[int]string, want *items.Route) {
	t.Helper()
	got, ok := decodeRoute(m, names)
	if !ok || !got.Equal(want) {
		t.Errorf("%s: decoded %v (%v), want %v", via, got, ok, want)
		return
	}
	if m.identity() != want.Name() {
		t.Errorf("%s: identity %q, want %q", via, m.identity(), want.Name())
	}
}

// TestRouteCodecRefuses: messages an item cannot describe decode to
// nothing, and rtm_table is read when RTA_TABLE is absent.
func TestRouteCodecRefuses(t *testing.T) {
	base := encodeRoute(&items.Route{Dst: pfx("10.9.0.0/16"), Gw: ip("10.0.0.1"), Dev: "up0"}, routeDevs{"up0": 2})
	for name, mut := range map[string]func(*routeMsg){
		"tos":          func(m *routeMsg) { m.Tos = 4 },
		"one nexthop":  func(m *routeMsg) { m.Nexthops = []routeNexthop{{OIF: 2}} },
		"other things": func(m *routeMsg) { m.Other = true },
		"local":        func(m *routeMsg) { m.Type = unix.RTN_LOCAL },
		"throw":        func(m *routeMsg) { m.Type = unix.RTN_THROW },
		"family":       func(m *routeMsg) { m.Family = unix.AF_BRIDGE },
	} {
		m := base
		mut(&m)
		if got, ok := decodeRoute(m, nil); ok {
			t.Errorf("%s: decoded %v, want refused", name, got)
		}
	}

	// What no item holds is seen on the wire: a nexthop object, an
	// encapsulation, a metric besides the MTU, a nexthop attribute besides
	// its gateway; the kernel's linkdown flags are not read.
	for name, attr := range map[string]*nl.RtAttr{
		"nexthop object": nl.NewRtAttr(rtaNHID, nl.Uint32Attr(5)),
		"encap":          nl.NewRtAttr(unix.RTA_ENCAP, []byte{0, 0, 0, 0}),
		"advmss":         metricsAttr(unix.RTAX_ADVMSS, 1400),
		"nexthop realm":  nl.NewRtAttr(unix.RTA_MULTIPATH, hopWith(nl.NewRtAttr(unix.RTA_FLOW, nl.Uint32Attr(1)))),
	} {
		req := base.request(unix.RTM_NEWROUTE, 0)
		req.AddData(attr)
		if m, err := parseRouteMsg(payload(req)); err != nil || !m.Other {
			t.Errorf("%s: %+v, %v", name, m, err)
		}
	}
	linkdown := base
	linkdown.Flags |= unix.RTNH_F_LINKDOWN | unix.RTNH_F_DEAD
	if got, ok := decodeRoute(linkdown, map[int]string{2: "up0"}); !ok || got.OnLink {
		t.Errorf("linkdown route: %v (%v)", got, ok)
	}

	// Only the header's table: what an older writer may send.
	hdr := nl.NewRtMsg()
	hdr.Family, hdr.Table, hdr.Type = unix.AF_INET, 100, unix.RTN_UNICAST
	m, err := parseRouteMsg(hdr.Serialize())
	if err != nil || m.Table != 100 || m.identity() != "table 100 0.0.0.0/0 metric 0" {
		t.Errorf("rtm_table only: %+v %q, %v", m, m.identity(), err)
	}
	if _, err := parseRouteMsg(make([]byte, 3)); err == nil {
		t.Error("a short message parsed")
	}
}

func metricsAttr(typ int, v uint32) *nl.RtAttr {
	a := nl.NewRtAttr(unix.RTA_METRICS, nil)
	a.AddRtAttr(typ, nl.Uint32Attr(v))
	return a
}

// hopWith is an RTA_MULTIPATH payload of two nexthops, the first with attr.
func hopWith(attr *nl.RtAttr) []byte {
	b := encodeNexthops([]routeNexthop{{OIF: 2}, {OIF: 3}})
	a := attr.Serialize()
	nl.NativeEndian().PutUint16(b[0:2], uint16(unix.SizeofRtNexthop+len(a)))
	return append(append(append([]byte{}, b[:unix.SizeofRtNexthop]...), a...), b[unix.SizeofRtNexthop:]...)
}
