package l3

import (
	"bytes"
	"net/netip"
	"testing"

	"github.com/netagent/netagent/items"
	"github.com/vishvananda/netlink/nl"
	"golang.org/x/sys/unix"
)

// legacyRouteRequest is routeMsg.request as it was written with the
// library's RtAttr, one allocation per attribute: the wire format the
// in-place encoder must keep byte for byte.
func legacyRouteRequest(m routeMsg, msgType uint16, flags int) *nl.NetlinkRequest {
	req := newRequest(msgType, flags)
	msg := nl.NewRtDelMsg()
	msg.Family, msg.Dst_len, msg.Tos, msg.Protocol, msg.Flags = m.Family, m.DstLen, m.Tos, m.Protocol, m.Flags
	msg.Table = unix.RT_TABLE_UNSPEC
	if m.Table < 256 {
		msg.Table = uint8(m.Table)
	}
	if msgType != unix.RTM_DELROUTE {
		msg.Scope, msg.Type = m.Scope, m.Type
	}
	req.AddData(msg)
	req.AddData(nl.NewRtAttr(unix.RTA_TABLE, nl.Uint32Attr(m.Table)))
	if m.DstLen > 0 {
		req.AddData(nl.NewRtAttr(unix.RTA_DST, m.Dst.AsSlice()))
	}
	if m.Priority > 0 {
		req.AddData(nl.NewRtAttr(unix.RTA_PRIORITY, nl.Uint32Attr(m.Priority)))
	}
	if msgType == unix.RTM_DELROUTE {
		return req
	}
	if m.Gw.IsValid() {
		req.AddData(nl.NewRtAttr(unix.RTA_GATEWAY, m.Gw.AsSlice()))
	}
	if m.OIF > 0 {
		req.AddData(nl.NewRtAttr(unix.RTA_OIF, nl.Uint32Attr(uint32(m.OIF))))
	}
	if m.PrefSrc.IsValid() {
		req.AddData(nl.NewRtAttr(unix.RTA_PREFSRC, m.PrefSrc.AsSlice()))
	}
	if len(m.Nexthops) > 0 {
		req.AddData(nl.NewRtAttr(unix.RTA_MULTIPATH, encodeNexthops(m.Nexthops)))
	}
	if m.MTU > 0 {
		metrics := nl.NewRtAttr(unix.RTA_METRICS, nil)
		metrics.AddRtAttr(unix.RTAX_MTU, nl.Uint32Attr(m.MTU))
		req.AddData(metrics)
	}
	if m.HasPref {
		req.AddData(nl.NewRtAttr(unix.RTA_PREF, []byte{m.Pref}))
	}
	return req
}

// The in-place route encoder writes exactly what the library's attributes
// wrote, for every kind of route netagent writes, add and delete alike;
// the whole request (header included) goes out as appendRequest frames it.
func TestRouteRequestWire(t *testing.T) {
	gw, gw6 := netip.MustParseAddr("192.0.2.1"), netip.MustParseAddr("2001:db8::1")
	devs := routeDevs{"up0": 2, "up1": 3}
	routes := []*items.Route{
		{Dst: netip.MustParsePrefix("10.0.0.0/24"), Gw: gw, Dev: "up0"},
		{Dst: netip.MustParsePrefix("0.0.0.0/0"), Gw: gw, Metric: 100, Table: 300, OnLink: true},
		{Dst: netip.MustParsePrefix("10.1.0.0/16"), Dev: "up0", Scope: items.ScopeLink, Src: netip.MustParseAddr("192.0.2.10"), MTU: 1400},
		{Dst: netip.MustParsePrefix("10.2.0.0/16"), Kind: items.RouteBlackhole, Table: 100},
		{Dst: netip.MustParsePrefix("2001:db8:1::/48"), Gw: gw6, Dev: "up1", Metric: 1024, Pref: items.RoutePrefHigh},
		{Dst: netip.MustParsePrefix("10.3.0.0/16"), Nexthops: []items.Nexthop{
			{Gw: gw, Dev: "up0", Weight: 2}, {Gw: netip.MustParseAddr("192.0.2.2"), Dev: "up1", OnLink: true}}},
	}
	for _, r := range routes {
		m := encodeRoute(r, devs)
		for _, c := range []struct {
			typ   uint16
			flags int
		}{
			{unix.RTM_NEWROUTE, unix.NLM_F_CREATE | unix.NLM_F_EXCL},
			{unix.RTM_NEWROUTE, unix.NLM_F_CREATE | unix.NLM_F_REPLACE},
			{unix.RTM_DELROUTE, unix.NLM_F_ECHO},
		} {
			want := legacyRouteRequest(m, c.typ, c.flags)
			got := m.request(c.typ, c.flags)
			got.Seq, want.Seq = 7, 7
			if w, g := want.Serialize(), appendRequest(nil, got); !bytes.Equal(w, g) {
				t.Errorf("%s, type %d:\n got %x\nwant %x", r, c.typ, g, w)
			}
		}
	}
}
