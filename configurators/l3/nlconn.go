package l3

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"iter"
	"sync"
	"syscall"

	"github.com/netagent/netagent/internal/netnsx"
	"github.com/vishvananda/netlink/nl"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// chunkSize is how many requests conn.exchange sends in one sendmsg before
// it reads their acknowledgements. The kernel handles every message of a
// sendmsg before the call returns and queues one ack per message on our
// socket; a chunk must fit the receive buffer (rcvBuf) with room to spare,
// or acks are dropped (ENOBUFS).
const chunkSize = 128

// rcvBuf is the receive buffer conn asks for (SO_RCVBUFFORCE as root).
const rcvBuf = 4 << 20

// Request and attribute numbers newer than golang.org/x/sys v0.13.0.
const (
	ifaProto    = 11 // IFA_PROTO, Linux 5.18
	ndaProtocol = 12 // NDA_PROTOCOL, Linux 5.0
)

// rawOps is what the configurators send over a conn: request batches and
// dumps. The configurators hold it as an interface so that unit tests can
// replace the kernel.
type rawOps interface {
	// exchange sends every request and returns one reply per request, in
	// order.
	exchange(reqs []*nl.NetlinkRequest) []reply
	// dump runs one dump request and returns the payloads of the messages
	// of type resType.
	dump(req *nl.NetlinkRequest, resType uint16) ([][]byte, error)
	// dumpEach is dump handing each payload to f as it arrives, without
	// collecting them: b is valid only during the call.
	dumpEach(req *nl.NetlinkRequest, resType uint16, f func(b []byte)) error
	// dumpFiltered is dumpEach with strict checking (NETLINK_GET_STRICT_CHK,
	// Linux 4.20), so that the kernel applies the filters in the request's
	// header and attributes (a route dump's table and protocol) and sends
	// only what passes them. Where the kernel has no strict checking it
	// sends everything: the caller filters too.
	dumpFiltered(req *nl.NetlinkRequest, resType uint16, f func(b []byte)) error
	// ifIndex returns the index of the named interface in the conn's
	// namespace, wrapping ErrNoDevice when there is none.
	ifIndex(name string) (int, error)
	// close releases the conn (a shared conn goes back to its owner).
	close()
	// addrRecords is the namespace's record of adopted addresses (see
	// addrrecord.go); nil without a state directory.
	addrRecords() *addrRecords
	// tableRecord is the namespace's record of the route tables netagent
	// wrote (see routetables.go); nil without a state directory.
	tableRecord() *tableRecord
	// kernelFilters reports whether the kernel applies the filters of a
	// dump request (strict checking, Linux 4.20): else dumpFiltered's
	// answer is every object.
	kernelFilters() bool
}

// reply is the kernel's answer to one request: its ack (err is nil) or
// error, and the notifications it echoed back for a request with
// NLM_F_ECHO (the payloads, in order).
type reply struct {
	err  error
	echo [][]byte
}

// nlRequest is one rtnetlink request.
type nlRequest = nl.NetlinkRequest

// opener opens a rawOps in the target namespace.
type opener func() (rawOps, error)

// conn is an rtnetlink socket opened inside a target namespace for the
// duration of one operation (or one batch). The library's netlink.Handle
// offers no way to send the attributes netagent's ownership marks need on
// addresses and neighbours (IFA_PROTO, NDA_PROTOCOL), nor a rule add without
// NLM_F_EXCL, nor pipelined requests; conn fills those gaps with the
// library's own message types (package nl). It is opened with the Target's
// namespace handle, so it always acts in the target namespace, never in
// the caller's.
type conn struct {
	s   *nl.NetlinkSocket
	pid uint32
	seq uint32
	// broken: the socket failed (not a request): do not reuse it.
	broken bool
	// lax: the kernel has no strict checking, or refused a strict dump
	// request; dumpFiltered dumps unfiltered.
	lax bool
	// probed: strict checking was tried (kernelFilters).
	probed bool
	// sendBuf and rbuf are reused by every request and read on the conn.
	sendBuf, rbuf []byte
	// rec is the namespace's record of adopted addresses, nil for none.
	rec *addrRecords
	// tables is the namespace's record of route tables, nil for none.
	tables *tableRecord
}

