package link

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"sync"
	"syscall"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netlink/nl"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"

	"github.com/netagent/netagent/internal/nlattr"
	"github.com/netagent/netagent/items"
)

// rawOps are the few rtnetlink requests that netlink.Handle has no call for:
// the bridge's STP state and forward delay, the in-place change of bond and
// VXLAN settings (netlink's LinkModify resends attributes the kernel refuses
// to change, such as a VXLAN's port and proxy flags), a bridge port's
// cost, and a new link's mark and admin state in one request.
type rawOps interface {
	// linkInfo reads a link's IFLA_INFO_DATA and IFLA_INFO_SLAVE_DATA.
	linkInfo(index int) (infoAttrs, error)
	// setInfoData changes IFLA_INFO_DATA attributes of a link of the given
	// kind in place; only the attributes given are sent.
	setInfoData(index int, kind string, attrs []attr) error
	// setSlaveData changes IFLA_INFO_SLAVE_DATA attributes of a port of a
	// master of the given kind ("bridge", "bond").
	setSlaveData(index int, masterKind string, attrs []attr) error
	// bridgeVLANs dumps the VLANs of every bridge member (the bridges
	// themselves included) by ifindex, canonical; setBridgeVLANs adds
	// (or changes the flags of) or deletes VLANs of one, ranges as
	// ranges, in one request (see port_vlan.go).
	bridgeVLANs() (map[int]items.VLANSet, error)
	setBridgeVLANs(index int, self, del bool, vlans items.VLANSet) error
	// markUp sets a link's alias and, if up, sets it up, in one request
	// (the kernel sets the alias first).
	markUp(index int, alias string, up bool) error
	// readLink reads one link, in one request, as netlink's LinkByIndex
	// would, with rawOps whose linkInfo answers for it from the same read.
	readLink(index int) (netlink.Link, rawOps, error)
}

// attr is one netlink attribute to send.
type attr struct {
	typ int
	val []byte
}

func u8Attr(typ int, v uint8) attr   { return attr{typ, nl.Uint8Attr(v)} }
func u32Attr(typ int, v uint32) attr { return attr{typ, nl.Uint32Attr(v)} }

// infoAttrs are the kind-specific attributes of a link, by type.
type infoAttrs struct {
	data      attrSet // IFLA_INFO_DATA
	slaveData attrSet // IFLA_INFO_SLAVE_DATA
}

func (a infoAttrs) dataU32(typ int) (uint32, bool)  { return u32Of(a.data.get(typ)) }
func (a infoAttrs) dataU8(typ int) (uint8, bool)    { return u8Of(a.data.get(typ)) }
func (a infoAttrs) slaveU32(typ int) (uint32, bool) { return u32Of(a.slaveData.get(typ)) }

// attrSet is one level of netlink attributes by type (NLA_F_* flags
// stripped): the value of type t at index t, nil for none, the last one
// of a type sent twice. The values are slices of the message read. A
// read-back reads one per link of a kind, by the thousand: a slice, made
// in one allocation, where maps and the library's attribute lists took
// a third of what an apply of 500 bridge+VXLAN pairs allocated.
type attrSet [][]byte

// parseAttrSet reads the attributes of b.
func parseAttrSet(b []byte) (attrSet, error) {
	var top uint16
	it := nlattr.Iter{B: b}
	for it.Next() {
		top = max(top, it.Type())
	}
	if it.Err != nil {
		return nil, it.Err
	}
	s := make(attrSet, top+1)
	for it = (nlattr.Iter{B: b}); it.Next(); {
		s[it.Type()] = it.Val
	}
	return s, nil
}

// get is the value of type typ; nil for none.
func (s attrSet) get(typ int) []byte {
	if typ < 0 || typ >= len(s) {
		return nil
	}
	return s[typ]
}

// with returns s with the value of type typ set to v (a fake kernel's
// answers).
func (s attrSet) with(typ int, v []byte) attrSet {
	if typ >= len(s) {
		s = append(s, make(attrSet, typ+1-len(s))...)
	}
	s[typ] = v
	return s
}

func u32Of(b []byte) (uint32, bool) {
	if len(b) < 4 {
		return 0, false
	}
	return binary.NativeEndian.Uint32(b), true
}

func u8Of(b []byte) (uint8, bool) {
	if len(b) < 1 {
		return 0, false
	}
	return b[0], true
}

// rawNL sends the raw requests over an rtnetlink socket opened inside the
// target namespace (never the caller's). The configurators keep theirs
// open (conn: opening one costs two setns calls, as much as the request
// itself); a read-back, made once per call, opens one per request
// (conn nil), so that nothing outlives it.
type rawNL struct {
	ns   netns.NsHandle
	conn *rawConn
}

