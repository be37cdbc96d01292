package dhcp

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"time"

	"github.com/insomniacslk/dhcp/dhcpv4"
	"github.com/insomniacslk/dhcp/dhcpv4/nclient4"
	"github.com/netagent/netagent/internal/leasebook"
	"github.com/netagent/netagent/internal/netnsx"
	"golang.org/x/sys/unix"
)

// Exchanger is the client's only access to the network. Request runs one
// DISCOVER-OFFER-REQUEST-ACK exchange on a link and returns the ACK;
// Send sends one DHCPREQUEST (the message made by mods, with the link's
// MAC address) to dest (invalid: broadcast) and returns the server's ACK
// or NAK: the INIT-REBOOT, RENEWING and REBINDING states of RFC 2131.
type Exchanger interface {
	// Request runs DISCOVER-OFFER-REQUEST-ACK until an ACK comes or ctx
	// ends, and returns the ACK and when the round of tries that got it
	// began (zero: unknown, the caller counts from its call).
	Request(ctx context.Context, ifname string, mods ...dhcpv4.Modifier) (*dhcpv4.DHCPv4, time.Time, error)
	Send(ctx context.Context, ifname string, dest netip.Addr, mods ...dhcpv4.Modifier) (*dhcpv4.DHCPv4, error)
}

// How a lease was obtained (Lease.Obtained): the message that the ACK
// answered.
const (
	ObtainedDiscover = "discover" // DISCOVER, then REQUEST (INIT)
	ObtainedReboot   = "reboot"   // REQUEST of a kept lease's address (INIT-REBOOT)
	ObtainedRenew    = "renew"    // REQUEST unicast to the server (RENEWING, at T1)
	ObtainedRebind   = "rebind"   // REQUEST broadcast (REBINDING, at T2)
	ObtainedKept     = "kept"     // no server answered: the kept lease, until it expires
)

// Options are what the client sends (the intent's dhcp4 section).
type Options struct {
	Hostname    string // option 12
	ClientID    string // option 61
	VendorClass string // option 60
}

// requested are the options the client asks for (option 55): dnsmasq,
// like most servers, sends option 121 only to a client that asks.
var requested = []dhcpv4.OptionCode{
	dhcpv4.OptionSubnetMask, dhcpv4.OptionRouter, dhcpv4.OptionDomainNameServer,
	dhcpv4.OptionIPAddressLeaseTime, dhcpv4.OptionRenewTimeValue, dhcpv4.OptionRebindingTimeValue,
	dhcpv4.OptionClasslessStaticRoute, dhcpv4.OptionDomainName, dhcpv4.OptionDNSDomainSearchList,
}

// Modifiers returns what the client adds to its DISCOVER and REQUEST.
func (o Options) Modifiers() []dhcpv4.Modifier {
	mods := []dhcpv4.Modifier{dhcpv4.WithRequestedOptions(requested...)}
	if o.Hostname != "" {
		mods = append(mods, dhcpv4.WithOption(dhcpv4.OptHostName(o.Hostname)))
	}
	if o.ClientID != "" {
		mods = append(mods, dhcpv4.WithOption(dhcpv4.OptClientIdentifier([]byte(o.ClientID))))
	}
	if o.VendorClass != "" {
		mods = append(mods, dhcpv4.WithOption(dhcpv4.OptClassIdentifier(o.VendorClass)))
	}
	return mods
}

// Client acquires leases through an Exchanger. Every exchange on an
// interface (acquisition, INIT-REBOOT, renewal, rebinding) waits its turn
// on the client's Pacer: at least a second apart, and backing off after
// a NAK or an unusable answer, whatever the server's times say.
type Client struct {
	X    Exchanger
	Now  func() time.Time // nil: time.Now
	pace leasebook.Pacer
}

