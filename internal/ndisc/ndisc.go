// Package ndisc sends IPv6 Router Solicitations (RFC 4861 6.3.7), so
// that an interface whose router advertisements were just turned on
// (ipv6.acceptRA on a link already up) learns its router and prefixes at
// once rather than at the router's next periodic advertisement, which may
// be minutes away. The kernel solicits by itself only when an interface
// comes up (after duplicate address detection of its link-local address);
// systemd-networkd and NetworkManager solicit as this package does.
//
// The message goes from a raw ICMPv6 socket opened in the target
// namespace, with the interface's link-local address as source, to
// all-routers (ff02::2), hop limit 255, with the source link-layer address
// option; the kernel fills in the checksum. The kernel itself takes in
// the advertisement that answers it, as any other.
package ndisc

import (
	"fmt"
	"net"
	"net/netip"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/netagent/netagent/internal/netnsx"
)

// allRouters is ff02::2, where solicitations go.
var allRouters = netip.MustParseAddr("ff02::2")

// Solicit sends one Router Solicitation on ifname in t. It sends nothing,
// and returns nil, when the link is not up with its carrier or has no
// usable link-local address yet: the kernel solicits on its own once it
// is (after DAD).
func Solicit(t *netnsx.Target, ifname string) error {
	link, err := t.NL.LinkByName(ifname)
	if err != nil {
		return fmt.Errorf("router solicitation on %s: %w", ifname, err)
	}
	a := link.Attrs()
	if a.RawFlags&unix.IFF_UP == 0 || a.RawFlags&unix.IFF_LOWER_UP == 0 {
		return nil
	}
	src, ok, err := linkLocal(t, link)
	if err != nil || !ok {
		return err
	}
	msg := Message(a.HardwareAddr)
	err = t.Do(func() error { return send(a.Index, src, msg) })
	if err != nil {
		return fmt.Errorf("router solicitation on %s: %w", ifname, err)
	}
	return nil
}

// Message returns a Router Solicitation: type 133, code 0, the checksum
// left to the kernel, 4 reserved bytes, and the source link-layer address
// option when hw is known.
func Message(hw net.HardwareAddr) []byte {
	msg := []byte{133, 0, 0, 0, 0, 0, 0, 0}
	if len(hw) == 6 {
		msg = append(msg, 1, 1) // option 1, 8 bytes
		msg = append(msg, hw...)
	}
	return msg
}

// linkLocal returns the link's link-local address that has passed DAD.
func linkLocal(t *netnsx.Target, link netlink.Link) (netip.Addr, bool, error) {
	addrs, err := t.NL.AddrList(link, unix.AF_INET6)
	if err != nil {
		return netip.Addr{}, false, fmt.Errorf("router solicitation on %s: listing addresses: %w", link.Attrs().Name, err)
	}
	for _, ad := range addrs {
		ip, ok := netip.AddrFromSlice(ad.IP)
		if ok && ip.Is6() && ip.IsLinkLocalUnicast() && ad.Flags&(unix.IFA_F_TENTATIVE|unix.IFA_F_DADFAILED) == 0 {
			return ip, true, nil
		}
	}
	return netip.Addr{}, false, nil
}

// send sends msg from src on the interface index to all routers, from a
// raw ICMPv6 socket of the calling thread's namespace.
func send(index int, src netip.Addr, msg []byte) error {
	fd, err := unix.Socket(unix.AF_INET6, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.IPPROTO_ICMPV6)
	if err != nil {
		return fmt.Errorf("opening an ICMPv6 socket: %w", err)
	}
	defer unix.Close(fd)
	for _, o := range []struct{ opt, v int }{{unix.IPV6_MULTICAST_HOPS, 255}, {unix.IPV6_MULTICAST_IF, index}, {unix.IPV6_MULTICAST_LOOP, 0}} {
		if err := unix.SetsockoptInt(fd, unix.IPPROTO_IPV6, o.opt, o.v); err != nil {
			return fmt.Errorf("setting ICMPv6 socket option %d: %w", o.opt, err)
		}
	}
	if err := unix.Bind(fd, &unix.SockaddrInet6{Addr: src.As16(), ZoneId: uint32(index)}); err != nil {
		return fmt.Errorf("binding to %s: %w", src, err)
	}
	return unix.Sendto(fd, msg, 0, &unix.SockaddrInet6{Addr: allRouters.As16(), ZoneId: uint32(index)})
}