var _ rawOps = (*conn)(nil)

// openConn opens a conn in t's namespace.
func openConn(t *netnsx.Target) (*conn, error) {
	s, err := nl.GetNetlinkSocketAt(t.NsHandle(), netns.None(), unix.NETLINK_ROUTE)
	if err != nil {
		return nil, fmt.Errorf("opening rtnetlink socket in namespace %q: %w", t.Name, err)
	}
	if s.SetReceiveBufferSize(rcvBuf, true) != nil {
		_ = s.SetReceiveBufferSize(rcvBuf, false) // not root: the default is still enough
	}
	_ = s.SetExtAck(true) // better error messages; optional
	_ = s.SetReceiveTimeout(&nl.SocketTimeoutTv)
	_ = s.SetSendTimeout(&nl.SocketTimeoutTv)
	pid, err := s.GetPid()
	if err != nil {
		s.Close()
		return nil, fmt.Errorf("rtnetlink socket in namespace %q: %w", t.Name, err)
	}
	return &conn{s: s, pid: pid}, nil
}

func (c *conn) close() { c.s.Close() }

func (c *conn) addrRecords() *addrRecords { return c.rec }

func (c *conn) tableRecord() *tableRecord { return c.tables }

// kernelFilters tries strict checking once (dumpFiltered turns it on for
// each filtered dump): a kernel before 4.20 refuses the option.
func (c *conn) kernelFilters() bool {
	if !c.lax && !c.probed {
		c.probed = true
		if c.setStrict(1) != nil {
			c.lax = true
		} else if c.setStrict(0) != nil {
			c.broken = true
		}
	}
	return !c.lax
}

// openConnIn is openConn with the namespace's records of adopted
// addresses and route tables in stateDir ("": none).
func openConnIn(t *netnsx.Target, stateDir string) (*conn, error) {
	rec, err := newAddrRecords(t, stateDir)
	if err != nil {
		return nil, err
	}
	c, err := openConn(t)
	if err != nil {
		return nil, err
	}
	c.rec = rec
	if rec != nil {
		c.tables = newTableRecord(stateDir, rec.ns)
	}
	return c, nil
}

// exchange sends reqs in chunks of chunkSize, each chunk in one sendmsg,
// and collects the kernel's ack for each request. Every request must ask
// for an ack (NLM_F_ACK).
func (c *conn) exchange(reqs []*nl.NetlinkRequest) []reply {
	replies := make([]reply, len(reqs))
	for start := 0; start < len(reqs); start += chunkSize {
		end := min(start+chunkSize, len(reqs))
		c.exchangeChunk(reqs[start:end], replies[start:end])
	}
	return replies
}

// exchangeChunk sends one chunk. Only its last request asks for an ack:
// the kernel handles the messages of one sendmsg in order and answers a
// request without NLM_F_ACK only when it fails, so when the last ack
// arrives, every earlier request without an error message succeeded. That
// saves a receive per request.
func (c *conn) exchangeChunk(reqs []*nl.NetlinkRequest, replies []reply) {
	first := c.seq + 1
	buf := c.sendBuf[:0]
	for i, r := range reqs {
		c.seq++
		r.Seq = c.seq
		r.Flags |= unix.NLM_F_ACK
		if i < len(reqs)-1 {
			r.Flags &^= unix.NLM_F_ACK
		}
		buf = appendRequest(buf, r)
	}
	c.sendBuf = buf
	if err := unix.Sendto(c.s.GetFd(), buf, 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		c.broken = true
		fillErrs(replies, fmt.Errorf("sending netlink requests: %w", err))
		return
	}
	last := len(reqs) - 1
	for done := false; !done; {
		b, err := c.recv()
		if err != nil {
			c.broken = true
			fillErrs(replies, fmt.Errorf("reading netlink acks: %w", err))
			return
		}
		for m := range messages(b) {
			i := int(m.Header.Seq - first)
			switch {
			case i < 0 || i > last:
			case m.Header.Type != unix.NLMSG_ERROR: // the buffer is reused: copy
				replies[i].echo = append(replies[i].echo, bytes.Clone(m.Data))
			default:
				replies[i].err = ackError(m)
				done = done || i == last
			}
		}
	}
}

