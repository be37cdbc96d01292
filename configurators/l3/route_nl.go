package l3

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"slices"

	"github.com/netagent/netagent/internal/nlattr"
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

// Route attribute numbers newer than golang.org/x/sys v0.13.0, and the
// wire values of RTA_PREF (ICMPV6_ROUTER_PREF_*).
const (
	rtaNHID     = 30 // RTA_NH_ID, Linux 5.3: a route using a nexthop object
	prefWireLow = 3
	prefWireMed = 0
	prefWireHi  = 1
)

// routeMsg is a route as rtnetlink carries it: the rtmsg header and the
// attributes netagent writes and reads. It is the one codec of routes:
// encodeRoute and decodeRoute map items.Route to and from it, request and
// parseRouteMsg map it to and from the wire, and routeMsgOf maps a route of
// a netlink.Handle dump to it, so each attribute is written and read in
// exactly one place.
type routeMsg struct {
	Family   uint8
	DstLen   uint8
	Tos      uint8
	Protocol uint8
	Scope    uint8
	Type     uint8 // rtm_type
	Flags    uint32
	// Table is RTA_TABLE, which holds every table; rtm_table holds only
	// those below 256 (RT_TABLE_UNSPEC above) and is read when RTA_TABLE
	// is absent.
	Table    uint32
	Dst      netip.Addr // RTA_DST; zero for a default route
	Gw       netip.Addr // RTA_GATEWAY
	OIF      int        // RTA_OIF; 0 for none
	Priority uint32     // RTA_PRIORITY (the metric); 0 for none
	PrefSrc  netip.Addr // RTA_PREFSRC
	// Nexthops is RTA_MULTIPATH: one rtnexthop each, with its gateway.
	Nexthops []routeNexthop
	MTU      uint32 // RTAX_MTU in RTA_METRICS; 0 for none
	// Pref is RTA_PREF as on the wire (ICMPV6_ROUTER_PREF_*); IPv6 only.
	Pref    uint8
	HasPref bool
	// Other is set when the route carries something no item describes: a
	// nexthop object, an encapsulation, a realm, a metric other than the
	// MTU, a nexthop attribute other than its gateway.
	Other bool
}

// routeNexthop is one rtnexthop of RTA_MULTIPATH.
type routeNexthop struct {
	Gw    netip.Addr // RTA_GATEWAY nested in the rtnexthop
	OIF   int        // rtnh_ifindex
	Hops  uint8      // rtnh_hops: the weight less one
	Flags uint8      // rtnh_flags
}

// routeDevs maps the devices a route names (its Dev, its nexthops') to
// their interface indexes.
type routeDevs map[string]int

// names is the inverse of d.
func (d routeDevs) names() map[int]string {
	out := make(map[int]string, len(d))
	for n, i := range d {
		out[i] = n
	}
	return out
}

// devsOf lists the devices of r, Dev first, each once.
func devsOf(r *items.Route) []string {
	var out []string
	if r.Dev != "" {
		out = append(out, r.Dev)
	}
	for _, n := range r.Nexthops {
		if n.Dev != "" && !slices.Contains(out, n.Dev) {
			out = append(out, n.Dev)
		}
	}
	return out
}