// Acquire runs an exchange on ifname until ctx ends and returns the lease.
// Its times count from when the round of tries that got the ACK began,
// which is never later than the server's (RFC 2131 4.4.1: from when the
// request was sent), nor, after minutes of a server away, that much
// earlier: a lease counted from the first DISCOVER would arrive expired.
func (c *Client) Acquire(ctx context.Context, ifname string, o Options) (*Lease, error) {
	if err := c.pace.Wait(ctx, ifname); err != nil {
		return nil, fmt.Errorf("acquiring a DHCPv4 lease on %s: %w", ifname, err)
	}
	sent := c.now()
	ack, began, err := c.X.Request(ctx, ifname, o.Modifiers()...)
	if err != nil {
		var nak *nclient4.ErrNak
		c.pace.Done(ifname, errors.As(err, &nak))
		return nil, fmt.Errorf("acquiring a DHCPv4 lease on %s: %w", ifname, err)
	}
	if began.After(sent) {
		sent = began
	}
	l, err := LeaseFromACK(ifname, ack, sent)
	c.pace.Done(ifname, err != nil)
	if err != nil {
		return nil, fmt.Errorf("DHCPv4 lease on %s: %w", ifname, err)
	}
	l.Obtained = ObtainedDiscover
	return l, nil
}

func (c *Client) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

// Reboot asks again for the address of a kept lease (INIT-REBOOT, RFC
// 2131 3.2): a broadcast REQUEST with the address as option 50 and no
// server identifier. A NAK is ErrNAK: the address is not the client's on
// this network any more.
func (c *Client) Reboot(ctx context.Context, kept *Lease, o Options) (*Lease, error) {
	mods := append(o.Modifiers(),
		dhcpv4.WithOption(dhcpv4.OptRequestedIPAddress(kept.Address.Addr().AsSlice())))
	return c.send(ctx, kept, netip.Addr{}, ObtainedReboot, mods)
}

// Renew extends l with its server (RENEWING, from T1): a REQUEST with the
// address as ciaddr, sent to the server.
func (c *Client) Renew(ctx context.Context, l *Lease, o Options) (*Lease, error) {
	return c.send(ctx, l, l.Server, ObtainedRenew, append(o.Modifiers(), dhcpv4.WithClientIP(l.Address.Addr().AsSlice())))
}

// Rebind extends l with any server (REBINDING, from T2): Renew's REQUEST,
// broadcast.
func (c *Client) Rebind(ctx context.Context, l *Lease, o Options) (*Lease, error) {
	return c.send(ctx, l, netip.Addr{}, ObtainedRebind, append(o.Modifiers(), dhcpv4.WithClientIP(l.Address.Addr().AsSlice())))
}

// send runs one REQUEST for the address of l and makes the lease of the
// ACK.
func (c *Client) send(ctx context.Context, l *Lease, dest netip.Addr, how string, mods []dhcpv4.Modifier) (*Lease, error) {
	mods = append(mods, dhcpv4.WithMessageType(dhcpv4.MessageTypeRequest))
	if err := c.pace.Wait(ctx, l.Interface); err != nil {
		return nil, fmt.Errorf("DHCPv4 %s of %s on %s: %w", how, l.Address.Addr(), l.Interface, err)
	}
	got, err := c.exchange(ctx, l, dest, how, mods)
	c.pace.Done(l.Interface, errors.Is(err, ErrNAK) || errors.Is(err, ErrUnusable))
	return got, err
}

// exchange sends the REQUEST of send and makes the lease of the ACK.
func (c *Client) exchange(ctx context.Context, l *Lease, dest netip.Addr, how string, mods []dhcpv4.Modifier) (*Lease, error) {
	sent := c.now()
	reply, err := c.X.Send(ctx, l.Interface, dest, mods...)
	if err != nil {
		return nil, fmt.Errorf("DHCPv4 %s of %s on %s: %w", how, l.Address.Addr(), l.Interface, err)
	}
	if reply.MessageType() == dhcpv4.MessageTypeNak {
		return nil, fmt.Errorf("DHCPv4 %s of %s on %s: %w (%s)", how, l.Address.Addr(), l.Interface, ErrNAK, reply.Message())
	}
	got, err := LeaseFromACK(l.Interface, reply, sent)
	if err != nil {
		return nil, fmt.Errorf("DHCPv4 %s on %s: %w", how, l.Interface, err)
	}
	if got.Address.Addr() != l.Address.Addr() {
		return nil, fmt.Errorf("DHCPv4 %s of %s on %s: %w: the server acknowledged %s", how, l.Address.Addr(), l.Interface, ErrNAK, got.Address.Addr())
	}
	if !got.Server.IsValid() {
		got.Server = l.Server
	}
	got.Obtained = how
	return got, nil
}

