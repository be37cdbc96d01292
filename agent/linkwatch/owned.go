package linkwatch

import (
	"encoding/binary"
	"fmt"
	"unsafe"

	"github.com/sirupsen/logrus"
	"github.com/vishvananda/netlink/nl"
	"github.com/vishvananda/netns"
	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"

	"github.com/netagent/netagent/items"
)

// NewOwned returns a watcher of netagent's own routes, addresses and
// neighbours (those with items.RouteProtocol's mark) in the named
// namespace ("" = the caller's own): an
// RTNLGRP_IPV4_ROUTE, IPV6_ROUTE, IPV4_IFADDR, IPV6_IFADDR and NEIGH
// subscription whose socket carries a classic BPF filter (ownedFilter)
// that drops, in the kernel, every notification of an object without
// the mark: another owner's full routing table changing all the
// time never wakes the reader. An event names the kinds of the objects
// that changed ("route", "address", "neighbor"); as with links, it only
// says "look again".
func NewOwned(netnsName string, log logrus.FieldLogger) *Netlink {
	w := NewNetlink(netnsName, log)
	w.log = log.WithField("watch", "owned objects")
	w.what = "owned object"
	w.open = func(ns netns.NsHandle, rcvbuf int) (linkSocket, error) {
		return openOwnedSocket(ns, rcvbuf, items.RouteProtocol, w.log)
	}
	return w
}

// ownedGroups are the multicast groups of the objects NewOwned watches.
var ownedGroups = []uint{unix.RTNLGRP_IPV4_ROUTE, unix.RTNLGRP_IPV6_ROUTE,
	unix.RTNLGRP_IPV4_IFADDR, unix.RTNLGRP_IPV6_IFADDR, unix.RTNLGRP_NEIGH}

// ownedSocket is the subscription of NewOwned.
type ownedSocket struct {
	s     *nl.NetlinkSocket
	proto uint8
}

// openOwnedSocket subscribes to ownedGroups in ns and attaches
// ownedFilter. A kernel that refuses the filter (none known: netlink
// sockets take socket filters since Linux 2.6) still gets a working
// subscription, filtered here instead, and a warning.
func openOwnedSocket(ns netns.NsHandle, rcvbuf int, proto uint8, log logrus.FieldLogger) (linkSocket, error) {
	s, err := nl.SubscribeAt(ns, netns.None(), unix.NETLINK_ROUTE, ownedGroups...)
	if err != nil {
		return nil, err
	}
	if err := setReceiveBuffer(s, rcvbuf); err != nil {
		s.Close()
		return nil, err
	}
	if err := attachFilter(s.GetFd(), ownedFilter(proto)); err != nil {
		log.WithError(err).Warn("no socket filter on the subscription: other owners' notifications are dropped in netagent, not in the kernel")
	}
	return &ownedSocket{s: s, proto: proto}, nil
}

// attachFilter attaches the classic BPF program to the socket
// (SO_ATTACH_FILTER).
func attachFilter(fd int, prog []bpf.Instruction) error {
	raw, err := bpf.Assemble(prog)
	if err != nil {
		return fmt.Errorf("assembling the socket filter: %w", err)
	}
	f := make([]unix.SockFilter, len(raw))
	for i, r := range raw {
		f[i] = unix.SockFilter{Code: r.Op, Jt: r.Jt, Jf: r.Jf, K: r.K}
	}
	fprog := unix.SockFprog{Len: uint16(len(f)), Filter: unsafe.SliceData(f)}
	if err := unix.SetsockoptSockFprog(fd, unix.SOL_SOCKET, unix.SO_ATTACH_FILTER, &fprog); err != nil {
		return fmt.Errorf("attaching the socket filter: %w", err)
	}
	return nil
}

func (o *ownedSocket) close() { o.s.Close() }

// receive reads one datagram and returns the kinds of the owned objects
// its notifications are about (the filter already dropped the others;
// ownedKind checks again, for a socket without it).
func (o *ownedSocket) receive() ([]string, error) {
	return receiveFrom(o.s, "owned object", func(typ uint16, b []byte) (string, bool) {
		k := ownedKind(typ, b, o.proto)
		return k, k != ""
	})
}