// recvBufSize is the buffer conn reads datagrams into: the kernel puts at
// most 32 KiB of dump messages into one, and acks are small.
const recvBufSize = 64 << 10

// recv reads one datagram from the kernel into the conn's buffer (reused
// by the next recv) and returns it. It waits up to nl.SocketTimeoutTv
// (EAGAIN after that), as the library's Receive does, without its two
// allocations per read.
func (c *conn) recv() ([]byte, error) {
	if c.rbuf == nil {
		c.rbuf = make([]byte, recvBufSize)
	}
	fd := c.s.GetFd()
	for {
		n, from, err := unix.Recvfrom(fd, c.rbuf, unix.MSG_TRUNC)
		switch {
		case err == unix.EINTR:
			continue
		case err == unix.EAGAIN:
			if err := waitReadable(fd); err != nil {
				return nil, err
			}
			continue
		case err != nil:
			return nil, err
		}
		if sa, ok := from.(*unix.SockaddrNetlink); !ok || sa.Pid != nl.PidKernel {
			continue // not the kernel's
		}
		if n > len(c.rbuf) {
			return nil, fmt.Errorf("netlink datagram of %d bytes, more than %d: %w", n, len(c.rbuf), unix.EMSGSIZE)
		}
		return c.rbuf[:n], nil
	}
}

// waitReadable waits until fd can be read, for up to nl.SocketTimeoutTv.
func waitReadable(fd int) error {
	timeout := int(nl.SocketTimeoutTv.Sec*1000 + nl.SocketTimeoutTv.Usec/1000)
	for {
		n, err := unix.Poll([]unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}, timeout)
		switch {
		case err == unix.EINTR:
			continue
		case err != nil:
			return err
		case n == 0:
			return unix.EAGAIN
		}
		return nil
	}
}

// messages iterates the netlink messages of a datagram; their Data are
// slices of b. A malformed tail ends the iteration.
func messages(b []byte) iter.Seq[syscall.NetlinkMessage] {
	return func(yield func(syscall.NetlinkMessage) bool) {
		ne := binary.NativeEndian
		for len(b) >= unix.NLMSG_HDRLEN {
			h := syscall.NlMsghdr{Len: ne.Uint32(b[0:4]), Type: ne.Uint16(b[4:6]), Flags: ne.Uint16(b[6:8]),
				Seq: ne.Uint32(b[8:12]), Pid: ne.Uint32(b[12:16])}
			if int(h.Len) < unix.NLMSG_HDRLEN || int(h.Len) > len(b) {
				return
			}
			if !yield(syscall.NetlinkMessage{Header: h, Data: b[unix.NLMSG_HDRLEN:h.Len]}) {
				return
			}
			b = b[min((int(h.Len)+unix.NLMSG_ALIGNTO-1)&^(unix.NLMSG_ALIGNTO-1), len(b)):]
		}
	}
}

// rawData is request data encoded already (see routeMsg.request).
type rawData []byte

func (d rawData) Len() int          { return len(d) }
func (d rawData) Serialize() []byte { return d }

// appendRequest appends the request as it goes on the wire (what
// r.Serialize returns) to b. A request of encoded data only (rawData:
// routes) is framed in place, without the copies Serialize makes.
func appendRequest(b []byte, r *nl.NetlinkRequest) []byte {
	n := unix.SizeofNlMsghdr + len(r.RawData)
	for _, d := range r.Data {
		if _, ok := d.(rawData); !ok {
			return append(b, r.Serialize()...)
		}
		n += d.Len()
	}
	r.Len = uint32(n)
	ne := binary.NativeEndian
	b = ne.AppendUint32(b, r.Len)
	b = ne.AppendUint16(b, r.Type)
	b = ne.AppendUint16(b, r.Flags)
	b = ne.AppendUint32(b, r.Seq)
	b = ne.AppendUint32(b, r.Pid)
	for _, d := range r.Data {
		b = append(b, d.(rawData)...)
	}
	return append(b, r.RawData...)
}

