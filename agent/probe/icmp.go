package probe

import (
	"bytes"
	"context"
	crand "crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/netip"
	"os"
	"strconv"
	"syscall"
	"time"

	"github.com/netagent/netagent/internal/netnsx"
	"golang.org/x/sys/unix"
)

const (
	icmpEchoRequest  = 8
	icmpEchoReply    = 0
	icmp6EchoRequest = 128
	icmp6EchoReply   = 129
	tokenLen         = 16
)

// echoConn is one ICMP socket made in a target namespace, sending echo
// requests to one address and recognising the replies to them.
type echoConn struct {
	f     *os.File
	rc    syscall.RawConn
	raw   bool // a raw socket: we own the id, and IPv4 replies carry the IP header
	v6    bool
	dst   unix.Sockaddr
	addr  netip.Addr
	id    uint16
	token [tokenLen]byte
	buf   []byte
}

func openEcho(tgt *netnsx.Target, addr netip.Addr) (*echoConn, error) {
	c := &echoConn{v6: addr.Is6(), addr: addr, id: uint16(rand.Uint32()), buf: make([]byte, 2048)}
	crand.Read(c.token[:])
	fd := -1
	err := tgt.Do(func() error {
		var err error
		if c.dst, err = sockaddr(addr); err != nil {
			return err
		}
		fd, c.raw, err = echoSocket(c.v6)
		return err
	})
	if err != nil {
		return nil, err
	}
	c.f = os.NewFile(uintptr(fd), "icmp:"+addr.String())
	if c.rc, err = c.f.SyscallConn(); err != nil {
		c.f.Close()
		return nil, err
	}
	return c, nil
}

// echoSocket opens an unprivileged ping socket when ping_group_range lets
// us, a raw ICMP socket otherwise. Call it inside the namespace.
func echoSocket(v6 bool) (fd int, raw bool, err error) {
	family, proto := unix.AF_INET, unix.IPPROTO_ICMP
	if v6 {
		family, proto = unix.AF_INET6, unix.IPPROTO_ICMPV6
	}
	const flags = unix.SOCK_NONBLOCK | unix.SOCK_CLOEXEC
	fd, derr := unix.Socket(family, unix.SOCK_DGRAM|flags, proto)
	if derr == nil {
		return fd, false, nil
	}
	fd, rerr := unix.Socket(family, unix.SOCK_RAW|flags, proto)
	if rerr != nil {
		return -1, false, fmt.Errorf("opening an ICMP socket: ping socket: %w (see net.ipv4.ping_group_range); raw socket: %w", derr, rerr)
	}
	return fd, true, nil
}

// sockaddr converts addr; a zone names a link of the namespace we are in.
func sockaddr(addr netip.Addr) (unix.Sockaddr, error) {
	if addr.Is4() {
		return &unix.SockaddrInet4{Addr: addr.As4()}, nil
	}
	sa := &unix.SockaddrInet6{Addr: addr.As16()}
	if z := addr.Zone(); z != "" {
		if n, err := strconv.ParseUint(z, 10, 32); err == nil {
			sa.ZoneId = uint32(n)
		} else if ifi, err := net.InterfaceByName(z); err == nil {
			sa.ZoneId = uint32(ifi.Index)
		} else {
			return nil, fmt.Errorf("zone %q: %w", z, err)
		}
	}
	return sa, nil
}

func (c *echoConn) close() { c.f.Close() }

// request builds an echo request: type, code, checksum, id, seq, token.
// The kernel fills the checksum of ICMPv6 and of ping sockets; a raw IPv4
// socket sends what we give it.
func (c *echoConn) request(seq uint16) []byte {
	b := make([]byte, 8+tokenLen)
	b[0] = icmpEchoRequest
	if c.v6 {
		b[0] = icmp6EchoRequest
	}
	binary.BigEndian.PutUint16(b[4:], c.id)
	binary.BigEndian.PutUint16(b[6:], seq)
	copy(b[8:], c.token[:])
	if !c.v6 {
		binary.BigEndian.PutUint16(b[2:], checksum(b))
	}
	return b
}

// checksum is the Internet checksum (RFC 1071).
func checksum(b []byte) uint16 {
	var sum uint32
	for i := 0; i+1 < len(b); i += 2 {
		sum += uint32(b[i])<<8 | uint32(b[i+1])
	}
	if len(b)%2 == 1 {
		sum += uint32(b[len(b)-1]) << 8
	}
	for sum>>16 != 0 {
		sum = sum&0xffff + sum>>16
	}
	return ^uint16(sum)
}

func (c *echoConn) send(seq uint16) error {
	pkt := c.request(seq)
	var serr error
	err := c.rc.Write(func(fd uintptr) bool {
		serr = unix.Sendto(int(fd), pkt, 0, c.dst)
		return serr != unix.EAGAIN
	})
	if err == nil {
		err = serr
	}
	if err != nil {
		return fmt.Errorf("sending echo request %d: %w", seq, err)
	}
	return nil
}

// recv reads one packet, waiting until wait at most, and reports whether
// it answers one of the first sent requests.
func (c *echoConn) recv(wait time.Time, sent int) (bool, error) {
	if err := c.f.SetReadDeadline(wait); err != nil {
		return false, err
	}
	var n int
	var from unix.Sockaddr
	var rerr error
	err := c.rc.Read(func(fd uintptr) bool {
		n, from, rerr = unix.Recvfrom(int(fd), c.buf, 0)
		return rerr != unix.EAGAIN
	})
	if err == nil {
		err = rerr
	}
	if err != nil {
		return false, err
	}
	return c.matches(c.buf[:n], from, sent), nil
}

// matches reports whether b, received from from, is the echo reply of
// this probe from its address to a request it sent.
func (c *echoConn) matches(b []byte, from unix.Sockaddr, sent int) bool {
	if c.raw && !c.v6 {
		if len(b) < 20 || len(b) < int(b[0]&0x0f)*4 {
			return false
		}
		b = b[int(b[0]&0x0f)*4:]
	}
	want := byte(icmpEchoReply)
	if c.v6 {
		want = icmp6EchoReply
	}
	switch {
	case len(b) < 8+tokenLen || b[0] != want || b[1] != 0:
		return false
	case c.raw && binary.BigEndian.Uint16(b[4:]) != c.id: // a ping socket's id is the kernel's, which filters by it
		return false
	case int(binary.BigEndian.Uint16(b[6:])) >= sent:
		return false
	case !bytes.Equal(b[8:8+tokenLen], c.token[:]):
		return false
	}
	return fromAddr(from) == c.addr.WithZone("")
}

func fromAddr(sa unix.Sockaddr) netip.Addr {
	switch sa := sa.(type) {
	case *unix.SockaddrInet4:
		return netip.AddrFrom4(sa.Addr)
	case *unix.SockaddrInet6:
		return netip.AddrFrom16(sa.Addr)
	}
	return netip.Addr{}
}

// isTimeout reports a deadline reached (a socket's or a context's).
func isTimeout(err error) bool {
	return errors.Is(err, os.ErrDeadlineExceeded) || errors.Is(err, context.DeadlineExceeded)
}

// isTransient reports an error a later echo may still overcome: ICMP
// errors the kernel hands to the socket, like an unreachable host.
func isTransient(err error) bool {
	for _, e := range []error{unix.EHOSTUNREACH, unix.ENETUNREACH, unix.ECONNREFUSED, unix.EHOSTDOWN, unix.EPROTO, unix.EMSGSIZE} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}