// encodeRoute is r as netagent writes it: with RouteProtocol, the
// effective table and metric, and the interface indexes of its devices
// from devs (0 for none).
func encodeRoute(r *items.Route, devs routeDevs) routeMsg {
	m := routeMsg{
		Family:   afOf(r.Family()),
		DstLen:   uint8(r.Dst.Bits()),
		Protocol: items.RouteProtocol,
		Scope:    uint8(r.Scope),
		Type:     rtnOf(r.Kind),
		Table:    r.TableID(),
		Gw:       r.Gw,
		OIF:      devs[r.Dev],
		Priority: r.EffectiveMetric(),
		PrefSrc:  r.Src,
		MTU:      r.MTU,
	}
	if r.Dev == "" {
		m.OIF = 0
	}
	if r.Dst.Bits() > 0 {
		m.Dst = r.Dst.Addr()
	}
	if r.OnLink {
		m.Flags |= unix.RTNH_F_ONLINK
	}
	for _, n := range r.Nexthops {
		hop := routeNexthop{Gw: n.Gw, Hops: uint8(n.EffectiveWeight() - 1)}
		if n.Dev != "" {
			hop.OIF = devs[n.Dev]
		}
		if n.OnLink {
			hop.Flags |= unix.RTNH_F_ONLINK
		}
		m.Nexthops = append(m.Nexthops, hop)
	}
	if r.Family() == items.FamilyIPv6 {
		m.Pref, m.HasPref = prefWire[r.Pref], true
	}
	return m
}

var prefWire = map[items.RoutePref]uint8{
	items.RoutePrefMedium: prefWireMed, items.RoutePrefLow: prefWireLow, items.RoutePrefHigh: prefWireHi,
}

// prefOfWire is the inverse of prefWire; the kernel takes any other value
// as medium.
func prefOfWire(v uint8) items.RoutePref {
	switch v {
	case prefWireLow:
		return items.RoutePrefLow
	case prefWireHi:
		return items.RoutePrefHigh
	}
	return items.RoutePrefMedium
}

// decodeRoute is the item m describes, its devices named by names; ok is
// false for routes an item cannot describe (another family, a tos, a type
// netagent does not manage, a nexthop object, an encapsulation, other
// metrics). A reject route has no device (IPv6 attaches them to lo). Only
// the onlink flag of rtm_flags and rtnh_flags is read: the kernel adds
// others (linkdown, dead) by itself.
func decodeRoute(m routeMsg, names map[int]string) (*items.Route, bool) {
	it := new(items.Route)
	if !decodeRouteInto(&m, names, it) {
		return nil, false
	}
	return it, true
}

// decodeRouteInto is decodeRoute into *it (overwritten), so that a caller
// that may not keep the item need not allocate it.
func decodeRouteInto(m *routeMsg, names map[int]string, it *items.Route) bool {
	f := familyOfAF(int(m.Family))
	kind, ok := kindOfRTN(int(m.Type))
	if f == 0 || !ok || m.Tos != 0 || m.Other || len(m.Nexthops) == 1 {
		// The kernel never reports one nexthop; an item cannot hold it.
		return false
	}
	*it = items.Route{
		Dst:    m.prefix(),
		Gw:     m.Gw,
		Dev:    names[m.OIF],
		Table:  m.Table,
		Metric: m.Priority,
		Scope:  items.Scope(m.Scope),
		Src:    m.PrefSrc,
		Kind:   kind,
		OnLink: m.Flags&unix.RTNH_F_ONLINK != 0,
		MTU:    m.MTU,
	}
	if m.HasPref && f == items.FamilyIPv6 {
		it.Pref = prefOfWire(m.Pref)
	}
	if len(m.Nexthops) > 0 {
		it.Nexthops = make([]items.Nexthop, 0, len(m.Nexthops))
	}
	for _, h := range m.Nexthops {
		it.Nexthops = append(it.Nexthops, items.Nexthop{Gw: h.Gw, Dev: names[h.OIF],
			Weight: uint16(h.Hops) + 1, OnLink: h.Flags&unix.RTNH_F_ONLINK != 0})
	}
	if kind != items.RouteUnicast {
		it.Dev = ""
	}
	return true
}

// prefix is the destination: Dst/DstLen, or the default route of the
// family.
func (m routeMsg) prefix() netip.Prefix {
	dst := m.Dst
	if !dst.IsValid() {
		dst = netip.IPv4Unspecified()
		if m.Family == unix.AF_INET6 {
			dst = netip.IPv6Unspecified()
		}
	}
	return netip.PrefixFrom(dst, int(m.DstLen))
}