// NetnsExchanger is the real Exchanger: nclient4 with its raw socket
// opened in the target namespace. Timeout is how long the first try waits
// for an answer (doubling at each of Retry tries); Retry 0 tries in rounds
// of three until ctx ends.
type NetnsExchanger struct {
	Target  *netnsx.Target
	Timeout time.Duration // 0: 2s
	Retry   int           // 0: until ctx ends
}

// Request implements Exchanger. Only the socket is opened in the
// namespace (Target.Do); the exchange holds no namespace thread.
func (x *NetnsExchanger) Request(ctx context.Context, ifname string, mods ...dhcpv4.Modifier) (*dhcpv4.DHCPv4, time.Time, error) {
	var ack *dhcpv4.DHCPv4
	var began time.Time
	err := x.rounds(ctx, ifname, nil, func(c *nclient4.Client, _ net.HardwareAddr) error {
		began = time.Now()
		lease, err := c.Request(ctx, mods...)
		if err == nil {
			ack = lease.ACK
		}
		return err
	})
	return ack, began, err
}

// Send implements Exchanger. A REQUEST to a server (RENEWING) goes out
// of a UDP socket bound to the lease's address (ciaddr), as RFC 2131
// says: a unicast IP packet in a broadcast frame, which the raw socket
// sends, is dropped by the server's kernel. A broadcast one goes out of
// the raw socket, the address or not.
func (x *NetnsExchanger) Send(ctx context.Context, ifname string, dest netip.Addr, mods ...dhcpv4.Modifier) (*dhcpv4.DHCPv4, error) {
	to := &net.UDPAddr{IP: net.IPv4bcast, Port: nclient4.ServerPort}
	var from net.IP
	if dest.IsValid() {
		to.IP = dest.AsSlice()
		probe, err := dhcpv4.New(mods...)
		if err != nil {
			return nil, err
		}
		from = probe.ClientIPAddr
	}
	var reply *dhcpv4.DHCPv4
	err := x.rounds(ctx, ifname, from, func(c *nclient4.Client, mac net.HardwareAddr) error {
		req, err := dhcpv4.New(append([]dhcpv4.Modifier{dhcpv4.WithHwAddr(mac)}, mods...)...)
		if err != nil {
			return err
		}
		reply, err = c.SendAndRead(ctx, to, req, nclient4.IsMessageType(dhcpv4.MessageTypeAck, dhcpv4.MessageTypeNak))
		return err
	})
	return reply, err
}

// rounds runs f with a client on ifname: once with Retry set, else in
// rounds of three tries until f succeeds or ctx ends (nclient4 doubles the
// wait at each try: rounds keep it from growing without bound).
func (x *NetnsExchanger) rounds(ctx context.Context, ifname string, from net.IP, f func(*nclient4.Client, net.HardwareAddr) error) error {
	timeout, retry := x.Timeout, x.Retry
	if timeout == 0 {
		timeout = 2 * time.Second
	}
	once := retry != 0
	if !once {
		retry = 3 // tries after 0, 2 and 6 s, then a new round: never more than 8 s between two
	}
	for {
		err := x.try(ifname, from, timeout, retry, f)
		if err == nil || once || ctx.Err() != nil || !errors.Is(err, nclient4.ErrNoResponse) {
			if err != nil && ctx.Err() != nil {
				return fmt.Errorf("%w (%w)", ctx.Err(), err)
			}
			return err
		}
	}
}

