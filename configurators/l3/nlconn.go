package l3

import (
	"errors"
	"fmt"
	"syscall"

	"github.com/netagent/netagent/configurators/netnsx"
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
	// exchange sends every request and returns one error (or nil) per
	// request, in order.
	exchange(reqs []*nl.NetlinkRequest) []error
	// dump runs one dump request and returns the payloads of the messages
	// of type resType.
	dump(req *nl.NetlinkRequest, resType uint16) ([][]byte, error)
	close()
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
}

var _ rawOps = (*conn)(nil)

// openConn opens a conn in t's namespace.
func openConn(t *netnsx.Target) (rawOps, error) {
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

// exchange sends reqs in chunks of chunkSize, each chunk in one sendmsg,
// and collects the kernel's ack for each request. Every request must ask
// for an ack (NLM_F_ACK).
func (c *conn) exchange(reqs []*nl.NetlinkRequest) []error {
	errs := make([]error, len(reqs))
	for start := 0; start < len(reqs); start += chunkSize {
		end := min(start+chunkSize, len(reqs))
		c.exchangeChunk(reqs[start:end], errs[start:end])
	}
	return errs
}

func (c *conn) exchangeChunk(reqs []*nl.NetlinkRequest, errs []error) {
	first := c.seq + 1
	var buf []byte
	for _, r := range reqs {
		c.seq++
		r.Seq = c.seq
		buf = append(buf, r.Serialize()...)
	}
	if err := unix.Sendto(c.s.GetFd(), buf, 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		fillErr(errs, fmt.Errorf("sending netlink requests: %w", err))
		return
	}
	pending := len(reqs)
	acked := make([]bool, len(reqs))
	for pending > 0 {
		msgs, _, err := c.s.Receive()
		if err != nil {
			fillUnacked(errs, acked, fmt.Errorf("reading netlink acks: %w", err))
			return
		}
		for _, m := range msgs {
			i := int(m.Header.Seq - first)
			if m.Header.Type != unix.NLMSG_ERROR || i < 0 || i >= len(reqs) || acked[i] {
				continue
			}
			acked[i], pending = true, pending-1
			errs[i] = ackError(m)
		}
	}
}

func fillErr(errs []error, err error) {
	for i := range errs {
		errs[i] = err
	}
}

func fillUnacked(errs []error, acked []bool, err error) {
	for i := range errs {
		if !acked[i] {
			errs[i] = err
		}
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
	req.Sockets = map[int]*nl.SocketHandle{unix.NETLINK_ROUTE: {Seq: c.seq, Socket: c.s}}
	msgs, err := req.Execute(unix.NETLINK_ROUTE, resType)
	c.seq = req.Seq
	return msgs, err
}

// newRequest starts a request that asks for an ack.
func newRequest(msgType uint16, flags int) *nl.NetlinkRequest {
	return nl.NewNetlinkRequest(int(msgType), flags|unix.NLM_F_ACK)
}

// newDump starts a dump request.
func newDump(msgType uint16) *nl.NetlinkRequest {
	return nl.NewNetlinkRequest(int(msgType), unix.NLM_F_DUMP)
}