var _ rawOps = rawNL{}

// persistentRaw returns the rawNL of a configurator: its socket kept open.
func persistentRaw(ns netns.NsHandle) rawNL { return rawNL{ns: ns, conn: &rawConn{}} }

// rawConn is a kept rtnetlink socket, opened at first use and again after
// a failure of the socket (not a refusal by the kernel); one request at a
// time.
type rawConn struct {
	mu sync.Mutex
	sh *nl.SocketHandle
}

func (r rawNL) execute(req *nl.NetlinkRequest, resType uint16) ([][]byte, error) {
	var msgs [][]byte
	err := r.executeIter(req, resType, func(m []byte) bool {
		msgs = append(msgs, m)
		return true
	})
	return msgs, err
}

func (r rawNL) executeIter(req *nl.NetlinkRequest, resType uint16, f func([]byte) bool) error {
	if r.conn == nil {
		s, err := r.open()
		if err != nil {
			return err
		}
		defer s.Close()
		req.Sockets = map[int]*nl.SocketHandle{unix.NETLINK_ROUTE: {Socket: s}}
		return req.ExecuteIter(unix.NETLINK_ROUTE, resType, f)
	}
	c := r.conn
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.sh == nil {
		s, err := r.open()
		if err != nil {
			return err
		}
		c.sh = &nl.SocketHandle{Socket: s}
	}
	req.Sockets = map[int]*nl.SocketHandle{unix.NETLINK_ROUTE: c.sh}
	err := req.ExecuteIter(unix.NETLINK_ROUTE, resType, f)
	var errno syscall.Errno
	if err != nil && !errors.As(err, &errno) {
		c.sh.Close() // a broken socket, or answers left unread: a new one next time
		c.sh = nil
	}
	return err
}

// open opens an rtnetlink socket in the target namespace. It sets no
// receive timeout: the library's Receive turns one into a read deadline,
// reset at every read, and each reset woke an idle Go thread sleeping in
// the network poller (4800 wakeups at 500 bridge+VXLAN pairs, 12% of the
// apply). Nothing waits on the kernel: it answers a request within the
// send (an ack or an error), and a dump's next part within the read that
// asks for it.
func (r rawNL) open() (*nl.NetlinkSocket, error) {
	s, err := nl.GetNetlinkSocketAt(r.ns, netns.None(), unix.NETLINK_ROUTE)
	if err != nil {
		return nil, fmt.Errorf("rtnetlink socket in target namespace: %w", err)
	}
	return s, nil
}

func (r rawNL) linkInfo(index int) (infoAttrs, error) {
	req := nl.NewNetlinkRequest(unix.RTM_GETLINK, unix.NLM_F_ACK)
	msg := nl.NewIfInfomsg(unix.AF_UNSPEC)
	msg.Index = int32(index)
	req.AddData(msg)
	msgs, err := r.execute(req, unix.RTM_NEWLINK)
	if err != nil {
		return infoAttrs{}, err
	}
	if len(msgs) != 1 {
		return infoAttrs{}, fmt.Errorf("link index %d: %d answers to one request", index, len(msgs))
	}
	info, err := linkInfoOf(msgs[0])
	if err != nil {
		return infoAttrs{}, err
	}
	return parseInfo(info)
}

func (r rawNL) readLink(index int) (netlink.Link, rawOps, error) {
	req := nl.NewNetlinkRequest(unix.RTM_GETLINK, unix.NLM_F_ACK)
	msg := nl.NewIfInfomsg(unix.AF_UNSPEC)
	msg.Index = int32(index)
	req.AddData(msg)
	req.AddData(nl.NewRtAttr(unix.IFLA_EXT_MASK, nl.Uint32Attr(nl.RTEXT_FILTER_VF))) // as LinkByIndex asks
	msgs, err := r.execute(req, unix.RTM_NEWLINK)
	if err != nil {
		return nil, nil, err
	}
	if len(msgs) != 1 {
		return nil, nil, fmt.Errorf("link index %d: %d answers to one request", index, len(msgs))
	}
	l, err := netlink.LinkDeserialize(nil, msgs[0])
	if err != nil {
		return nil, nil, err
	}
	info, err := linkInfoOf(msgs[0])
	if err != nil {
		return nil, nil, err
	}
	return l, &dumpedInfo{rawOps: r, dumped: true, infos: map[int][]byte{index: info}}, nil
}