// try opens a client on ifname in the namespace and runs f with it: over
// a raw socket, or with from over a UDP socket bound to from.
func (x *NetnsExchanger) try(ifname string, from net.IP, timeout time.Duration, retry int, f func(*nclient4.Client, net.HardwareAddr) error) error {
	var (
		c   *nclient4.Client
		mac net.HardwareAddr
	)
	err := x.Target.Do(func() error {
		iface, err := net.InterfaceByName(ifname)
		if err != nil {
			return err
		}
		var conn net.PacketConn
		if from != nil && !from.IsUnspecified() {
			conn, err = net.ListenUDP("udp4", &net.UDPAddr{IP: from, Port: nclient4.ClientPort})
		} else {
			conn, err = nclient4.NewRawUDPConn(iface.Name, nclient4.ClientPort)
		}
		if err != nil {
			return fmt.Errorf("opening a DHCP socket: %w", err)
		}
		mac = iface.HardwareAddr
		c, err = nclient4.NewWithConn(conn, mac, nclient4.WithTimeout(timeout), nclient4.WithRetry(retry))
		if err != nil {
			conn.Close()
		}
		return err
	})
	if err != nil {
		return err
	}
	defer c.Close()
	return f(c, mac)
}

// Releaser is an Exchanger that can also send a message no server answers
// (DHCPRELEASE): NetnsExchanger. A client over an Exchanger without it
// releases nothing (the server frees the address when the lease ends).
type Releaser interface {
	Tell(ctx context.Context, ifname string, mods ...dhcpv4.Modifier) error
}

// Release gives l back to its server (DHCPRELEASE, RFC 2131 4.4.6): the
// address as ciaddr, the server identifier, the client identifier the
// lease was asked with. No answer comes. It is broadcast (from the raw
// socket): when the lease item goes its address is already withdrawn, and
// a server's kernel drops a unicast packet in a broadcast frame; dnsmasq
// and servers on raw sockets take a broadcast RELEASE.
func (c *Client) Release(ctx context.Context, l *Lease, o Options) error {
	r, ok := c.X.(Releaser)
	if !ok {
		return nil
	}
	mods := []dhcpv4.Modifier{dhcpv4.WithMessageType(dhcpv4.MessageTypeRelease),
		dhcpv4.WithClientIP(l.Address.Addr().AsSlice()),
		dhcpv4.WithOption(dhcpv4.OptServerIdentifier(l.Server.AsSlice()))}
	if o.ClientID != "" {
		mods = append(mods, dhcpv4.WithOption(dhcpv4.OptClientIdentifier([]byte(o.ClientID))))
	}
	if err := r.Tell(ctx, l.Interface, mods...); err != nil {
		return fmt.Errorf("DHCPv4 release of %s on %s: %w", l.Address.Addr(), l.Interface, err)
	}
	return nil
}

// Tell implements Releaser: one broadcast message from the raw socket in
// the namespace, no answer awaited.
func (x *NetnsExchanger) Tell(_ context.Context, ifname string, mods ...dhcpv4.Modifier) error {
	return x.Target.Do(func() error {
		iface, err := net.InterfaceByName(ifname)
		if err != nil {
			return err
		}
		conn, err := nclient4.NewRawUDPConn(iface.Name, nclient4.ClientPort)
		if err != nil {
			return fmt.Errorf("opening a DHCP socket: %w", err)
		}
		defer conn.Close()
		msg, err := dhcpv4.New(append([]dhcpv4.Modifier{dhcpv4.WithHwAddr(iface.HardwareAddr)}, mods...)...)
		if err != nil {
			return err
		}
		_, err = conn.WriteTo(msg.ToBytes(), &net.UDPAddr{IP: net.IPv4bcast, Port: nclient4.ServerPort})
		return err
	})
}

// CarrierIn returns Configurator.Carrier for the namespace of t: the
// interface exists and its carrier is up (IFF_LOWER_UP).
func CarrierIn(t *netnsx.Target) func(ifname string) bool {
	return func(ifname string) bool {
		l, err := t.NL.LinkByName(ifname)
		return err == nil && l.Attrs().RawFlags&unix.IFF_LOWER_UP != 0
	}
}
