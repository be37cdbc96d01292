package probe

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"time"

	"github.com/mdlayher/packet"
	"golang.org/x/sys/unix"

	"github.com/netagent/netagent/internal/netnsx"
)

// Arping passes when one of Count ARP requests for Addr, broadcast on Dev
// one every Interval, is answered by Addr within Timeout of the first.
type Arping struct {
	Addr netip.Addr
	Dev  string
	Schedule
}

func (p *Arping) String() string {
	return "arping:" + p.Addr.String() + "@" + p.Dev + p.Schedule.options()
}

func parseArping(target, opts string) (Probe, error) {
	host, dev, ok := strings.Cut(target, "@")
	if !ok || dev == "" {
		return nil, fmt.Errorf("want arping:ADDR@DEV")
	}
	if len(dev) >= unix.IFNAMSIZ || strings.ContainsAny(dev, "/ \t") {
		return nil, fmt.Errorf("%q is not a link name", dev)
	}
	addr, err := parseHost(host)
	if err != nil {
		return nil, err
	}
	if !addr.Is4() {
		return nil, fmt.Errorf("arping asks ARP, for IPv4 addresses only: probe an IPv6 neighbour with ping:%s%%%s", addr.WithZone(""), dev)
	}
	p := &Arping{Addr: addr, Dev: dev, Schedule: defaultSchedule()}
	if err := p.Schedule.parse(opts); err != nil {
		return nil, err
	}
	return p, nil
}

// arpLen is an Ethernet/IPv4 ARP packet's length.
const arpLen = 28

// Run opens a packet socket for ARP on Dev inside the namespace, and
// exchanges through it from here.
func (p *Arping) Run(ctx context.Context, tgt *netnsx.Target) error {
	c, req, err := p.open(tgt)
	if err != nil {
		return fmt.Errorf("probe %s: %w", p, err)
	}
	defer c.Close()
	stop := context.AfterFunc(ctx, func() { c.SetDeadline(time.Now()) })
	defer stop()
	err = p.exchange(ctx, c, req)
	if ctx.Err() != nil {
		return fmt.Errorf("probe %s: %w", p, ctx.Err())
	}
	if err != nil {
		return fmt.Errorf("probe %s: %w", p, err)
	}
	return nil
}

// open makes the socket and the request: from Dev's address and the
// first IPv4 address on it (none: 0.0.0.0, an ARP probe, RFC 5227).
func (p *Arping) open(tgt *netnsx.Target) (*packet.Conn, []byte, error) {
	l, err := tgt.NL.LinkByName(p.Dev)
	if err != nil {
		return nil, nil, fmt.Errorf("link %s: %w", p.Dev, err)
	}
	a := l.Attrs()
	if len(a.HardwareAddr) != 6 {
		return nil, nil, fmt.Errorf("link %s has no Ethernet address: ARP needs one", p.Dev)
	}
	src := netip.IPv4Unspecified()
	if addrs, err := tgt.NL.AddrList(l, unix.AF_INET); err == nil && len(addrs) > 0 {
		if s, ok := netip.AddrFromSlice(addrs[0].IP.To4()); ok {
			src = s
		}
	}
	var c *packet.Conn
	ifi := &net.Interface{Index: a.Index, Name: a.Name, HardwareAddr: a.HardwareAddr}
	err = tgt.Do(func() (err error) {
		c, err = packet.Listen(ifi, packet.Datagram, unix.ETH_P_ARP, nil)
		return err
	})
	if err != nil {
		return nil, nil, fmt.Errorf("ARP socket on %s: %w", p.Dev, err)
	}
	return c, arpRequest(a.HardwareAddr, src, p.Addr), nil
}

func arpRequest(mac net.HardwareAddr, src, dst netip.Addr) []byte {
	b := make([]byte, 0, arpLen)
	b = binary.BigEndian.AppendUint16(b, 1)      // hardware: Ethernet
	b = binary.BigEndian.AppendUint16(b, 0x0800) // protocol: IPv4
	b = append(b, 6, 4)
	b = binary.BigEndian.AppendUint16(b, 1) // request
	b = append(b, mac...)
	b = append(b, src.AsSlice()...)
	b = append(b, make([]byte, 6)...)
	return append(b, dst.AsSlice()...)
}

// isReply reports whether b is Addr's ARP reply to the request req.
func (p *Arping) isReply(b, req []byte) bool {
	return len(b) >= arpLen && bytes.Equal(b[:6], req[:6]) &&
		binary.BigEndian.Uint16(b[6:8]) == 2 &&
		bytes.Equal(b[14:18], p.Addr.AsSlice()) && bytes.Equal(b[18:24], req[8:14])
}

// exchange broadcasts the requests on schedule and reads until a reply or
// the timeout, as Ping's exchange does.
func (p *Arping) exchange(ctx context.Context, c *packet.Conn, req []byte) error {
	bcast := &packet.Addr{HardwareAddr: net.HardwareAddr{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}}
	start := time.Now()
	deadline, next := start.Add(p.Timeout), start
	sent := 0
	buf := make([]byte, 1500)
	for {
		if sent < p.Count && !time.Now().Before(next) {
			if _, err := c.WriteTo(req, bcast); err != nil {
				return fmt.Errorf("sending: %w", err)
			}
			sent++
			next = next.Add(p.Interval)
		}
		wait := deadline
		if sent < p.Count && next.Before(wait) {
			wait = next
		}
		c.SetReadDeadline(wait)
		if ctx.Err() != nil { // after the deadline set: Run's AfterFunc woke no read
			return ctx.Err()
		}
		n, _, err := c.ReadFrom(buf)
		switch {
		case err == nil && p.isReply(buf[:n], req):
			return nil
		case err != nil && !isTimeout(err):
			return fmt.Errorf("reading: %w", err)
		case err != nil && !time.Now().Before(deadline):
			return fmt.Errorf("%w: no ARP reply to %d requests within %v", ErrFailed, sent, p.Timeout)
		}
	}
}
