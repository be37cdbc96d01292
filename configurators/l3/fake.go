package l3

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"path/filepath"
	"slices"
	"sync"
	"syscall"

	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/internal/statefile"
	"github.com/netagent/netagent/items"
	"github.com/netagent/netagent/reconciler"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netlink/nl"
	"golang.org/x/sys/unix"
)

// FakeKernel is an in-memory rtnetlink of one namespace: interfaces
// (names and indexes only), IPv4/IPv6 addresses, routes of every table,
// policy rules, neighbour entries and the promote_secondaries sysctl. It
// implements every narrow interface the configurators use (rawOps,
// routeNL, addressNL, ruleNL) and parses the very requests the
// configurators serialize, so the configurators' logic runs unchanged
// without root.
//
// It keys each object the way the kernel does and answers with the
// kernel's errors:
//
//	route     family, table, dst/len, tos, priority (IPv4 priority 0 in a
//	          delete means any; IPv6 priority 0 is stored as 1024).
//	          CREATE|EXCL on a taken key: EEXIST; REPLACE replaces the first
//	          route of the key whatever its protocol; neither: an identical
//	          route is EEXIST, another is appended (IPv4 aliases). No key and
//	          no CREATE: ENOENT. Delete: the first route with every field
//	          the request sets (protocol, type, scope unless "nowhere", dev,
//	          gateway, metric), else ESRCH. Gateway without a device:
//	          resolved through an address's subnet, else ENETUNREACH; an
//	          unknown device: ENODEV; host bits in an IPv4 dst: EINVAL.
//	address   IPv4: ifindex, local, prefixlen; IPv6: ifindex, address.
//	          EEXIST on a duplicate; an IPv4 address in the subnet of a
//	          primary becomes secondary. Delete of a missing one:
//	          EADDRNOTAVAIL. Deleting a primary deletes its secondaries
//	          unless promote_secondaries (all or the device) is on, then
//	          the first is promoted; deleting the last IPv4 address of an
//	          interface flushes every IPv4 route through it. An address
//	          adds its subnet's route (protocol kernel), as the kernel does.
//	rule      every selector and the priority; added after the last rule of
//	          a lower or equal priority (duplicates allowed without EXCL);
//	          delete removes the first rule that has every selector the
//	          request sets (rule_find), else ENOENT. The default rules
//	          (local, main, default) are there from the start.
//	neighbour ifindex, ip; CREATE|EXCL on a taken key: EEXIST; REPLACE
//	          overwrites; delete of a missing one: ENOENT.
//
// Every object keeps the protocol it was given (netagent's 211, others'
// anything else). Foreign objects are planted with the add* helpers.
type FakeKernel struct {
	mu      sync.Mutex
	links   []string // index-1 → name ("" when deleted)
	addrs   []kernelAddr
	routes  []fakeRoute
	rules   []netlink.Rule
	neighs  []kernelNeigh
	promote map[string]bool // "all" or a device → promote_secondaries
	// writes counts the change requests the kernel received (successful
	// or not); opens and closes count the conns taken and given back.
	writes, opens, closes int
	// routeDumps counts route dumps (RouteListFilteredIter and RTM_GETROUTE).
	routeDumps int
	// maxExchange is the most requests one exchange carried.
	maxExchange int
	// sent logs every change request ("RTM_NEWADDR replace", see Take).
	sent []string
	// dropMarks makes the kernel drop IFA_PROTO and NDA_PROTOCOL, as
	// kernels older than 5.18 and 5.0 do.
	dropMarks bool
	// keepsV4Proto makes an in-place replace keep an IPv4 address's
	// protocol, as Linux before about 6.3 does (Debian 12's 6.1).
	keepsV4Proto bool
	// rec is the record of adopted addresses (UseStateDir), nil for none.
	rec *addrRecords
	// tables is the record of route tables (UseStateDir), nil for none.
	tables *tableRecord
	// fail, if set, answers a request before the fake handles it: a
	// non-nil error is returned instead.
	fail func(msgType uint16) error
	// Links, if set, are the namespace's links by ifindex, asked at each
	// request: the fake then follows another fake of the same namespace
	// (a link.FakeKernel's LinkList), and what was on a link that is
	// gone goes with it, as in the kernel (see follow).
	Links func() map[int]string
}

var (
	_ rawOps    = (*FakeKernel)(nil)
	_ routeNL   = (*FakeKernel)(nil)
	_ addressNL = (*FakeKernel)(nil)
	_ ruleNL    = (*FakeKernel)(nil)
)

// NewFakeKernel returns a kernel with lo (index 1) and the named links
// (index 2, 3, ...) and the three default rules of each family.
func NewFakeKernel(links ...string) *FakeKernel {
	k := &FakeKernel{links: append([]string{"lo"}, links...), promote: map[string]bool{}}
	for _, f := range []int{unix.AF_INET, unix.AF_INET6} {
		for _, d := range []struct{ prio, table int }{{0, unix.RT_TABLE_LOCAL}, {32766, unix.RT_TABLE_MAIN}, {32767, unix.RT_TABLE_DEFAULT}} {
			if f == unix.AF_INET6 && d.table == unix.RT_TABLE_DEFAULT {
				continue // IPv6 has no "default" rule
			}
			r := netlink.NewRule()
			r.Family, r.Priority, r.Table, r.Protocol, r.Type = f, d.prio, d.table, unix.RTPROT_KERNEL, frActToTbl
			k.rules = append(k.rules, *r)
		}
	}
	return k
}

// Register registers the address, route, rule and neighbour
// configurators over the fake, as Register does over a namespace.
func (k *FakeKernel) Register(reg *reconciler.TypeRegistry) error {
	return k.RegisterWith(reg, Options{})
}

// RegisterWith is Register with opts, as RegisterWith over a namespace.
func (k *FakeKernel) RegisterWith(reg *reconciler.TypeRegistry, opts Options) error {
	return register(reg, kernel{nlh: k, open: k.open, promotes: k.promotes, promoting: k.promoting, adopt: opts.Adopt})
}

// ReadBack reads the fake back into items, as ReadBack does a namespace.
func (k *FakeKernel) ReadBack(hint *dg.Graph) ([]dg.Item, error) { return readBack(k, hint) }

// Clashes finds, as Clashes does in a namespace, the intended items
// whose place someone else's object holds in the fake.
func (k *FakeKernel) Clashes(hint *dg.Graph) (map[dg.ItemRef]error, error) {
	if hint == nil {
		return nil, nil
	}
	return clashes(k, k, hint)
}

// Adoptions finds, as Adoptions does in a namespace, the intended items
// whose object in the fake a create with Options.Adopt takes over.
func (k *FakeKernel) Adoptions(hint *dg.Graph) (map[dg.ItemRef]dg.Item, error) {
	if hint == nil {
		return nil, nil
	}
	return adoptions(k, k, hint)
}