// identity is the Name of the item a route of m's identity would be:
// "<table> <dst> metric <metric>".
func (m routeMsg) identity() string {
	it := items.Route{Dst: m.prefix(), Table: m.Table, Metric: m.Priority}
	return it.Name()
}

// request builds an RTM_NEWROUTE or RTM_DELROUTE message of m. A delete
// names only the route's identity (table, dst, metric) and the protocol,
// with scope "nowhere" and type unspec so that the kernel matches any
// scope and type, and only routes carrying m's protocol (both
// fib_table_delete and ip6_route_del compare the protocol when one is
// given).
func (m routeMsg) request(msgType uint16, flags int) *nl.NetlinkRequest {
	req := newRequest(msgType, flags)
	req.AddData(rawData(m.appendPayload(make([]byte, 0, 128), msgType)))
	return req
}

// appendPayload appends the rtmsg and attributes of request's message to
// b: encoded in place, one allocation per request instead of one per
// attribute (the library's RtAttr), which counted at 100k routes.
func (m *routeMsg) appendPayload(b []byte, msgType uint16) []byte {
	table := uint8(unix.RT_TABLE_UNSPEC)
	if m.Table < 256 {
		table = uint8(m.Table)
	}
	scope, typ := uint8(unix.RT_SCOPE_NOWHERE), uint8(unix.RTN_UNSPEC)
	if msgType != unix.RTM_DELROUTE {
		scope, typ = m.Scope, m.Type
	}
	b = append(b, m.Family, m.DstLen, 0, m.Tos, table, m.Protocol, scope, typ)
	b = binary.NativeEndian.AppendUint32(b, m.Flags)
	b = appendU32Attr(b, unix.RTA_TABLE, m.Table)
	if m.DstLen > 0 {
		b = appendAddrAttr(b, unix.RTA_DST, m.Dst)
	}
	if m.Priority > 0 {
		b = appendU32Attr(b, unix.RTA_PRIORITY, m.Priority)
	}
	if msgType == unix.RTM_DELROUTE {
		return b
	}
	if m.Gw.IsValid() {
		b = appendAddrAttr(b, unix.RTA_GATEWAY, m.Gw)
	}
	if m.OIF > 0 {
		b = appendU32Attr(b, unix.RTA_OIF, uint32(m.OIF))
	}
	if m.PrefSrc.IsValid() {
		b = appendAddrAttr(b, unix.RTA_PREFSRC, m.PrefSrc)
	}
	if len(m.Nexthops) > 0 {
		b = appendAttr(b, unix.RTA_MULTIPATH, encodeNexthops(m.Nexthops))
	}
	if m.MTU > 0 {
		b = appendAttrHeader(b, unix.RTA_METRICS, 8)
		b = appendU32Attr(b, unix.RTAX_MTU, m.MTU)
	}
	if m.HasPref {
		b = appendAttr(b, unix.RTA_PREF, []byte{m.Pref})
	}
	return b
}

// appendAttrHeader appends the struct rtattr of an attribute whose value
// is n bytes long (the value follows).
func appendAttrHeader(b []byte, typ uint16, n int) []byte {
	b = binary.NativeEndian.AppendUint16(b, uint16(unix.SizeofRtAttr+n))
	return binary.NativeEndian.AppendUint16(b, typ)
}

// appendAttr appends an attribute, padded to 4 bytes.
func appendAttr(b []byte, typ uint16, v []byte) []byte {
	b = append(appendAttrHeader(b, typ, len(v)), v...)
	for len(b)%unix.RTA_ALIGNTO != 0 {
		b = append(b, 0)
	}
	return b
}

func appendU32Attr(b []byte, typ uint16, v uint32) []byte {
	return binary.NativeEndian.AppendUint32(appendAttrHeader(b, typ, 4), v)
}

