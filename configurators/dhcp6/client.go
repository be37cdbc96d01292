package dhcp6

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"time"

	"github.com/insomniacslk/dhcp/dhcpv6"
	"github.com/insomniacslk/dhcp/dhcpv6/nclient6"
	"github.com/insomniacslk/dhcp/iana"
	"github.com/netagent/netagent/configurators/leasebook"
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

// Client acquires leases through an Exchanger. Every exchange on an
// interface (SOLICIT, RENEW, REBIND) waits its turn on the client's
// Pacer (leasebook.Pacer), backing off after a refusal or an unusable
// REPLY.
type Client struct {
	X    Exchanger
	Now  func() time.Time // nil: time.Now
	pace leasebook.Pacer
}

func (c *Client) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

// Acquire runs an exchange on ifname until ctx ends and returns the lease;
// want (may be the zero Addr) is the address to ask for. The lease's times
// count from when the exchange began, never later than the server's.
func (c *Client) Acquire(ctx context.Context, ifname string, want netip.Addr) (*Lease, error) {
	if err := c.pace.Wait(ctx, ifname); err != nil {
		return nil, fmt.Errorf("acquiring a DHCPv6 lease on %s: %w", ifname, err)
	}
	start := c.now()
	reply, err := c.X.Exchange(ctx, ifname, want)
	if err != nil {
		c.pace.Done(ifname, false)
		return nil, fmt.Errorf("acquiring a DHCPv6 lease on %s: %w", ifname, err)
	}
	l, err := LeaseFromReply(ifname, reply, start)
	c.pace.Done(ifname, err != nil)
	if err != nil {
		return nil, fmt.Errorf("DHCPv6 lease on %s: %w", ifname, err)
	}
	l.Obtained = "solicit"
	return l, nil
}

// Sender is an Exchanger that also sends a message built for the link
// (from its MAC address) and, when await, returns the server's REPLY:
// NetnsExchanger. Renewals, rebindings and releases go through it.
type Sender interface {
	Send(ctx context.Context, ifname string, build func(hw net.HardwareAddr) (*dhcpv6.Message, error), await bool) (*dhcpv6.Message, error)
}

// Renew extends l with the server that granted it (RENEW, from T1).
func (c *Client) Renew(ctx context.Context, l *Lease) (*Lease, error) {
	return c.extend(ctx, l, dhcpv6.MessageTypeRenew)
}

// Rebind extends l with any server (REBIND, from T2).
func (c *Client) Rebind(ctx context.Context, l *Lease) (*Lease, error) {
	return c.extend(ctx, l, dhcpv6.MessageTypeRebind)
}

// extend sends a RENEW or REBIND of l and returns the lease of the REPLY,
// its times counted from when the exchange began. A REPLY that takes the
// address back (NoBinding, a lifetime of 0, another address) is
// ErrRefused or ErrNoAddress: the lease is over.
func (c *Client) extend(ctx context.Context, l *Lease, t dhcpv6.MessageType) (*Lease, error) {
	s, ok := c.X.(Sender)
	if !ok {
		return nil, fmt.Errorf("DHCPv6 %s on %s: %w", t, l.Interface, errors.ErrUnsupported)
	}
	if err := c.pace.Wait(ctx, l.Interface); err != nil {
		return nil, fmt.Errorf("DHCPv6 %s of %s on %s: %w", t, l.Address, l.Interface, err)
	}
	got, err := c.send(ctx, s, l, t)
	c.pace.Done(l.Interface, errors.Is(err, ErrRefused) || errors.Is(err, ErrUnusable) || errors.Is(err, ErrNoAddress))
	return got, err
}

// send sends the RENEW or REBIND of extend and makes the lease of the
// REPLY.
func (c *Client) send(ctx context.Context, s Sender, l *Lease, t dhcpv6.MessageType) (*Lease, error) {
	start := c.now()
	reply, err := s.Send(ctx, l.Interface, func(hw net.HardwareAddr) (*dhcpv6.Message, error) { return leaseMessage(t, hw, l) }, true)
	if err != nil {
		return nil, fmt.Errorf("DHCPv6 %s of %s on %s: %w", t, l.Address, l.Interface, err)
	}
	got, err := LeaseFromReply(l.Interface, reply, start)
	if err == nil && got.Address != l.Address {
		err = fmt.Errorf("%w: the server answered with %s", ErrRefused, got.Address)
	}
	if err != nil {
		return nil, fmt.Errorf("DHCPv6 %s of %s on %s: %w", t, l.Address, l.Interface, err)
	}
	if got.Server == "" {
		got.Server = l.Server
	}
	got.Obtained = "renew"
	if t == dhcpv6.MessageTypeRebind {
		got.Obtained = "rebind"
	}
	return got, nil
}