// Refusals reads the fake's addresses and routes for a dry run, as
// NewRefusals does a namespace's.
func (k *FakeKernel) Refusals() (*Refusals, error) { return newRefusals(k, k) }

// KeepV4ProtoOnReplace makes the fake keep an IPv4 address's protocol on
// an in-place replace, as Linux 6.1 does.
func (k *FakeKernel) KeepV4ProtoOnReplace() { k.keepsV4Proto = true }

// UseStateDir keeps the fake's records of adopted addresses and of route
// tables in dir, for a namespace of identity ns.
func (k *FakeKernel) UseStateDir(dir string, ns statefile.NsIdentity) {
	k.rec = &addrRecords{path: filepath.Join(dir, addrRecordFile), ns: ns}
	k.tables = newTableRecord(dir, ns)
}

func (k *FakeKernel) addrRecords() *addrRecords { return k.rec }

func (k *FakeKernel) tableRecord() *tableRecord { return k.tables }

// kernelFilters is false: the fake applies no dump filter (see
// dumpFiltered).
func (k *FakeKernel) kernelFilters() bool { return false }

// open is an opener handing out the fake itself.
func (k *FakeKernel) open() (rawOps, error) {
	k.mu.Lock()
	k.opens++
	k.mu.Unlock()
	return k, nil
}

func (k *FakeKernel) close() {
	k.mu.Lock()
	k.closes++
	k.mu.Unlock()
}

// index returns the index of a link, 0 if none.
func (k *FakeKernel) index(name string) int {
	if i := slices.Index(k.links, name); i >= 0 && name != "" {
		return i + 1
	}
	return 0
}

func (k *FakeKernel) hasLink(index int) bool {
	return index > 0 && index <= len(k.links) && k.links[index-1] != ""
}

func (k *FakeKernel) ifIndex(name string) (int, error) {
	k.lock()
	defer k.mu.Unlock()
	if i := k.index(name); i > 0 {
		return i, nil
	}
	return 0, fmt.Errorf("%w %s", ErrNoDevice, name)
}

// delLink removes an interface with everything on it, as the kernel does.
func (k *FakeKernel) delLink(name string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.drop(k.index(name))
}

// lock takes the fake's lock for a request and brings its links up to
// date (follow).
func (k *FakeKernel) lock() {
	k.mu.Lock()
	k.follow()
}

// follow takes the links from Links, if set: a new index gets its name,
// an index that is gone is dropped with what was on it.
func (k *FakeKernel) follow() {
	if k.Links == nil {
		return
	}
	now := k.Links()
	for i := range k.links {
		if _, ok := now[i+1]; !ok && k.links[i] != "" {
			k.drop(i + 1)
		}
	}
	for i, name := range now {
		for len(k.links) < i {
			k.links = append(k.links, "")
		}
		k.links[i-1] = name
	}
}

// drop removes the interface of index i with everything on it.
func (k *FakeKernel) drop(i int) {
	k.links[i-1] = ""
	k.addrs = slices.DeleteFunc(k.addrs, func(a kernelAddr) bool { return a.index == i })
	k.neighs = slices.DeleteFunc(k.neighs, func(n kernelNeigh) bool { return n.index == i })
	k.routes = slices.DeleteFunc(k.routes, func(r fakeRoute) bool { return routeVia(&r.Route, i) })
}

// exchange handles each request in order.
func (k *FakeKernel) exchange(reqs []*nl.NetlinkRequest) []reply {
	k.lock()
	defer k.mu.Unlock()
	out := make([]reply, len(reqs))
	k.maxExchange = max(k.maxExchange, len(reqs))
	for i, req := range reqs {
		k.writes++
		b := req.Serialize()
		typ, flags := req.Type, int(req.Flags)
		k.sent = append(k.sent, requestName(typ, flags))
		if k.fail != nil {
			if err := k.fail(typ); err != nil {
				out[i].err = err
				continue
			}
		}
		out[i] = k.handle(typ, flags, b[unix.SizeofNlMsghdr:])
	}
	return out
}

func (k *FakeKernel) handle(typ uint16, flags int, m []byte) reply {
	switch typ {
	case unix.RTM_NEWROUTE, unix.RTM_DELROUTE:
		r, err := parseRouteRequest(m)
		if err != nil {
			return reply{err: err}
		}
		if typ == unix.RTM_NEWROUTE {
			return k.newRoute(flags, r)
		}
		return k.delRoute(flags, r)
	case unix.RTM_NEWADDR, unix.RTM_DELADDR:
		a, ok := parseAddr(m)
		if !ok {
			return reply{err: unix.EINVAL}
		}
		if typ == unix.RTM_NEWADDR {
			return reply{err: k.newAddr(flags, a)}
		}
		return reply{err: k.delAddr(a, hasAttr(m[unix.SizeofIfAddrmsg:], unix.IFA_ADDRESS))}
	case unix.RTM_NEWRULE, unix.RTM_DELRULE:
		r, err := parseRuleRequest(m)
		if err != nil {
			return reply{err: err}
		}
		if typ == unix.RTM_NEWRULE {
			return reply{err: k.newRule(flags, r)}
		}
		return reply{err: k.delRule(r)}
	case unix.RTM_NEWNEIGH, unix.RTM_DELNEIGH:
		n, ok := parseNeigh(m)
		if !ok {
			return reply{err: unix.EINVAL}
		}
		if typ == unix.RTM_NEWNEIGH {
			return reply{err: k.newNeigh(flags, n)}
		}
		return reply{err: k.delNeigh(n)}
	}
	return reply{err: unix.EOPNOTSUPP}
}

// dumpEach is dump, one payload at a time.
func (k *FakeKernel) dumpEach(req *nl.NetlinkRequest, resType uint16, f func([]byte)) error {
	msgs, err := k.dump(req, resType)
	for _, b := range msgs {
		f(b)
	}
	return err
}

// dumpFiltered is dumpEach: the fake applies no filter (as a kernel
// before 4.20), so the callers' own filtering is what the tests see.
func (k *FakeKernel) dumpFiltered(req *nl.NetlinkRequest, resType uint16, f func([]byte)) error {
	return k.dumpEach(req, resType, f)
}