// appendAddrAttr appends an address attribute: 4 bytes for IPv4, 16 for
// IPv6.
func appendAddrAttr(b []byte, typ uint16, a netip.Addr) []byte {
	if a.Is4() {
		v := a.As4()
		return append(appendAttrHeader(b, typ, 4), v[:]...)
	}
	v := a.As16()
	return append(appendAttrHeader(b, typ, 16), v[:]...)
}

// encodeNexthops is the payload of RTA_MULTIPATH: a struct rtnexthop per
// nexthop, each followed by its RTA_GATEWAY, aligned to 4 bytes.
func encodeNexthops(hops []routeNexthop) []byte {
	ne := nl.NativeEndian()
	var b []byte
	for _, h := range hops {
		var attrs []byte
		if h.Gw.IsValid() {
			attrs = nl.NewRtAttr(unix.RTA_GATEWAY, h.Gw.AsSlice()).Serialize()
		}
		hop := make([]byte, unix.SizeofRtNexthop, unix.SizeofRtNexthop+len(attrs))
		ne.PutUint16(hop[0:2], uint16(unix.SizeofRtNexthop+len(attrs)))
		hop[2], hop[3] = h.Flags, h.Hops
		ne.PutUint32(hop[4:8], uint32(h.OIF))
		b = append(b, append(hop, attrs...)...)
		for len(b)%4 != 0 {
			b = append(b, 0)
		}
	}
	return b
}

// decodeNexthops parses RTA_MULTIPATH; other is set when a nexthop carries
// an attribute besides its gateway.
func decodeNexthops(b []byte) (hops []routeNexthop, other bool, err error) {
	ne := nl.NativeEndian()
	for len(b) >= unix.SizeofRtNexthop {
		n := int(ne.Uint16(b[0:2]))
		if n < unix.SizeofRtNexthop || n > len(b) {
			return nil, false, fmt.Errorf("rtnexthop of %d bytes: %w", n, unix.EINVAL)
		}
		h := routeNexthop{Flags: b[2], Hops: b[3], OIF: int(ne.Uint32(b[4:8]))}
		attrs, perr := nl.ParseRouteAttr(b[unix.SizeofRtNexthop:n])
		if perr != nil {
			return nil, false, fmt.Errorf("rtnexthop attributes: %w", perr)
		}
		for _, a := range attrs {
			if a.Attr.Type == unix.RTA_GATEWAY {
				h.Gw = addrOfBytes(a.Value)
			} else {
				other = true
			}
		}
		hops = append(hops, h)
		b = b[min((n+3)&^3, len(b)):]
	}
	return hops, other, nil
}

// decodeMetrics reads RTAX_MTU from RTA_METRICS; other is set for any
// other metric.
func decodeMetrics(b []byte) (mtu uint32, other bool, err error) {
	attrs, err := nl.ParseRouteAttr(b)
	if err != nil {
		return 0, false, fmt.Errorf("route metrics: %w", err)
	}
	for _, a := range attrs {
		if a.Attr.Type == unix.RTAX_MTU && len(a.Value) >= 4 {
			mtu = nl.NativeEndian().Uint32(a.Value)
		} else {
			other = true
		}
	}
	return mtu, other, nil
}

// parseRouteMsg is the inverse of request: it decodes a route message
// payload (rtmsg and attributes, no netlink header), as the kernel sends
// in dumps, notifications and echoes.
func parseRouteMsg(b []byte) (routeMsg, error) {
	var m routeMsg
	err := parseRouteMsgInto(b, &m)
	return m, err
}