// Where the ownership mark is in a notification's payload: a route's
// rtm_protocol (byte 5 of its rtmsg), an address's IFA_PROTO attribute
// after its ifaddrmsg, a neighbour's NDA_PROTOCOL after its ndmsg.
const (
	rtmProtocolOff = 5
	ifaProto       = 11 // IFA_PROTO, Linux 5.18
	ndaProtocol    = 12 // NDA_PROTOCOL, Linux 5.0
	sizeofNdmsg    = 12
	// walkedAttrs is how many attributes the filter looks at for the
	// mark: the kernel puts IFA_PROTO after at most six (an IPv6 peer
	// address's IFA_LOCAL, IFA_ADDRESS, IFA_RT_PRIORITY, IFA_CACHEINFO,
	// IFA_FLAGS) and NDA_PROTOCOL after at most four.
	walkedAttrs = 10
)

// ownedKind is the kind of the object of a notification when it carries
// proto's mark, else "".
func ownedKind(typ uint16, b []byte, proto uint8) string {
	switch typ {
	case unix.RTM_NEWROUTE, unix.RTM_DELROUTE:
		if len(b) > rtmProtocolOff && b[rtmProtocolOff] == proto {
			return "route"
		}
	case unix.RTM_NEWADDR, unix.RTM_DELADDR:
		if attrByte(b, unix.SizeofIfAddrmsg, ifaProto) == int(proto) {
			return "address"
		}
	case unix.RTM_NEWNEIGH, unix.RTM_DELNEIGH:
		if attrByte(b, sizeofNdmsg, ndaProtocol) == int(proto) {
			return "neighbor"
		}
	}
	return ""
}

// attrByte is the first byte of the attribute typ among the first
// walkedAttrs attributes after hdr bytes of b, or -1.
func attrByte(b []byte, hdr int, typ uint16) int {
	if len(b) < hdr {
		return -1
	}
	b = b[hdr:]
	for range walkedAttrs {
		if len(b) < unix.SizeofRtAttr {
			return -1
		}
		l := int(binary.NativeEndian.Uint16(b[0:2]))
		if l < unix.SizeofRtAttr || l > len(b) {
			return -1
		}
		if binary.NativeEndian.Uint16(b[2:4])&0xff == typ && l > unix.SizeofRtAttr {
			return int(b[unix.SizeofRtAttr])
		}
		b = b[min(len(b), (l+unix.RTA_ALIGNTO-1)&^(unix.RTA_ALIGNTO-1)):]
	}
	return -1
}

// keepAll is a filter's verdict that keeps the whole message.
const keepAll = 0xffffffff

// ownedFilter is the classic BPF program of the subscription: it keeps a
// route, address or neighbour notification only when it carries proto's
// mark (as ownedKind decides), and every other message. The program sees
// one notification (the kernel sends each in a datagram of its own) from
// its netlink header; its loads are big-endian, so the native-endian u16
// fields are read a byte at a time. A load past the message's end drops
// it (an address without IFA_PROTO: another owner's).
func ownedFilter(proto uint8) []bpf.Instruction {
	var a asm
	const hdr = unix.NLMSG_HDRLEN
	a.op(bpf.LoadAbsolute{Off: lo16(4), Size: 1}) // nlmsg_type (< 256)
	a.jeq(unix.RTM_NEWROUTE, "route", "")
	a.jeq(unix.RTM_DELROUTE, "route", "")
	a.jeq(unix.RTM_NEWADDR, "addr", "")
	a.jeq(unix.RTM_DELADDR, "addr", "")
	a.jeq(unix.RTM_NEWNEIGH, "neigh", "")
	a.jeq(unix.RTM_DELNEIGH, "neigh", "")
	a.op(bpf.RetConstant{Val: keepAll}) // a link's, an error: not ours to judge

	a.label("route")
	a.op(bpf.LoadAbsolute{Off: hdr + rtmProtocolOff, Size: 1})
	a.jeq(uint32(proto), "route-keep", "")
	a.op(bpf.RetConstant{Val: 0})
	a.label("route-keep")
	a.op(bpf.RetConstant{Val: keepAll})

	a.label("addr")
	a.walk(hdr+unix.SizeofIfAddrmsg, ifaProto, proto, "addr")
	a.label("neigh")
	a.walk(hdr+sizeofNdmsg, ndaProtocol, proto, "neigh")
	return a.assemble()
}

// lo16 and hi16 are the offsets of the low and high byte of the native
// u16 at off.
func lo16(off uint32) uint32 {
	if binary.NativeEndian.Uint16([]byte{1, 0}) == 1 {
		return off
	}
	return off + 1
}

func hi16(off uint32) uint32 { return off + 1 - (lo16(off) - off) }