// dump answers RTM_GETLINK, RTM_GETADDR, RTM_GETNEIGH, RTM_GETRULE and
// RTM_GETROUTE from the state.
func (k *FakeKernel) dump(req *nl.NetlinkRequest, resType uint16) ([][]byte, error) {
	k.lock()
	defer k.mu.Unlock()
	b := req.Serialize()
	family := b[unix.SizeofNlMsghdr]
	var out [][]byte
	switch {
	case req.Type == unix.RTM_GETADDR && resType == unix.RTM_NEWADDR:
		for _, a := range k.addrs {
			if family == unix.AF_UNSPEC || family == familyOfAddr(a.prefix.Addr()) {
				out = append(out, encodeAddr(a))
			}
		}
	case req.Type == unix.RTM_GETNEIGH && resType == unix.RTM_NEWNEIGH:
		for _, n := range k.neighs {
			if family == unix.AF_UNSPEC || family == familyOfAddr(n.ip) {
				out = append(out, encodeNeigh(n))
			}
		}
	case req.Type == unix.RTM_GETRULE && resType == unix.RTM_NEWRULE:
		for _, r := range k.rules {
			if family == unix.AF_UNSPEC || int(family) == r.Family {
				out = append(out, ruleDumpEntry(r))
			}
		}
	case req.Type == unix.RTM_GETLINK && resType == unix.RTM_NEWLINK:
		for i, n := range k.links {
			if n != "" {
				msg := nl.NewIfInfomsg(unix.AF_UNSPEC)
				msg.Index = int32(i + 1)
				b := append(msg.Serialize(), nl.NewRtAttr(unix.IFLA_MTU, nl.Uint32Attr(1500)).Serialize()...)
				out = append(out, append(b, nl.NewRtAttr(unix.IFLA_IFNAME, nl.ZeroTerminated(n)).Serialize()...))
			}
		}
	case req.Type == unix.RTM_GETROUTE && resType == unix.RTM_NEWROUTE:
		k.routeDumps++
		for _, r := range k.routes {
			if family == unix.AF_UNSPEC || int(family) == r.Family {
				out = append(out, dumpEntry(r))
			}
		}
	default:
		return nil, unix.EOPNOTSUPP
	}
	return out, nil
}

func familyOfAddr(a netip.Addr) uint8 {
	if a.Is4() {
		return unix.AF_INET
	}
	return unix.AF_INET6
}

// --- routes ---

// RouteListFilteredIter filters as netlink.Handle does: routes of tables
// other than main only with RT_FILTER_TABLE, then table and protocol.
func (k *FakeKernel) RouteListFilteredIter(family int, filter *netlink.Route, mask uint64, f func(netlink.Route) bool) error {
	k.lock()
	k.routeDumps++
	var list []netlink.Route
	for _, r := range k.routes {
		list = append(list, r.Route)
	}
	k.mu.Unlock()
	for _, r := range list {
		switch {
		case family != netlink.FAMILY_ALL && r.Family != family:
		case r.Table != unix.RT_TABLE_MAIN && (filter == nil || mask&netlink.RT_FILTER_TABLE == 0):
		case filter != nil && mask&netlink.RT_FILTER_TABLE != 0 && filter.Table != 0 && r.Table != filter.Table:
		case filter != nil && mask&netlink.RT_FILTER_PROTOCOL != 0 && r.Protocol != filter.Protocol:
		default:
			if !f(r) {
				return nil
			}
		}
	}
	return nil
}

// addRoute plants a route (someone else's: any protocol, multipath, tos).
func (k *FakeKernel) addRoute(r netlink.Route) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if r.Table == 0 {
		r.Table = unix.RT_TABLE_MAIN
	}
	if r.Type == 0 {
		r.Type = unix.RTN_UNICAST
	}
	k.routes = append(k.routes, fakeRoute{Route: r, HasPref: r.Family == unix.AF_INET6})
}

// fakeRoute is a route of the fake: netlink.Route has no RTA_PREF.
type fakeRoute struct {
	netlink.Route
	Pref    uint8
	HasPref bool
}

// parseRouteRequest decodes an RTM_NEWROUTE/RTM_DELROUTE payload,
// multipath, metrics and preference included.
func parseRouteRequest(m []byte) (fakeRoute, error) {
	if len(m) < unix.SizeofRtMsg {
		return fakeRoute{}, unix.EINVAL
	}
	msg := nl.DeserializeRtMsg(m)
	attrs, err := nl.ParseRouteAttr(m[unix.SizeofRtMsg:])
	if err != nil {
		return fakeRoute{}, unix.EINVAL
	}
	size := net.IPv4len
	if msg.Family == unix.AF_INET6 {
		size = net.IPv6len
	} else if msg.Family != unix.AF_INET {
		return fakeRoute{}, unix.EAFNOSUPPORT
	}
	r := netlink.Route{Family: int(msg.Family), Tos: int(msg.Tos), Table: int(msg.Table), Protocol: netlink.RouteProtocol(msg.Protocol),
		Scope: netlink.Scope(msg.Scope), Type: int(msg.Type), Flags: int(msg.Flags),
		Dst: &net.IPNet{IP: make(net.IP, size), Mask: net.CIDRMask(int(msg.Dst_len), 8*size)}}
	fr := fakeRoute{}
	ne := nl.NativeEndian()
	for _, a := range attrs {
		switch a.Attr.Type {
		case unix.RTA_TABLE:
			r.Table = int(ne.Uint32(a.Value))
		case unix.RTA_DST:
			r.Dst.IP = net.IP(slices.Clone(a.Value))
		case unix.RTA_PRIORITY:
			r.Priority = int(ne.Uint32(a.Value))
		case unix.RTA_GATEWAY:
			r.Gw = net.IP(slices.Clone(a.Value))
		case unix.RTA_OIF:
			r.LinkIndex = int(ne.Uint32(a.Value))
		case unix.RTA_PREFSRC:
			r.Src = net.IP(slices.Clone(a.Value))
		case unix.RTA_MULTIPATH:
			for b := a.Value; len(b) >= unix.SizeofRtNexthop; {
				n := int(ne.Uint16(b[0:2]))
				if n < unix.SizeofRtNexthop || n > len(b) {
					return fakeRoute{}, unix.EINVAL
				}
				hop := &netlink.NexthopInfo{Flags: int(b[2]), Hops: int(b[3]), LinkIndex: int(ne.Uint32(b[4:8]))}
				sub, err := nl.ParseRouteAttr(b[unix.SizeofRtNexthop:n])
				if err != nil {
					return fakeRoute{}, unix.EINVAL
				}
				for _, x := range sub {
					if x.Attr.Type == unix.RTA_GATEWAY {
						hop.Gw = net.IP(slices.Clone(x.Value))
					}
				}
				r.MultiPath = append(r.MultiPath, hop)
				b = b[min((n+3)&^3, len(b)):]
			}
		case unix.RTA_METRICS:
			sub, err := nl.ParseRouteAttr(a.Value)
			if err != nil {
				return fakeRoute{}, unix.EINVAL
			}
			for _, x := range sub {
				if x.Attr.Type == unix.RTAX_MTU {
					r.MTU = int(ne.Uint32(x.Value))
				}
			}
		case unix.RTA_PREF:
			fr.Pref, fr.HasPref = a.Value[0], true
		}
	}
	if r.Table == 0 {
		r.Table = unix.RT_TABLE_MAIN
	}
	fr.Route = r
	return fr, nil
}