// fillErrs sets err on every reply that has none: after a socket error the
// outcome of the requests is unknown.
func fillErrs(replies []reply, err error) {
	for i := range replies {
		if replies[i].err == nil {
			replies[i].err = err
		}
	}
}

// fillErr sets every element of errs to err.
func fillErr(errs []error, err error) {
	for i := range errs {
		errs[i] = err
	}
}

// ackError decodes an NLMSG_ERROR message: nil for an ack, the errno
// (annotated with the kernel's extended ack message, if any) otherwise.
func ackError(m syscall.NetlinkMessage) error {
	if len(m.Data) < 4 {
		return errors.New("short netlink ack")
	}
	errno := int32(nl.NativeEndian().Uint32(m.Data[0:4]))
	if errno == 0 {
		return nil
	}
	err := error(syscall.Errno(-errno))
	if msg := extAckMessage(m); msg != "" {
		err = fmt.Errorf("%w: %s", err, msg)
	}
	return err
}

// extAckMessage returns the NLMSGERR_ATTR_MSG of an error ack, or "".
func extAckMessage(m syscall.NetlinkMessage) string {
	if m.Header.Flags&unix.NLM_F_ACK_TLVS == 0 || len(m.Data) < 4+unix.SizeofNlMsghdr {
		return ""
	}
	echoed := nl.NativeEndian().Uint32(m.Data[4:8]) // the echoed header's length
	off := 4 + unix.SizeofNlMsghdr
	if m.Header.Flags&unix.NLM_F_CAPPED == 0 {
		off = 4 + int(echoed)
	}
	off = (off + unix.NLMSG_ALIGNTO - 1) &^ (unix.NLMSG_ALIGNTO - 1)
	if off > len(m.Data) {
		return ""
	}
	attrs, err := nl.ParseRouteAttr(m.Data[off:])
	if err != nil {
		return ""
	}
	for _, a := range attrs {
		if a.Attr.Type == nl.NLMSGERR_ATTR_MSG {
			return unix.ByteSliceToString(a.Value)
		}
	}
	return ""
}

// dump runs a dump request on the conn's socket.
func (c *conn) dump(req *nl.NetlinkRequest, resType uint16) ([][]byte, error) {
	var msgs [][]byte
	err := c.dumpEach(req, resType, func(b []byte) { msgs = append(msgs, bytes.Clone(b)) })
	if err != nil && !errors.Is(err, nl.ErrDumpInterrupted) {
		return nil, err
	}
	return msgs, err
}

// dumpEach runs a dump request on the conn's socket, as the library's
// NetlinkRequest.ExecuteIter does, reading into the conn's buffer: the
// payloads it hands to f are valid only during the call. The dump is read
// to its end also when it fails; an error reported by the kernel (an
// errno, nl.ErrDumpInterrupted) leaves the conn usable, a socket error
// does not.
func (c *conn) dumpEach(req *nl.NetlinkRequest, resType uint16, f func(b []byte)) error {
	c.seq++
	req.Seq = c.seq
	c.sendBuf = appendRequest(c.sendBuf[:0], req)
	if err := unix.Sendto(c.s.GetFd(), c.sendBuf, 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		c.broken = true
		return fmt.Errorf("sending netlink dump request: %w", err)
	}
	var d dumpState
	for !d.done {
		b, err := c.recv()
		if err != nil {
			c.broken = true
			return err
		}
		for m := range messages(b) {
			if m.Header.Seq != req.Seq || m.Header.Pid != c.pid {
				continue // an answer to an earlier request
			}
			if d.take(m, resType) {
				f(m.Data)
			}
			if d.done {
				break
			}
		}
	}
	return d.err
}

// dumpFiltered turns strict checking on for one dump (dumpEach) and off
// again: the conn's other requests are made for the lax default. A kernel
// without the option (before 4.20), or one that refuses the request as
// invalid in strict mode (EINVAL: a filter it does not know), gets the
// request unfiltered from then on: the caller filters anyway.
func (c *conn) dumpFiltered(req *nl.NetlinkRequest, resType uint16, f func(b []byte)) error {
	if c.lax || c.setStrict(1) != nil {
		c.lax = true
		return c.dumpEach(req, resType, f)
	}
	err := c.dumpEach(req, resType, f)
	if c.setStrict(0) != nil {
		c.broken = true // strict still: not for the lax requests of others
	}
	if errors.Is(err, unix.EINVAL) && !c.broken {
		c.lax = true
		return c.dumpEach(req, resType, f)
	}
	return err
}