// walk appends the unrolled walk over the first walkedAttrs attributes
// from offset start for the attribute typ, keeping the message when its
// first byte is proto. Scratch M[0] holds the offset of the attribute,
// M[1] the high byte of its length.
func (a *asm) walk(start uint32, typ uint16, proto uint8, name string) {
	a.op(bpf.LoadConstant{Dst: bpf.RegA, Val: start})
	a.op(bpf.StoreScratch{Src: bpf.RegA, N: 0})
	for range walkedAttrs {
		a.op(bpf.LoadScratch{Dst: bpf.RegX, N: 0})
		a.op(bpf.LoadIndirect{Off: lo16(2), Size: 1}) // nla_type, flags aside
		a.jeq(uint32(typ), name+"-found", "")
		a.op(bpf.LoadIndirect{Off: hi16(0), Size: 1}) // nla_len
		a.op(bpf.ALUOpConstant{Op: bpf.ALUOpShiftLeft, Val: 8})
		a.op(bpf.StoreScratch{Src: bpf.RegA, N: 1})
		a.op(bpf.LoadIndirect{Off: lo16(0), Size: 1})
		a.op(bpf.LoadScratch{Dst: bpf.RegX, N: 1})
		a.op(bpf.ALUOpX{Op: bpf.ALUOpOr})
		a.jlt(unix.SizeofRtAttr, name+"-drop")
		a.op(bpf.ALUOpConstant{Op: bpf.ALUOpAdd, Val: unix.RTA_ALIGNTO - 1})
		a.op(bpf.ALUOpConstant{Op: bpf.ALUOpAnd, Val: ^uint32(unix.RTA_ALIGNTO - 1)})
		a.op(bpf.LoadScratch{Dst: bpf.RegX, N: 0})
		a.op(bpf.ALUOpX{Op: bpf.ALUOpAdd})
		a.op(bpf.StoreScratch{Src: bpf.RegA, N: 0})
	}
	a.label(name + "-drop")
	a.op(bpf.RetConstant{Val: 0})
	a.label(name + "-found")
	a.op(bpf.LoadScratch{Dst: bpf.RegX, N: 0})
	a.op(bpf.LoadIndirect{Off: unix.SizeofRtAttr, Size: 1})
	a.jeq(uint32(proto), name+"-keep", name+"-drop2")
	a.label(name + "-keep")
	a.op(bpf.RetConstant{Val: keepAll})
	a.label(name + "-drop2")
	a.op(bpf.RetConstant{Val: 0})
}

// asm assembles a BPF program with named jump targets.
type asm struct {
	ins    []bpf.Instruction
	labels map[string]int
	jumps  []asmJump
}

// asmJump is a jump to resolve: to the labels t and f ("": the next
// instruction).
type asmJump struct {
	at   int
	t, f string
}

func (a *asm) op(i bpf.Instruction) { a.ins = append(a.ins, i) }

func (a *asm) label(name string) {
	if a.labels == nil {
		a.labels = map[string]int{}
	}
	a.labels[name] = len(a.ins)
}

func (a *asm) jeq(val uint32, t, f string) { a.cond(bpf.JumpEqual, val, t, f) }
func (a *asm) jlt(val uint32, t string)    { a.cond(bpf.JumpLessThan, val, t, "") }

func (a *asm) cond(c bpf.JumpTest, val uint32, t, f string) {
	a.jumps = append(a.jumps, asmJump{at: len(a.ins), t: t, f: f})
	a.op(bpf.JumpIf{Cond: c, Val: val})
}

// assemble resolves the jumps. A label that is not there, a jump
// backwards or one too far (more than 255 instructions) is a bug in
// ownedFilter: it panics (a test assembles it).
func (a *asm) assemble() []bpf.Instruction {
	skip := func(at int, to string) uint32 {
		if to == "" {
			return 0
		}
		n, ok := a.labels[to]
		if !ok || n <= at {
			panic("linkwatch: bad jump to " + to)
		}
		return uint32(n - at - 1)
	}
	for _, j := range a.jumps {
		i := a.ins[j.at].(bpf.JumpIf)
		t, f := skip(j.at, j.t), skip(j.at, j.f)
		if t > 255 || f > 255 {
			panic("linkwatch: jump too far to " + j.t + j.f)
		}
		i.SkipTrue, i.SkipFalse = uint8(t), uint8(f)
		a.ins[j.at] = i
	}
	return a.ins
}