// dumpEntry is the kernel's description of r (a dump entry or a
// notification payload): an IPv6 route always with its preference.
func dumpEntry(fr fakeRoute) []byte {
	r := fr.Route
	req := nl.NewNetlinkRequest(unix.RTM_NEWROUTE, 0)
	msg := nl.NewRtMsg()
	bits := 0
	if r.Dst != nil {
		bits, _ = r.Dst.Mask.Size()
	}
	msg.Family, msg.Dst_len, msg.Tos = uint8(r.Family), uint8(bits), uint8(r.Tos)
	msg.Protocol, msg.Scope, msg.Type, msg.Flags = uint8(r.Protocol), uint8(r.Scope), uint8(r.Type), uint32(r.Flags)
	msg.Table = unix.RT_TABLE_UNSPEC
	if r.Table < 256 {
		msg.Table = uint8(r.Table)
	}
	req.AddData(msg)
	req.AddData(nl.NewRtAttr(unix.RTA_TABLE, nl.Uint32Attr(uint32(r.Table))))
	if bits > 0 {
		req.AddData(nl.NewRtAttr(unix.RTA_DST, r.Dst.IP))
	}
	if r.Priority > 0 {
		req.AddData(nl.NewRtAttr(unix.RTA_PRIORITY, nl.Uint32Attr(uint32(r.Priority))))
	}
	if r.MTU > 0 {
		metrics := nl.NewRtAttr(unix.RTA_METRICS, nil)
		metrics.AddRtAttr(unix.RTAX_MTU, nl.Uint32Attr(uint32(r.MTU)))
		req.AddData(metrics)
	}
	if r.Gw != nil {
		req.AddData(nl.NewRtAttr(unix.RTA_GATEWAY, r.Gw))
	}
	if r.LinkIndex > 0 {
		req.AddData(nl.NewRtAttr(unix.RTA_OIF, nl.Uint32Attr(uint32(r.LinkIndex))))
	}
	if r.Src != nil {
		req.AddData(nl.NewRtAttr(unix.RTA_PREFSRC, r.Src))
	}
	if len(r.MultiPath) > 0 {
		var hops []byte // struct rtnexthop each, with its gateway
		for _, nh := range r.MultiPath {
			var gw []byte
			if nh.Gw != nil {
				gw = nl.NewRtAttr(unix.RTA_GATEWAY, nh.Gw).Serialize()
			}
			hop := make([]byte, unix.SizeofRtNexthop)
			nl.NativeEndian().PutUint16(hop[0:2], uint16(unix.SizeofRtNexthop+len(gw)))
			hop[2], hop[3] = uint8(nh.Flags), uint8(nh.Hops)
			nl.NativeEndian().PutUint32(hop[4:8], uint32(nh.LinkIndex))
			hops = append(hops, append(hop, gw...)...) // gw is a multiple of 4 long
		}
		req.AddData(nl.NewRtAttr(unix.RTA_MULTIPATH, hops))
	}
	if r.Family == unix.AF_INET6 {
		req.AddData(nl.NewRtAttr(unix.RTA_PREF, []byte{fr.Pref}))
	}
	return req.Serialize()[unix.SizeofNlMsghdr:]
}

// routeKey is what the kernel keys a route by.
func routeKey(r *netlink.Route) string {
	return fmt.Sprintf("%d %d %s %d %d", r.Family, r.Table, r.Dst, r.Tos, r.Priority)
}

func (k *FakeKernel) newRoute(flags int, fr fakeRoute) reply {
	r := &fr.Route
	if r.Family == unix.AF_INET6 && r.Priority == 0 {
		r.Priority = items.IPv6DefaultMetric
	}
	if err := k.resolveNexthop(r); err != nil {
		return reply{err: err}
	}
	if r.Family == unix.AF_INET6 {
		r.Scope = unix.RT_SCOPE_UNIVERSE // IPv6 routes have no scope
		fr.HasPref = true                // and always a preference (medium: 0)
	} else {
		fr.Pref, fr.HasPref = 0, false // IPv4 routes have none
	}
	key := routeKey(r)
	at := slices.IndexFunc(k.routes, func(x fakeRoute) bool { return routeKey(&x.Route) == key })
	switch {
	case at >= 0 && flags&unix.NLM_F_EXCL != 0:
		return reply{err: unix.EEXIST}
	case at >= 0 && flags&unix.NLM_F_REPLACE != 0:
		k.routes[at] = fr
	case at >= 0 && slices.ContainsFunc(k.routes, func(x fakeRoute) bool { return routeKey(&x.Route) == key && sameNexthop(&x.Route, r) }):
		return reply{err: unix.EEXIST}
	case flags&unix.NLM_F_CREATE == 0:
		return reply{err: unix.ENOENT}
	default:
		k.routes = append(k.routes, fr)
	}
	if flags&unix.NLM_F_ECHO != 0 {
		return reply{echo: [][]byte{dumpEntry(fr)}}
	}
	return reply{}
}

func sameNexthop(a, b *netlink.Route) bool {
	return a.Type == b.Type && a.Scope == b.Scope && a.LinkIndex == b.LinkIndex && a.Gw.Equal(b.Gw) && a.Protocol == b.Protocol
}

// resolveNexthop checks a new route's destination and nexthops as the
// kernel does, and fills in the devices the kernel picks. A multipath
// route of one nexthop becomes a plain route (its weight is lost); IPv6
// multipath nexthops need a gateway.
func (k *FakeKernel) resolveNexthop(r *netlink.Route) error {
	if r.Family == unix.AF_INET && !r.Dst.IP.Equal(r.Dst.IP.Mask(r.Dst.Mask)) {
		return fmt.Errorf("%w: invalid prefix for given prefix length", unix.EINVAL)
	}
	if r.Type != unix.RTN_UNICAST {
		if r.LinkIndex > 0 && !k.hasLink(r.LinkIndex) {
			return unix.ENODEV
		}
		if r.Family == unix.AF_INET6 {
			r.LinkIndex = 1 // IPv6 attaches reject routes to lo
		}
		return nil
	}
	switch len(r.MultiPath) {
	case 0:
		idx, err := k.resolveHop(r.Family, r.Gw, r.LinkIndex, r.Flags)
		r.LinkIndex = idx
		return err
	case 1:
		h := r.MultiPath[0]
		r.Gw, r.LinkIndex, r.Flags, r.MultiPath = h.Gw, h.LinkIndex, r.Flags|h.Flags, nil
		return k.resolveNexthop(r)
	}
	if r.Gw != nil || r.LinkIndex != 0 {
		return fmt.Errorf("%w: gateway or device beside RTA_MULTIPATH", unix.EINVAL)
	}
	for _, h := range r.MultiPath {
		if r.Family == unix.AF_INET6 && h.Gw == nil {
			return fmt.Errorf("%w: device only routes can not be added for IPv6 using the multipath API", unix.EINVAL)
		}
		idx, err := k.resolveHop(r.Family, h.Gw, h.LinkIndex, h.Flags)
		if err != nil {
			return err
		}
		h.LinkIndex = idx
	}
	return nil
}