// parseRouteMsgInto is parseRouteMsg into *m (reset first), walking the
// attributes in place: a read-back of many routes allocates nothing per
// route but its nexthops.
func parseRouteMsgInto(b []byte, m *routeMsg) error {
	*m = routeMsg{}
	if len(b) < unix.SizeofRtMsg {
		return fmt.Errorf("route message of %d bytes: %w", len(b), unix.EINVAL)
	}
	ne := nl.NativeEndian()
	m.Family, m.DstLen, m.Tos, m.Table = b[0], b[1], b[3], uint32(b[4])
	m.Protocol, m.Scope, m.Type, m.Flags = b[5], b[6], b[7], ne.Uint32(b[8:12])
	u32 := func(v []byte) uint32 {
		if len(v) < 4 {
			return 0
		}
		return ne.Uint32(v)
	}
	a := nlattr.Iter{B: b[unix.SizeofRtMsg:]}
	for a.Next() {
		v := a.Val
		switch a.RawType {
		case unix.RTA_TABLE:
			m.Table = u32(v)
		case unix.RTA_DST:
			m.Dst = addrOfBytes(v)
		case unix.RTA_GATEWAY:
			m.Gw = addrOfBytes(v)
		case unix.RTA_OIF:
			m.OIF = int(u32(v))
		case unix.RTA_PRIORITY:
			m.Priority = u32(v)
		case unix.RTA_PREFSRC:
			m.PrefSrc = addrOfBytes(v)
		case unix.RTA_MULTIPATH:
			hops, other, err := decodeNexthops(v)
			if err != nil {
				return err
			}
			m.Nexthops, m.Other = hops, m.Other || other
		case unix.RTA_METRICS:
			mtu, other, err := decodeMetrics(v)
			if err != nil {
				return err
			}
			m.MTU, m.Other = mtu, m.Other || other
		case unix.RTA_PREF:
			if len(v) > 0 {
				m.Pref, m.HasPref = v[0], true
			}
		case rtaNHID, unix.RTA_ENCAP, unix.RTA_FLOW, unix.RTA_VIA, unix.RTA_NEWDST:
			m.Other = true
		}
	}
	if a.Err != nil {
		return fmt.Errorf("route attributes: %w", a.Err)
	}
	return nil
}

// addrOfBytes is an address attribute's value; the zero Addr for a
// malformed one.
func addrOfBytes(b []byte) netip.Addr {
	a, _ := netip.AddrFromSlice(b)
	return a
}

// routeMsgOf is a route of a netlink.Handle dump as a routeMsg: the one
// place netlink.Route fields are read.
func routeMsgOf(r *netlink.Route) routeMsg {
	f := familyOfAF(r.Family)
	m := routeMsg{
		Family:   uint8(r.Family),
		Tos:      uint8(r.Tos),
		Protocol: uint8(r.Protocol),
		Scope:    uint8(r.Scope),
		Type:     uint8(r.Type),
		Flags:    uint32(r.Flags),
		Table:    uint32(r.Table),
		Gw:       addrOf(r.Gw, f),
		OIF:      r.LinkIndex,
		Priority: uint32(r.Priority),
		PrefSrc:  addrOf(r.Src, f),
		MTU:      uint32(r.MTU),
		Other:    r.Encap != nil || r.Realm != 0 || r.Via != nil || r.NewDst != nil,
	}
	for _, h := range r.MultiPath {
		m.Nexthops = append(m.Nexthops, routeNexthop{Gw: addrOf(h.Gw, f), OIF: h.LinkIndex,
			Hops: uint8(h.Hops), Flags: uint8(h.Flags)})
	}
	if r.Dst != nil {
		p := prefixOf(r.Dst, f)
		m.DstLen = uint8(p.Bits())
		if p.Bits() > 0 {
			m.Dst = p.Addr()
		}
	}
	return m
}

// routeDumpRequest asks for every route of family (AF_UNSPEC: both) in
// every table.
func routeDumpRequest(family int) *nl.NetlinkRequest {
	return routeFilter{}.request(family)
}