// setStrict sets NETLINK_GET_STRICT_CHK on the conn's socket.
func (c *conn) setStrict(on int) error {
	return unix.SetsockoptInt(c.s.GetFd(), unix.SOL_NETLINK, unix.NETLINK_GET_STRICT_CHK, on)
}

// dumpState follows the messages of one dump.
type dumpState struct {
	done bool
	intr bool
	err  error
}

// dumpEndError is the error the message ending a dump carries, if any.
func dumpEndError(m syscall.NetlinkMessage) error {
	switch {
	case len(m.Data) < 4:
		return nil
	case m.Header.Type == unix.NLMSG_ERROR:
		return ackError(m)
	}
	if errno := int32(binary.NativeEndian.Uint32(m.Data[0:4])); errno != 0 {
		return syscall.Errno(-errno)
	}
	return nil
}

// take records what m says about the dump and reports whether it is a
// payload of type resType.
func (d *dumpState) take(m syscall.NetlinkMessage, resType uint16) bool {
	if m.Header.Flags&unix.NLM_F_DUMP_INTR != 0 {
		d.intr = true
	}
	switch m.Header.Type {
	case unix.NLMSG_DONE, unix.NLMSG_ERROR:
		d.done = true
		if d.err = dumpEndError(m); d.err == nil && d.intr {
			d.err = nl.ErrDumpInterrupted
		}
		return false
	}
	if m.Header.Flags&unix.NLM_F_MULTI == 0 {
		d.done = true
		if d.intr {
			d.err = nl.ErrDumpInterrupted
		}
	}
	return m.Header.Type == resType
}

// ifIndex asks for the interface index with SIOCGIFINDEX on the conn's
// socket: the kernel answers it for any socket, in the socket's namespace,
// for a fraction of the cost of an RTM_GETLINK.
func (c *conn) ifIndex(name string) (int, error) {
	ifr, err := unix.NewIfreq(name)
	if err != nil {
		return 0, fmt.Errorf("%w %q: %w", ErrNoDevice, name, err)
	}
	if err := unix.IoctlIfreq(c.s.GetFd(), unix.SIOCGIFINDEX, ifr); err != nil {
		if errors.Is(err, unix.ENODEV) {
			return 0, fmt.Errorf("%w %s", ErrNoDevice, name)
		}
		return 0, fmt.Errorf("looking up device %s: %w", name, err)
	}
	return int(ifr.Uint32()), nil
}

// sharedConn is the one conn the configurators of a target share, opened
// on first use and kept (a new one replaces a broken one). Opening a
// socket in another namespace costs about as much as a route change, so
// one per operation would halve the speed of single operations. Users take
// it with open and give it back with close; one at a time.
type sharedConn struct {
	t *netnsx.Target
	// stateDir holds the record of adopted addresses ("": none).
	stateDir string
	mu       sync.Mutex
	c        *conn
}

// open takes the shared conn, opening it if needed.
func (s *sharedConn) open() (rawOps, error) {
	s.mu.Lock()
	if s.c == nil || s.c.broken {
		if s.c != nil {
			s.c.close()
		}
		c, err := openConnIn(s.t, s.stateDir)
		if err != nil {
			s.c = nil
			s.mu.Unlock()
			return nil, err
		}
		s.c = c
	}
	return lentConn{s.c, s}, nil
}

// lentConn is the shared conn while taken; close gives it back.
type lentConn struct {
	*conn
	owner *sharedConn
}

func (l lentConn) close() { l.owner.mu.Unlock() }

// newRequest starts a request that asks for an ack.
func newRequest(msgType uint16, flags int) *nl.NetlinkRequest {
	return nl.NewNetlinkRequest(int(msgType), flags|unix.NLM_F_ACK)
}

// newDump starts a dump request.
func newDump(msgType uint16) *nl.NetlinkRequest {
	return nl.NewNetlinkRequest(int(msgType), unix.NLM_F_DUMP)
}