// resolveHop checks one nexthop and returns its device: the given one, or
// the one whose address's subnet holds gw. An onlink gateway needs a
// device and no subnet.
func (k *FakeKernel) resolveHop(family int, gwIP net.IP, index, flags int) (int, error) {
	if index > 0 && !k.hasLink(index) {
		return 0, unix.ENODEV
	}
	if gwIP == nil {
		if index == 0 {
			return 0, fmt.Errorf("%w: device for nexthop is not given", unix.ENODEV)
		}
		return index, nil
	}
	gw, _ := netip.AddrFromSlice(gwIP)
	gw = gw.Unmap()
	if flags&unix.RTNH_F_ONLINK != 0 {
		if index == 0 {
			return 0, fmt.Errorf("%w: nexthop device required for onlink", unix.EINVAL)
		}
		return index, nil
	}
	if gw.IsLinkLocalUnicast() && index > 0 {
		return index, nil
	}
	for _, a := range k.addrs {
		if (index == 0 || a.index == index) && a.prefix.Masked().Contains(gw) {
			return a.index, nil
		}
	}
	return 0, unix.ENETUNREACH
}

func (k *FakeKernel) delRoute(flags int, freq fakeRoute) reply {
	req := freq.Route
	best := -1
	for i := range k.routes {
		r := &k.routes[i].Route
		if r.Family != req.Family || r.Table != req.Table || r.Dst.String() != req.Dst.String() || r.Tos != req.Tos ||
			(req.Priority != 0 && r.Priority != req.Priority) || (req.Protocol != 0 && r.Protocol != req.Protocol) ||
			(req.Type != 0 && r.Type != req.Type) || (req.Family == unix.AF_INET && req.Scope != unix.RT_SCOPE_NOWHERE && r.Scope != req.Scope) ||
			(req.LinkIndex != 0 && r.LinkIndex != req.LinkIndex) || (req.Gw != nil && !r.Gw.Equal(req.Gw)) {
			continue
		}
		if best < 0 || r.Priority < k.routes[best].Route.Priority { // aliases are sorted by priority
			best = i
		}
	}
	if best < 0 {
		return reply{err: unix.ESRCH}
	}
	gone := k.routes[best]
	k.routes = slices.Delete(k.routes, best, best+1)
	if flags&unix.NLM_F_ECHO != 0 {
		return reply{echo: [][]byte{dumpEntry(gone)}}
	}
	return reply{}
}

// --- addresses ---

func encodeAddr(a kernelAddr) []byte {
	req := nl.NewNetlinkRequest(unix.RTM_NEWADDR, 0)
	v4 := a.prefix.Addr().Is4()
	family := unix.AF_INET6
	if v4 {
		family = unix.AF_INET
	}
	msg := nl.NewIfAddrmsg(family)
	msg.Prefixlen, msg.Index, msg.Scope, msg.Flags = uint8(a.prefix.Bits()), uint32(a.index), a.scope, uint8(a.flags)
	req.AddData(msg)
	ip, address := a.prefix.Addr().AsSlice(), a.prefix.Addr().AsSlice()
	if a.peer.IsValid() {
		address = a.peer.AsSlice()
	}
	if v4 || a.peer.IsValid() {
		req.AddData(nl.NewRtAttr(unix.IFA_LOCAL, ip))
	}
	req.AddData(nl.NewRtAttr(unix.IFA_ADDRESS, address))
	req.AddData(nl.NewRtAttr(unix.IFA_FLAGS, nl.Uint32Attr(a.flags)))
	if v4 {
		req.AddData(nl.NewRtAttr(unix.IFA_LABEL, nl.ZeroTerminated(a.label)))
	}
	if a.proto != 0 {
		req.AddData(nl.NewRtAttr(ifaProto, nl.Uint8Attr(a.proto)))
	}
	if a.metric != 0 {
		req.AddData(nl.NewRtAttr(unix.IFA_RT_PRIORITY, nl.Uint32Attr(a.metric)))
	}
	return req.Serialize()[unix.SizeofNlMsghdr:]
}

func hasAttr(b []byte, typ uint16) bool {
	attrs, _ := nl.ParseRouteAttr(b)
	return slices.ContainsFunc(attrs, func(a syscall.NetlinkRouteAttr) bool { return a.Attr.Type == typ })
}

// addAddr plants an address (someone else's when proto is not 211) the
// way the kernel adds it.
func (k *FakeKernel) addAddr(dev, prefix string, proto uint8) {
	k.mu.Lock()
	defer k.mu.Unlock()
	a := kernelAddr{index: k.index(dev), prefix: netip.MustParsePrefix(prefix), proto: proto}
	if err := k.newAddr(unix.NLM_F_CREATE|unix.NLM_F_EXCL, a); err != nil {
		panic(err)
	}
}

func (k *FakeKernel) findAddr(index int, p netip.Prefix) int {
	return slices.IndexFunc(k.addrs, func(x kernelAddr) bool {
		return x.index == index && x.prefix.Addr() == p.Addr() && (x.prefix.Bits() == p.Bits() || !p.Addr().Is4())
	})
}

func sameSubnet(a, b netip.Prefix) bool { return a.Bits() == b.Bits() && a.Masked() == b.Masked() }

func (k *FakeKernel) newAddr(flags int, a kernelAddr) error {
	if !k.hasLink(a.index) {
		return unix.ENODEV
	}
	if at := k.findAddr(a.index, a.prefix); at >= 0 {
		return k.replaceAddr(flags, at, a)
	}
	v4 := a.prefix.Addr().Is4()
	a.flags = a.flags&unix.IFA_F_NODAD | unix.IFA_F_PERMANENT
	if k.dropMarks {
		a.proto = 0
	}
	if v4 {
		if a.label == "" {
			a.label = k.links[a.index-1]
		}
		for _, x := range k.addrs {
			if x.index == a.index && x.prefix.Addr().Is4() && sameSubnet(x.prefix, a.prefix) {
				if x.scope != a.scope {
					return unix.EINVAL
				}
				a.flags |= unix.IFA_F_SECONDARY
			}
		}
	} else {
		a.label, a.scope = "", unix.RT_SCOPE_UNIVERSE
		if a.prefix.Addr().IsLinkLocalUnicast() {
			a.scope = unix.RT_SCOPE_LINK
		}
	}
	k.addrs = append(k.addrs, a)
	if !a.secondary() {
		k.addPrefixRoute(a)
	}
	return nil
}