// routeFilter is what a route dump asks the kernel for: the routes of one
// table (0: of every table) and of one protocol (0: of any). The kernel
// applies it only to a request on a socket with strict checking
// (rawOps.dumpFiltered: Linux 4.20 and later); an older one answers with
// every route, so a reader also filters with keeps. A dump of every table
// may keep only the tables in (sorted; nil: all), filtered while read.
type routeFilter struct {
	table uint32
	proto uint8
	in    []uint32
}

// request is the dump request of f for family (AF_UNSPEC: both), as
// `ip route show table T proto P` sends it: the protocol in rtm_protocol,
// the table in rtm_table and, for any table id, RTA_TABLE.
func (f routeFilter) request(family int) *nl.NetlinkRequest {
	req := newDump(unix.RTM_GETROUTE)
	msg := unix.RtMsg{Family: uint8(family), Protocol: f.proto}
	if f.table < 256 {
		msg.Table = uint8(f.table)
	}
	req.AddData(&nl.RtMsg{RtMsg: msg})
	if f.table != 0 {
		req.AddData(nl.NewRtAttr(unix.RTA_TABLE, nl.Uint32Attr(f.table)))
	}
	return req
}

// keeps reports whether m is a route f asks for.
func (f routeFilter) keeps(m *routeMsg) bool {
	if f.in != nil {
		if _, ok := slices.BinarySearch(f.in, m.Table); !ok {
			return false
		}
	}
	return (f.table == 0 || m.Table == f.table) && (f.proto == 0 || m.Protocol == f.proto)
}

// eachRouteIn runs the dumps of filters for family, filtered in the
// kernel where it can, and hands each route a filter keeps (cloned ones
// left out) to each: m is valid only during the call. A table the kernel
// does not have (ENOENT: a dump of one family asking for a table it has
// not made) holds no route. A dump the kernel interrupts runs them all
// again (up to dumpAttempts times), after restart.
func eachRouteIn(conn rawOps, family int, filters []routeFilter, each func(m *routeMsg), restart func()) error {
	var m routeMsg
	return retryDump("routes", func() error {
		restart()
		for _, f := range filters {
			err := conn.dumpFiltered(f.request(family), unix.RTM_NEWROUTE, func(b []byte) {
				if parseRouteMsgInto(b, &m) == nil && m.Flags&unix.RTM_F_CLONED == 0 && f.keeps(&m) {
					each(&m)
				}
			})
			if err != nil && !(f.table != 0 && errors.Is(err, unix.ENOENT)) {
				return err
			}
		}
		return nil
	})
}

// routeRequest builds the RTM_NEWROUTE or RTM_DELROUTE message for r with
// netagent's protocol (see routeMsg.request).
func routeRequest(msgType uint16, flags int, r *items.Route, devs routeDevs) *nl.NetlinkRequest {
	return encodeRoute(r, devs).request(msgType, flags)
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
func routeIdentity(r *netlink.Route) string { return routeMsgOf(r).identity() }

// routeFromKernel converts a kernel route into an item (see decodeRoute);
// ok is false for routes an item cannot describe. hint is the intended
// item of the same name, or nil: where it leaves a field to the kernel,
// the field is read back as the hint has it (see ReadBack).
func routeFromKernel(r *netlink.Route, names map[int]string, hint *items.Route) (*items.Route, bool) {
	it, ok := decodeRoute(routeMsgOf(r), names)
	if !ok {
		return nil, false
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
	for i := range it.Nexthops {
		n := &it.Nexthops[i]
		if slices.ContainsFunc(hint.Nexthops, func(h items.Nexthop) bool { return h.Dev == "" && h.Gw.IsValid() && h.Gw == n.Gw }) &&
			!slices.ContainsFunc(hint.Nexthops, func(h items.Nexthop) bool { return h.Gw == n.Gw && h.Dev == n.Dev }) {
			n.Dev = "" // likewise for a nexthop's gateway
		}
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
// none or malformed).
func routeMetric(m []byte) uint32 {
	rm, err := parseRouteMsg(m)
	if err != nil {
		return 0
	}
	return rm.Priority
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