// linkMsgs dumps every link: the value of its IFLA_LINKINFO (what
// parseInfo reads; nil for a link without), copied, by ifindex. The
// messages are read one at a time, not held whole.
func (r rawNL) linkMsgs() (map[int][]byte, error) {
	req := nl.NewNetlinkRequest(unix.RTM_GETLINK, unix.NLM_F_DUMP)
	req.AddData(nl.NewIfInfomsg(unix.AF_UNSPEC))
	byIndex := map[int][]byte{}
	var perr error
	err := r.executeIter(req, unix.RTM_NEWLINK, func(m []byte) bool {
		if len(m) < unix.SizeofIfInfomsg {
			return true
		}
		info, err := linkInfoOf(m)
		if err != nil {
			perr = err
			return false
		}
		byIndex[int(nl.DeserializeIfInfomsg(m).Index)] = slices.Clone(info)
		return true
	})
	return byIndex, cmp.Or(perr, err)
}

// linkDumper is a rawOps that dumps every link's message at once (rawNL;
// the fake kernel reads them one by one).
type linkDumper interface {
	linkMsgs() (map[int][]byte, error)
}

// dumpedInfo is a rawOps whose linkInfo answers from one dump of every
// link, made at its first call, for a read-back that reads every bridge
// and bridge port: one request instead of one per link. A link the dump
// did not hold, or a failed dump (interrupted by a change), is read on its
// own.
type dumpedInfo struct {
	rawOps
	dumped bool
	infos  map[int][]byte // IFLA_LINKINFO by ifindex (see linkMsgs)
}

func (d *dumpedInfo) linkInfo(index int) (infoAttrs, error) {
	if !d.dumped {
		d.dumped = true
		if dumper, ok := d.rawOps.(linkDumper); ok {
			d.infos, _ = dumper.linkMsgs()
		}
	}
	if info, ok := d.infos[index]; ok {
		return parseInfo(info)
	}
	return d.rawOps.linkInfo(index)
}

// linkInfoOf is the value of an RTM_NEWLINK message's IFLA_LINKINFO, a
// slice of m; nil when it has none.
func linkInfoOf(m []byte) ([]byte, error) {
	if len(m) < unix.SizeofIfInfomsg {
		return nil, fmt.Errorf("short RTM_NEWLINK message")
	}
	it := nlattr.Iter{B: m[unix.SizeofIfInfomsg:]}
	for it.Next() {
		if it.Type() == unix.IFLA_LINKINFO {
			return it.Val, nil
		}
	}
	return nil, it.Err
}

// parseInfo digs the data and slave data out of an IFLA_LINKINFO value.
func parseInfo(info []byte) (infoAttrs, error) {
	var out infoAttrs
	it := nlattr.Iter{B: info}
	for it.Next() {
		var err error
		switch it.Type() {
		case nl.IFLA_INFO_DATA:
			out.data, err = parseAttrSet(it.Val)
		case nl.IFLA_INFO_SLAVE_DATA:
			out.slaveData, err = parseAttrSet(it.Val)
		}
		if err != nil {
			return out, err
		}
	}
	return out, it.Err
}

func (r rawNL) setInfoData(index int, kind string, attrs []attr) error {
	return r.setLinkInfo(index, nl.IFLA_INFO_KIND, kind, nl.IFLA_INFO_DATA, attrs)
}

func (r rawNL) setSlaveData(index int, masterKind string, attrs []attr) error {
	return r.setLinkInfo(index, nl.IFLA_INFO_SLAVE_KIND, masterKind, nl.IFLA_INFO_SLAVE_DATA, attrs)
}

func (r rawNL) setLinkInfo(index, kindType int, kind string, dataType int, attrs []attr) error {
	req := nl.NewNetlinkRequest(unix.RTM_NEWLINK, unix.NLM_F_ACK)
	msg := nl.NewIfInfomsg(unix.AF_UNSPEC)
	msg.Index = int32(index)
	req.AddData(msg)
	info := nl.NewRtAttr(unix.IFLA_LINKINFO, nil)
	info.AddRtAttr(kindType, nl.NonZeroTerminated(kind))
	data := info.AddRtAttr(dataType, nil)
	for _, a := range attrs {
		data.AddRtAttr(a.typ, a.val)
	}
	req.AddData(info)
	_, err := r.execute(req, 0)
	return err
}

func (r rawNL) markUp(index int, alias string, up bool) error {
	req := nl.NewNetlinkRequest(unix.RTM_SETLINK, unix.NLM_F_ACK)
	msg := nl.NewIfInfomsg(unix.AF_UNSPEC)
	msg.Index = int32(index)
	if up {
		msg.Flags, msg.Change = unix.IFF_UP, unix.IFF_UP
	}
	req.AddData(msg)
	req.AddData(nl.NewRtAttr(unix.IFLA_IFALIAS, []byte(alias)))
	_, err := r.execute(req, 0)
	return err
}