// replaceAddr models NLM_F_REPLACE of an existing address as the kernel
// applies it, in place: the IFA_PROTO mark and the prefix route's metric
// are rewritten, nothing deleted.
func (k *FakeKernel) replaceAddr(flags int, at int, a kernelAddr) error {
	if flags&unix.NLM_F_REPLACE == 0 || flags&unix.NLM_F_EXCL != 0 {
		return unix.EEXIST
	}
	if !k.dropMarks && (!k.keepsV4Proto || !a.prefix.Addr().Is4()) {
		k.addrs[at].proto = a.proto
	}
	if old := k.addrs[at]; old.metric != a.metric && old.prefix.Addr().Is4() && !old.secondary() {
		k.delPrefixRoute(old)
		k.addrs[at].metric = a.metric
		k.addPrefixRoute(k.addrs[at])
	}
	return nil
}

// addPrefixRoute adds the route to an address's subnet (protocol kernel).
func (k *FakeKernel) addPrefixRoute(a kernelAddr) {
	if a.prefix.Bits() == a.prefix.Addr().BitLen() {
		return
	}
	p := a.prefix.Masked()
	r := netlink.Route{Family: int(familyOfAddr(p.Addr())), Table: unix.RT_TABLE_MAIN, Protocol: unix.RTPROT_KERNEL,
		Type: unix.RTN_UNICAST, LinkIndex: a.index,
		Dst: &net.IPNet{IP: p.Addr().AsSlice(), Mask: net.CIDRMask(p.Bits(), p.Addr().BitLen())}}
	if p.Addr().Is4() {
		r.Scope, r.Src, r.Priority = unix.RT_SCOPE_LINK, a.prefix.Addr().AsSlice(), int(a.metric)
	} else {
		r.Priority = cmp.Or(int(a.metric), 256)
	}
	k.routes = append(k.routes, fakeRoute{Route: r, HasPref: r.Family == unix.AF_INET6})
}

func (k *FakeKernel) delPrefixRoute(a kernelAddr) {
	p := a.prefix.Masked()
	k.routes = slices.DeleteFunc(k.routes, func(r fakeRoute) bool {
		return r.Protocol == unix.RTPROT_KERNEL && r.LinkIndex == a.index && prefixOf(r.Dst, familyOfAF(r.Family)) == p
	})
}

func (k *FakeKernel) delAddr(req kernelAddr, withAddress bool) error {
	at := slices.IndexFunc(k.addrs, func(x kernelAddr) bool {
		return x.index == req.index && x.prefix.Addr() == req.prefix.Addr() &&
			(!withAddress || (x.prefix.Bits() == req.prefix.Bits() && x.peer == req.peer)) &&
			(req.label == "" || x.label == req.label)
	})
	if at < 0 {
		return unix.EADDRNOTAVAIL
	}
	gone := k.addrs[at]
	k.addrs = slices.Delete(k.addrs, at, at+1)
	if !gone.prefix.Addr().Is4() {
		k.delPrefixRoute(gone)
		return nil
	}
	if !gone.secondary() {
		k.delPrefixRoute(gone)
		promote := k.promote["all"] || k.promote[k.links[gone.index-1]]
		promoted := false
		k.addrs = slices.DeleteFunc(k.addrs, func(x kernelAddr) bool {
			return x.index == gone.index && x.prefix.Addr().Is4() && sameSubnet(x.prefix, gone.prefix) && !promote
		})
		for i := range k.addrs {
			x := &k.addrs[i]
			if promote && !promoted && x.index == gone.index && x.prefix.Addr().Is4() && sameSubnet(x.prefix, gone.prefix) {
				x.flags &^= unix.IFA_F_SECONDARY
				k.addPrefixRoute(*x)
				promoted = true
			}
		}
	}
	if !slices.ContainsFunc(k.addrs, func(x kernelAddr) bool { return x.index == gone.index && x.prefix.Addr().Is4() }) {
		// fib_disable_ip: the interface's last IPv4 address is gone.
		k.routes = slices.DeleteFunc(k.routes, func(r fakeRoute) bool {
			return r.Family == unix.AF_INET && routeVia(&r.Route, gone.index)
		})
	}
	return nil
}

// promotesFor and promotingFor back addressConfigurator's sysctl hooks.
func (k *FakeKernel) promotes(dev string) (bool, error) {
	k.lock()
	defer k.mu.Unlock()
	if k.index(dev) == 0 {
		return false, fmt.Errorf("reading promote_secondaries: %w", errors.New("no such file or directory"))
	}
	return k.promote["all"] || k.promote[dev], nil
}

func (k *FakeKernel) promoting(dev string, f func() error) error {
	k.mu.Lock()
	old := k.promote[dev]
	k.promote[dev] = true
	k.mu.Unlock()
	err := f()
	k.mu.Lock()
	k.promote[dev] = old
	k.mu.Unlock()
	return err
}

// --- neighbours ---

func encodeNeigh(n kernelNeigh) []byte {
	req := nl.NewNetlinkRequest(unix.RTM_NEWNEIGH, 0)
	req.AddData(&netlink.Ndmsg{Family: familyOfAddr(n.ip), Index: uint32(n.index), State: n.state, Flags: n.flags})
	req.AddData(nl.NewRtAttr(netlink.NDA_DST, n.ip.AsSlice()))
	if n.mac != nil {
		req.AddData(nl.NewRtAttr(netlink.NDA_LLADDR, []byte(n.mac)))
	}
	if n.proto != 0 {
		req.AddData(nl.NewRtAttr(ndaProtocol, nl.Uint8Attr(n.proto)))
	}
	return req.Serialize()[unix.SizeofNlMsghdr:]
}

// addNeigh plants an entry (someone's static one, or a learned one).
func (k *FakeKernel) addNeigh(dev, ip, mac string, state uint16, proto uint8) {
	k.mu.Lock()
	defer k.mu.Unlock()
	hw, err := net.ParseMAC(mac)
	if err != nil {
		panic(err)
	}
	k.neighs = append(k.neighs, kernelNeigh{index: k.index(dev), ip: netip.MustParseAddr(ip), mac: hw, state: state, proto: proto})
}

func (k *FakeKernel) findNeigh(n kernelNeigh) int {
	return slices.IndexFunc(k.neighs, func(x kernelNeigh) bool { return x.index == n.index && x.ip == n.ip })
}