// Release gives l back to its server (RELEASE), without waiting for the
// REPLY; an Exchanger that cannot send releases nothing.
func (c *Client) Release(ctx context.Context, l *Lease) error {
	s, ok := c.X.(Sender)
	if !ok {
		return nil
	}
	_, err := s.Send(ctx, l.Interface, func(hw net.HardwareAddr) (*dhcpv6.Message, error) {
		return leaseMessage(dhcpv6.MessageTypeRelease, hw, l)
	}, false)
	if err != nil {
		return fmt.Errorf("DHCPv6 release of %s on %s: %w", l.Address, l.Interface, err)
	}
	return nil
}

// leaseMessage builds a RENEW, REBIND or RELEASE of l: the client's DUID
// and IAID (as the SOLICIT had them: Modifiers, nclient6's IAID of the
// MAC address), the server's DUID (not for REBIND), and the IA_NA with
// the address.
func leaseMessage(t dhcpv6.MessageType, hw net.HardwareAddr, l *Lease) (*dhcpv6.Message, error) {
	if len(hw) < 4 {
		return nil, fmt.Errorf("%s: short hardware address %s", l.Interface, hw)
	}
	m, err := dhcpv6.NewMessage()
	if err != nil {
		return nil, err
	}
	m.MessageType = t
	m.AddOption(dhcpv6.OptElapsedTime(0))
	if t != dhcpv6.MessageTypeRebind && l.Server != "" {
		raw, err := hex.DecodeString(l.Server)
		if err != nil {
			return nil, fmt.Errorf("the server DUID of the lease on %s: %w", l.Interface, err)
		}
		duid, err := dhcpv6.DUIDFromBytes(raw)
		if err != nil {
			return nil, fmt.Errorf("the server DUID of the lease on %s: %w", l.Interface, err)
		}
		m.AddOption(dhcpv6.OptServerID(duid))
	}
	if t != dhcpv6.MessageTypeRelease {
		m.AddOption(dhcpv6.OptRequestedOption(dhcpv6.OptionDNSRecursiveNameServer, dhcpv6.OptionDomainSearchList))
	}
	var iaid [4]byte
	copy(iaid[:], hw[len(hw)-4:])
	mods := append([]dhcpv6.Modifier{dhcpv6.WithIAID(iaid)}, Modifiers(hw, l.Address)...)
	for _, mod := range mods {
		mod(m)
	}
	return m, nil
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
	c, hw, err := x.dial(ctx, ifname)
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

// Send implements Sender: the message goes to all DHCP servers and relay
// agents on the link (RFC 8415 18.2.4: a client without the server's
// unicast option sends there), and the REPLY is awaited (with nclient6's
// retries) when await.
func (x *NetnsExchanger) Send(ctx context.Context, ifname string, build func(hw net.HardwareAddr) (*dhcpv6.Message, error), await bool) (*dhcpv6.Message, error) {
	c, hw, err := x.dial(ctx, ifname)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	m, err := build(hw)
	if err != nil {
		return nil, err
	}
	if !await {
		// One try, a short wait: the REPLY to a RELEASE changes nothing.
		ctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
		defer cancel()
		_, err := c.SendAndRead(ctx, nclient6.AllDHCPRelayAgentsAndServers, m, nclient6.IsMessageType(dhcpv6.MessageTypeReply))
		if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, nclient6.ErrNoResponse) {
			err = nil // sent; the server's answer is not needed
		}
		return nil, err
	}
	return c.SendAndRead(ctx, nclient6.AllDHCPRelayAgentsAndServers, m, nclient6.IsMessageType(dhcpv6.MessageTypeReply))
}

// dial waits for ifname's link-local address and opens nclient6's socket
// on it, inside the namespace; it returns the client and the link's MAC
// address.
func (x *NetnsExchanger) dial(ctx context.Context, ifname string) (*nclient6.Client, net.HardwareAddr, error) {
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
		return nil, nil, err
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
		return nil, nil, err
	}
	return c, hw, nil
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
// has a usable link-local address (usableLinkLocal), and returns it. A
// link-local address that failed DAD is ErrNoLinkLocal. The subscription
// lists the addresses after it is made, so that none made or changed
// since is missed: a link set down and up, or IPv6 turned off and on,
// gives a new address, which is waited for in turn.
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
			case usableLinkLocal(u.Flags):
				return a, nil
			}
		case err := <-failed:
			return netip.Addr{}, fmt.Errorf("watching the addresses of %s: %w", ifname, err)
		case <-ctx.Done():
			return netip.Addr{}, fmt.Errorf("%s: %w: %w", ifname, ErrNoLinkLocal, ctx.Err())
		}
	}
}

// usableLinkLocal reports whether a link-local address with flags may be
// the client's source: not tentative (duplicate address detection takes
// a second or two after the link comes up, longer when the kernel is
// busy), or optimistic (RFC 4429, optimistic_dad: usable while DAD runs,
// and the kernel lets a socket bind it).
func usableLinkLocal(flags int) bool {
	return flags&unix.IFA_F_TENTATIVE == 0 || flags&unix.IFA_F_OPTIMISTIC != 0
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
