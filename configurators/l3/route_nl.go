package l3

import (
	"net"
	"net/netip"

	"github.com/netagent/netagent/items"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netlink/nl"
	"golang.org/x/sys/unix"
)

// afOf returns the address family number of an items.Family.
func afOf(f items.Family) uint8 {
	if f == items.FamilyIPv6 {
		return unix.AF_INET6
	}
	return unix.AF_INET
}

// familyOfAF is the inverse of afOf (0 for other families).
func familyOfAF(af int) items.Family {
	switch af {
	case unix.AF_INET:
		return items.FamilyIPv4
	case unix.AF_INET6:
		return items.FamilyIPv6
	}
	return 0
}

// rtnOf maps a route kind to its rtm_type.
func rtnOf(k items.RouteType) uint8 {
	switch k {
	case items.RouteBlackhole:
		return unix.RTN_BLACKHOLE
	case items.RouteUnreachable:
		return unix.RTN_UNREACHABLE
	case items.RouteProhibit:
		return unix.RTN_PROHIBIT
	}
	return unix.RTN_UNICAST
}

// kindOfRTN is the inverse of rtnOf; ok is false for the types netagent
// does not manage (local, broadcast, throw, ...).
func kindOfRTN(t int) (items.RouteType, bool) {
	switch t {
	case unix.RTN_UNICAST:
		return items.RouteUnicast, true
	case unix.RTN_BLACKHOLE:
		return items.RouteBlackhole, true
	case unix.RTN_UNREACHABLE:
		return items.RouteUnreachable, true
	case unix.RTN_PROHIBIT:
		return items.RouteProhibit, true
	}
	return 0, false
}

// routeRequest builds an RTM_NEWROUTE or RTM_DELROUTE message for r with
// netagent's protocol. A delete names only the route's identity (table,
// dst, metric) and the protocol, with scope "nowhere" and type unspec so
// that the kernel matches any scope and type, and only routes carrying
// RouteProtocol (both fib_table_delete and ip6_route_del compare the
// protocol when one is given).
func routeRequest(msgType uint16, flags int, r *items.Route, oif int) *nl.NetlinkRequest {
	req := newRequest(msgType, flags)
	table := r.TableID()
	msg := nl.NewRtDelMsg()
	msg.Family = afOf(r.Family())
	msg.Dst_len = uint8(r.Dst.Bits())
	msg.Protocol = items.RouteProtocol
	msg.Table = unix.RT_TABLE_UNSPEC
	if table < 256 {
		msg.Table = uint8(table)
	}
	if msgType != unix.RTM_DELROUTE {
		msg.Scope = uint8(r.Scope)
		msg.Type = rtnOf(r.Kind)
	}
	req.AddData(msg)
	req.AddData(nl.NewRtAttr(unix.RTA_TABLE, nl.Uint32Attr(table)))
	if r.Dst.Bits() > 0 {
		req.AddData(nl.NewRtAttr(unix.RTA_DST, r.Dst.Addr().AsSlice()))
	}
	if m := r.EffectiveMetric(); m > 0 {
		req.AddData(nl.NewRtAttr(unix.RTA_PRIORITY, nl.Uint32Attr(m)))
	}
	if msgType == unix.RTM_DELROUTE {
		return req
	}
	if r.Gw.IsValid() {
		req.AddData(nl.NewRtAttr(unix.RTA_GATEWAY, r.Gw.AsSlice()))
	}
	if oif > 0 {
		req.AddData(nl.NewRtAttr(unix.RTA_OIF, nl.Uint32Attr(uint32(oif))))
	}
	if r.Src.IsValid() {
		req.AddData(nl.NewRtAttr(unix.RTA_PREFSRC, r.Src.AsSlice()))
	}
	return req
}

// addrOf converts a kernel address of the given family; the zero Addr for
// nil.
func addrOf(ip net.IP, f items.Family) netip.Addr {
	if ip == nil {
		return netip.Addr{}
	}
	if f == items.FamilyIPv4 {
		ip = ip.To4()
	}
	a, _ := netip.AddrFromSlice(ip)
	return a
}