func (k *FakeKernel) newNeigh(flags int, n kernelNeigh) error {
	if !k.hasLink(n.index) {
		return unix.ENODEV
	}
	if k.dropMarks {
		n.proto = 0
	}
	at := k.findNeigh(n)
	switch {
	case at >= 0 && flags&unix.NLM_F_EXCL != 0:
		return unix.EEXIST
	case at >= 0 && flags&unix.NLM_F_REPLACE != 0:
		k.neighs[at] = n
	case at >= 0: // no override: the kernel keeps a permanent entry's address
		return nil
	case flags&unix.NLM_F_CREATE == 0:
		return unix.ENOENT
	default:
		k.neighs = append(k.neighs, n)
	}
	return nil
}

func (k *FakeKernel) delNeigh(n kernelNeigh) error {
	at := k.findNeigh(n)
	if at < 0 {
		return unix.ENOENT
	}
	k.neighs = slices.Delete(k.neighs, at, at+1)
	return nil
}

// --- rules ---

// RuleList lists the rules of family in the kernel's order.
func (k *FakeKernel) RuleList(family int) ([]netlink.Rule, error) {
	k.lock()
	defer k.mu.Unlock()
	var out []netlink.Rule
	for _, r := range k.rules {
		if family == netlink.FAMILY_ALL || r.Family == family {
			out = append(out, r)
		}
	}
	return out, nil
}

// addRule plants a rule as the kernel orders it.
func (k *FakeKernel) addRule(r *netlink.Rule) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if r.Type == 0 { // what `ip rule add ... lookup` sends
		r.Type = frActToTbl
	}
	if err := k.newRule(unix.NLM_F_CREATE, *r); err != nil {
		panic(err)
	}
}

func parseRuleRequest(m []byte) (netlink.Rule, error) {
	if len(m) < unix.SizeofRtMsg {
		return netlink.Rule{}, unix.EINVAL
	}
	msg := nl.DeserializeRtMsg(m)
	attrs, err := nl.ParseRouteAttr(m[unix.SizeofRtMsg:])
	if err != nil {
		return netlink.Rule{}, unix.EINVAL
	}
	r := netlink.NewRule()
	r.Family, r.Table, r.Tos, r.Type, r.Priority = int(msg.Family), int(msg.Table), uint(msg.Tos), msg.Type, 0
	r.Invert = msg.Flags&fibRuleInvert != 0
	bits := 32
	if msg.Family == unix.AF_INET6 {
		bits = 128
	}
	ne := nl.NativeEndian()
	hasMark := false
	for _, a := range attrs {
		switch a.Attr.Type {
		case nl.FRA_SRC:
			r.Src = &net.IPNet{IP: net.IP(slices.Clone(a.Value)), Mask: net.CIDRMask(int(msg.Src_len), bits)}
		case nl.FRA_DST:
			r.Dst = &net.IPNet{IP: net.IP(slices.Clone(a.Value)), Mask: net.CIDRMask(int(msg.Dst_len), bits)}
		case nl.FRA_PRIORITY:
			r.Priority = int(ne.Uint32(a.Value))
		case nl.FRA_TABLE:
			r.Table = int(ne.Uint32(a.Value))
		case nl.FRA_FWMARK:
			r.Mark, hasMark = ne.Uint32(a.Value), true
		case nl.FRA_FWMASK:
			m := ne.Uint32(a.Value)
			r.Mask = &m
		case nl.FRA_IIFNAME:
			r.IifName = unix.ByteSliceToString(a.Value)
		case nl.FRA_OIFNAME:
			r.OifName = unix.ByteSliceToString(a.Value)
		case nl.FRA_PROTOCOL:
			r.Protocol = a.Value[0]
		case nl.FRA_GOTO:
			r.Goto = int(ne.Uint32(a.Value))
		case nl.FRA_IP_PROTO:
			r.IPProto = int(a.Value[0])
		case nl.FRA_SPORT_RANGE:
			r.Sport = netlink.NewRulePortRange(ne.Uint16(a.Value[0:2]), ne.Uint16(a.Value[2:4]))
		case nl.FRA_DPORT_RANGE:
			r.Dport = netlink.NewRulePortRange(ne.Uint16(a.Value[0:2]), ne.Uint16(a.Value[2:4]))
		case nl.FRA_UID_RANGE:
			r.UIDRange = netlink.NewRuleUIDRange(ne.Uint32(a.Value[0:4]), ne.Uint32(a.Value[4:8]))
		case nl.FRA_SUPPRESS_PREFIXLEN:
			r.SuppressPrefixlen = int(int32(ne.Uint32(a.Value)))
		}
	}
	if hasMark && r.Mask == nil {
		all := uint32(0xffffffff)
		r.Mask = &all
	}
	return *r, nil
}

// ruleDumpEntry is the kernel's description of r in a dump: FRA_TABLE
// always (0 for the actions without a table), the rest when set.
func ruleDumpEntry(r netlink.Rule) []byte {
	req := nl.NewNetlinkRequest(unix.RTM_NEWRULE, 0)
	msg := nl.NewRtMsg()
	msg.Family, msg.Tos, msg.Type = uint8(r.Family), uint8(r.Tos), r.Type
	msg.Protocol, msg.Scope = 0, 0
	msg.Table = unix.RT_TABLE_UNSPEC
	if r.Table < 256 {
		msg.Table = uint8(r.Table)
	}
	if r.Invert {
		msg.Flags |= fibRuleInvert
	}
	prefix := func(typ int, n *net.IPNet, lenAt *uint8) {
		if n != nil {
			bits, _ := n.Mask.Size()
			if bits > 0 {
				*lenAt = uint8(bits)
				req.AddData(nl.NewRtAttr(typ, n.IP))
			}
		}
	}
	var attrs []*nl.RtAttr
	req.AddData(msg)
	prefix(nl.FRA_SRC, r.Src, &msg.Src_len)
	prefix(nl.FRA_DST, r.Dst, &msg.Dst_len)
	attrs = append(attrs, nl.NewRtAttr(nl.FRA_TABLE, nl.Uint32Attr(uint32(r.Table))))
	if r.Priority > 0 {
		attrs = append(attrs, nl.NewRtAttr(nl.FRA_PRIORITY, nl.Uint32Attr(uint32(r.Priority))))
	}
	if r.Mark != 0 || maskOf(&r) != 0 {
		attrs = append(attrs, nl.NewRtAttr(nl.FRA_FWMARK, nl.Uint32Attr(r.Mark)), nl.NewRtAttr(nl.FRA_FWMASK, nl.Uint32Attr(maskOf(&r))))
	}
	if r.IifName != "" {
		attrs = append(attrs, nl.NewRtAttr(nl.FRA_IIFNAME, nl.ZeroTerminated(r.IifName)))
	}
	if r.OifName != "" {
		attrs = append(attrs, nl.NewRtAttr(nl.FRA_OIFNAME, nl.ZeroTerminated(r.OifName)))
	}
	if r.Goto > 0 {
		attrs = append(attrs, nl.NewRtAttr(nl.FRA_GOTO, nl.Uint32Attr(uint32(r.Goto))))
	}
	if r.SuppressPrefixlen >= 0 {
		attrs = append(attrs, nl.NewRtAttr(nl.FRA_SUPPRESS_PREFIXLEN, nl.Uint32Attr(uint32(r.SuppressPrefixlen))))
	}
	if r.UIDRange != nil {
		b := make([]byte, 8)
		nl.NativeEndian().PutUint32(b[0:4], r.UIDRange.Start)
		nl.NativeEndian().PutUint32(b[4:8], r.UIDRange.End)
		attrs = append(attrs, nl.NewRtAttr(nl.FRA_UID_RANGE, b))
	}
	if r.IPProto != 0 {
		attrs = append(attrs, nl.NewRtAttr(nl.FRA_IP_PROTO, []byte{uint8(r.IPProto)}))
	}
	for typ, pr := range map[int]*netlink.RulePortRange{nl.FRA_SPORT_RANGE: r.Sport, nl.FRA_DPORT_RANGE: r.Dport} {
		if pr != nil {
			b := make([]byte, 4)
			nl.NativeEndian().PutUint16(b[0:2], pr.Start)
			nl.NativeEndian().PutUint16(b[2:4], pr.End)
			attrs = append(attrs, nl.NewRtAttr(typ, b))
		}
	}
	if r.TunID != 0 {
		attrs = append(attrs, nl.NewRtAttr(nl.FRA_TUN_ID, make([]byte, 8)))
	}
	attrs = append(attrs, nl.NewRtAttr(nl.FRA_PROTOCOL, []byte{r.Protocol}))
	for _, a := range attrs {
		req.AddData(a)
	}
	return req.Serialize()[unix.SizeofNlMsghdr:]
}

