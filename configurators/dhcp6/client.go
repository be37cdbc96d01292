package dhcp6

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"time"

	"github.com/insomniacslk/dhcp/dhcpv6"
	"github.com/insomniacslk/dhcp/dhcpv6/nclient6"
	"github.com/insomniacslk/dhcp/iana"
	"github.com/netagent/netagent/configurators/netnsx"
	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// Exchanger runs one SOLICIT-ADVERTISE-REQUEST-REPLY exchange on a link
// and returns the REPLY: the client's only access to the network. want,
// when valid, is the address to ask for (the kept lease's).
type Exchanger interface {
	Exchange(ctx context.Context, ifname string, want netip.Addr) (*dhcpv6.Message, error)
}

// Client acquires leases through an Exchanger.
type Client struct {
	X   Exchanger
	Now func() time.Time // nil: time.Now
}

// Acquire runs an exchange on ifname until ctx ends and returns the lease;
// want (may be the zero Addr) is the address to ask for.
func (c *Client) Acquire(ctx context.Context, ifname string, want netip.Addr) (*Lease, error) {
	reply, err := c.X.Exchange(ctx, ifname, want)
	if err != nil {
		return nil, fmt.Errorf("acquiring a DHCPv6 lease on %s: %w", ifname, err)
	}
	now := time.Now
	if c.Now != nil {
		now = c.Now
	}
	l, err := LeaseFromReply(ifname, reply, now())
	if err != nil {
		return nil, fmt.Errorf("DHCPv6 lease on %s: %w", ifname, err)
	}
	return l, nil
}

// NetnsExchanger is the real Exchanger: nclient6 with its socket opened in
// the target namespace. Retry is how many times a SOLICIT or REQUEST goes
// out, Timeout how long each waits for an answer.
type NetnsExchanger struct {
	Target  *netnsx.Target
	Timeout time.Duration // 0: 2s
	Retry   int           // 0: until ctx ends
	// LinkLocalWait bounds the wait for a usable link-local address
	// (0: 10s).
	LinkLocalWait time.Duration
}

// Exchange implements Exchanger.
func (x *NetnsExchanger) Exchange(ctx context.Context, ifname string, want netip.Addr) (*dhcpv6.Message, error) {
	timeout, retry := x.Timeout, x.Retry
	if timeout == 0 {
		timeout = 2 * time.Second
	}
	if retry == 0 {
		retry = 1 << 30 // bounded by ctx
	}
	wait := x.LinkLocalWait
	if wait == 0 {
		wait = 10 * time.Second
	}
	llctx, cancel := context.WithTimeout(ctx, wait)
	ll, err := x.waitLinkLocal(llctx, ifname)
	cancel()
	if err != nil {
		return nil, err
	}
	var c *nclient6.Client
	var hw net.HardwareAddr
	err = x.Target.Do(func() error {
		iface, err := net.InterfaceByName(ifname)
		if err != nil {
			return err
		}
		hw = iface.HardwareAddr
		conn, err := net.ListenUDP("udp6", &net.UDPAddr{IP: ll.AsSlice(), Port: dhcpv6.DefaultClientPort, Zone: ifname})
		if err != nil {
			return fmt.Errorf("opening a DHCPv6 socket: %w", err)
		}
		c, err = nclient6.NewWithConn(conn, hw, nclient6.WithTimeout(timeout), nclient6.WithRetry(retry))
		if err != nil {
			conn.Close()
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	defer c.Close()
	adv, err := c.Solicit(ctx, Modifiers(hw, want)...)
	if err != nil {
		return nil, err
	}
	return c.Request(ctx, adv)
}

// Modifiers returns what the client adds to its SOLICIT: a DUID-LL of the
// MAC address (the same after a restart, so that the server knows the
// client again) and, when valid, the address it asks for.
func Modifiers(hw net.HardwareAddr, want netip.Addr) []dhcpv6.Modifier {
	mods := []dhcpv6.Modifier{dhcpv6.WithClientID(&dhcpv6.DUIDLL{HWType: iana.HWTypeEthernet, LinkLayerAddr: hw})}
	if want.IsValid() {
		mods = append(mods, dhcpv6.WithIANA(dhcpv6.OptIAAddress{IPv6Addr: want.AsSlice()}))
	}
	return mods
}

// waitLinkLocal waits, on the namespace's address events, until ifname
// has a link-local address that is not tentative (duplicate address
// detection takes a second or two after the link comes up), and returns
// it. A link-local address that failed DAD is ErrNoLinkLocal.
func (x *NetnsExchanger) waitLinkLocal(ctx context.Context, ifname string) (netip.Addr, error) {
	link, err := x.Target.NL.LinkByName(ifname)
	if err != nil {
		return netip.Addr{}, err
	}
	index := link.Attrs().Index
	ch, done := make(chan netlink.AddrUpdate, 16), make(chan struct{})
	defer close(done)
	ns := x.Target.NsHandle()
	failed := make(chan error, 1)
	opts := netlink.AddrSubscribeOptions{Namespace: &ns, ListExisting: true,
		ErrorCallback: func(err error) {
			select {
			case failed <- err:
			default:
			}
		}}
	if err := netlink.AddrSubscribeWithOptions(ch, done, opts); err != nil {
		return netip.Addr{}, fmt.Errorf("watching the addresses of %s: %w", ifname, err)
	}
	for {
		select {
		case u, ok := <-ch:
			if !ok {
				return netip.Addr{}, fmt.Errorf("watching the addresses of %s: subscription closed", ifname)
			}
			a, isLL := linkLocal(u, index)
			switch {
			case !isLL:
			case u.Flags&unix.IFA_F_DADFAILED != 0:
				return netip.Addr{}, fmt.Errorf("%s: %w (duplicate address detection failed)", ifname, ErrNoLinkLocal)
			case u.Flags&unix.IFA_F_TENTATIVE == 0:
				return a, nil
			}
		case err := <-failed:
			return netip.Addr{}, fmt.Errorf("watching the addresses of %s: %w", ifname, err)
		case <-ctx.Done():
			return netip.Addr{}, fmt.Errorf("%s: %w: %w", ifname, ErrNoLinkLocal, ctx.Err())
		}
	}
}

// linkLocal returns the address of u if it is a new IPv6 link-local one
// on the interface index.
func linkLocal(u netlink.AddrUpdate, index int) (netip.Addr, bool) {
	if !u.NewAddr || u.LinkIndex != index {
		return netip.Addr{}, false
	}
	a, ok := netip.AddrFromSlice(u.LinkAddress.IP)
	if !ok || !a.Is6() || a.Is4In6() || !a.IsLinkLocalUnicast() {
		return netip.Addr{}, false
	}
	return a, true
}