// prefixOf converts a kernel prefix; nil is the default route of f.
func prefixOf(n *net.IPNet, f items.Family) netip.Prefix {
	if n == nil {
		if f == items.FamilyIPv6 {
			return netip.PrefixFrom(netip.IPv6Unspecified(), 0)
		}
		return netip.PrefixFrom(netip.IPv4Unspecified(), 0)
	}
	bits, _ := n.Mask.Size()
	return netip.PrefixFrom(addrOf(n.IP, f), bits)
}

// routeIdentity is the Name of the item a kernel route of this identity
// would be: "<table> <dst> metric <metric>".
func routeIdentity(r *netlink.Route) string {
	f := familyOfAF(r.Family)
	it := items.Route{Dst: prefixOf(r.Dst, f), Table: uint32(r.Table), Metric: uint32(r.Priority)}
	return it.Name()
}

// routeFromKernel converts a kernel route into an item; ok is false for
// routes an item cannot describe (multipath, a tos, another type). hint is
// the intended item of the same name, or nil: where it leaves a field to
// the kernel, the field is read back as the hint has it (see ReadBack).
func routeFromKernel(r *netlink.Route, names map[int]string, hint *items.Route) (*items.Route, bool) {
	f := familyOfAF(r.Family)
	kind, ok := kindOfRTN(r.Type)
	if f == 0 || !ok || r.Tos != 0 || len(r.MultiPath) > 0 {
		return nil, false
	}
	it := &items.Route{
		Dst:    prefixOf(r.Dst, f),
		Gw:     addrOf(r.Gw, f),
		Dev:    names[r.LinkIndex],
		Table:  uint32(r.Table),
		Metric: uint32(r.Priority),
		Scope:  items.Scope(r.Scope),
		Src:    addrOf(r.Src, f),
		Kind:   kind,
	}
	if kind != items.RouteUnicast {
		it.Dev = "" // IPv6 attaches reject routes to lo
	}
	applyRouteHint(it, hint)
	return it, true
}

// applyRouteHint reads back the fields hint leaves to the kernel as hint
// has them, and copies the fields that only shape dependencies.
func applyRouteHint(it, hint *items.Route) {
	if hint == nil {
		return
	}
	if hint.Dev == "" {
		it.Dev = "" // the kernel resolved the gateway's device
	}
	if it.Family() == items.FamilyIPv6 {
		it.Scope = hint.Scope // IPv6 routes have no scope: always "global"
	}
	if hint.TableID() == it.TableID() {
		it.Table = hint.Table
	}
	if hint.EffectiveMetric() == it.EffectiveMetric() {
		it.Metric = hint.Metric
	}
	it.CarrierLink, it.GwAddress, it.Deps = hint.CarrierLink, hint.GwAddress, hint.Deps
}

// routeMetric returns the RTA_PRIORITY of a route message payload (0 if
// none).
func routeMetric(m []byte) uint32 {
	if len(m) < unix.SizeofRtMsg {
		return 0
	}
	attrs, err := nl.ParseRouteAttr(m[unix.SizeofRtMsg:])
	if err != nil {
		return 0
	}
	for _, a := range attrs {
		if a.Attr.Type == unix.RTA_PRIORITY && len(a.Value) >= 4 {
			return nl.NativeEndian().Uint32(a.Value)
		}
	}
	return 0
}

// restoreRequest turns the kernel's description of a deleted route (an
// echoed RTM_DELROUTE payload) into the request that adds it again, as
// `ip route restore` does; only the onlink flag of rtm_flags is kept (the
// kernel refuses "dead" or "linkdown" in a request).
func restoreRequest(m []byte) *nl.NetlinkRequest {
	req := newRequest(unix.RTM_NEWROUTE, unix.NLM_F_CREATE|unix.NLM_F_EXCL)
	payload := append([]byte(nil), m...)
	if len(payload) >= unix.SizeofRtMsg {
		flags := nl.NativeEndian().Uint32(payload[8:12]) & unix.RTNH_F_ONLINK
		nl.NativeEndian().PutUint32(payload[8:12], flags)
	}
	req.AddRawData(payload)
	return req
}