func maskOf(r *netlink.Rule) uint32 {
	if r.Mask == nil {
		return 0
	}
	return *r.Mask
}

func portEq(a, b *netlink.RulePortRange) bool {
	return a == nil && b == nil || a != nil && b != nil && *a == *b
}

func uidEq(a, b *netlink.RuleUIDRange) bool {
	return a == nil && b == nil || a != nil && b != nil && *a == *b
}

// sameRule compares every selector, the action and the priority.
func sameRule(a, b *netlink.Rule) bool {
	return a.Family == b.Family && a.Priority == b.Priority && a.Table == b.Table && a.Type == b.Type &&
		a.Src.String() == b.Src.String() && a.Dst.String() == b.Dst.String() && a.Mark == b.Mark &&
		maskOf(a) == maskOf(b) && a.IifName == b.IifName && a.OifName == b.OifName && a.Tos == b.Tos &&
		a.IPProto == b.IPProto && a.Invert == b.Invert && a.Goto == b.Goto && portEq(a.Sport, b.Sport) &&
		portEq(a.Dport, b.Dport) && uidEq(a.UIDRange, b.UIDRange) && a.SuppressPrefixlen == b.SuppressPrefixlen
}

// newRule adds a rule as fib_nl_newrule does: a lookup needs a table, a
// goto a later priority ("Backward goto not supported").
func (k *FakeKernel) newRule(flags int, r netlink.Rule) error {
	switch {
	case r.Type == frActToTbl && r.Table == 0:
		return fmt.Errorf("%w: invalid table", unix.EINVAL)
	case r.Type == frActGoto && r.Goto <= r.Priority:
		return fmt.Errorf("%w: backward goto not supported", unix.EINVAL)
	}
	if flags&unix.NLM_F_EXCL != 0 && slices.ContainsFunc(k.rules, func(x netlink.Rule) bool { return sameRule(&x, &r) }) {
		return unix.EEXIST
	}
	at := len(k.rules)
	for i := range k.rules {
		if k.rules[i].Priority > r.Priority {
			at = i
			break
		}
	}
	k.rules = slices.Insert(k.rules, at, r)
	return nil
}

// delRule removes the first rule with every selector the request sets
// (rule_find: the "not" flag and a goto's target are not compared).
func (k *FakeKernel) delRule(req netlink.Rule) error {
	at := slices.IndexFunc(k.rules, func(r netlink.Rule) bool {
		return r.Family == req.Family && (req.Type == 0 || r.Type == req.Type) &&
			(req.Table == 0 || r.Table == req.Table) && (req.Priority == 0 || r.Priority == req.Priority) &&
			(req.Src == nil || r.Src.String() == req.Src.String()) && (req.Dst == nil || r.Dst.String() == req.Dst.String()) &&
			(req.Mark == 0 || r.Mark == req.Mark) && (maskOf(&req) == 0 || maskOf(&r) == maskOf(&req)) &&
			(req.IifName == "" || r.IifName == req.IifName) && (req.OifName == "" || r.OifName == req.OifName) &&
			(req.Protocol == 0 || r.Protocol == req.Protocol) && (req.IPProto == 0 || r.IPProto == req.IPProto) &&
			(req.Sport == nil || portEq(r.Sport, req.Sport)) && (req.Dport == nil || portEq(r.Dport, req.Dport)) &&
			(req.UIDRange == nil || uidEq(r.UIDRange, req.UIDRange)) &&
			(req.SuppressPrefixlen < 0 || r.SuppressPrefixlen == req.SuppressPrefixlen)
	})
	if at < 0 {
		return unix.ENOENT
	}
	k.rules = slices.Delete(k.rules, at, at+1)
	return nil
}

// --- views for the tests ---

// ownedRoutes lists the routes carrying netagent's protocol.
func (k *FakeKernel) routesWith(proto int) []netlink.Route {
	k.mu.Lock()
	defer k.mu.Unlock()
	var out []netlink.Route
	for _, r := range k.routes {
		if int(r.Protocol) == proto {
			out = append(out, r.Route)
		}
	}
	return out
}

// addrOn returns the kernel address with that prefix on dev, if any.
func (k *FakeKernel) addrOn(dev, prefix string) (kernelAddr, bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	p := netip.MustParsePrefix(prefix)
	at := slices.IndexFunc(k.addrs, func(x kernelAddr) bool { return x.index == k.index(dev) && x.prefix == p })
	if at < 0 {
		return kernelAddr{}, false
	}
	return k.addrs[at], true
}

// neighOn returns the kernel entry for ip on dev, if any.
func (k *FakeKernel) neighOn(dev, ip string) (kernelNeigh, bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	at := k.findNeigh(kernelNeigh{index: k.index(dev), ip: netip.MustParseAddr(ip)})
	if at < 0 {
		return kernelNeigh{}, false
	}
	return k.neighs[at], true
}

func macEq(a, b net.HardwareAddr) bool { return bytes.Equal(a, b) }
