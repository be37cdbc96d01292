package dhcp6

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/insomniacslk/dhcp/dhcpv6"
	"github.com/insomniacslk/dhcp/dhcpv6/nclient6"
	"github.com/insomniacslk/dhcp/iana"
	"github.com/netagent/netagent/internal/leasebook"
	"github.com/netagent/netagent/internal/netnsx"
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
	// (0: 10s) while the interface has none; a tentative one is waited
	// for as long as its duplicate address detection takes (waitLinkLocal).
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
	ll, err := x.waitLinkLocal(ctx, ifname)
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

// Bounds of the wait for a link-local address (waitLinkLocal).
const (
	// dadSlack is added to an interface's duplicate address detection
	// time: the kernel's DAD worker takes rtnl_lock, shared by every
	// namespace, so a loaded host finishes it late.
	dadSlack = 5 * time.Second
	// maxLinkLocalWait bounds the whole wait, whatever the interface's
	// sysctls say.
	maxLinkLocalWait = 60 * time.Second
)

// waitLinkLocal waits, on the namespace's address events, until ifname
// has a usable link-local address (usableLinkLocal), and returns it. The
// subscription is made before the addresses are listed, so that none
// made or changed since is missed: a link set down and up, or IPv6 turned
// off and on, gives a new address, which is waited for in turn.
//
// It fails at once (ErrNoLinkLocal, saying why) when a link-local address
// failed duplicate address detection, or when the interface has none and
// will make none (IPv6 disabled on it, addrgenmode none). Otherwise it
// waits LinkLocalWait (default 10s; the link may still lack a carrier)
// and, while a tentative link-local address exists, at least until the
// interface's own DAD time (dad_transmits x retrans_time_ms, plus the
// first probe's delay) and dadSlack have passed since it was seen; never
// more than maxLinkLocalWait (or LinkLocalWait, if longer) in all. When
// it returns, the subscription is closed and its events drained, so that
// no goroutine of the netlink library is left blocked.
func (x *NetnsExchanger) waitLinkLocal(ctx context.Context, ifname string) (netip.Addr, error) {
	start := time.Now()
	link, err := x.Target.NL.LinkByName(ifname)
	if err != nil {
		return netip.Addr{}, err
	}
	index := link.Attrs().Index
	ch, done := make(chan netlink.AddrUpdate, 16), make(chan struct{})
	ns := x.Target.NsHandle()
	failed := make(chan error, 1)
	opts := netlink.AddrSubscribeOptions{Namespace: &ns,
		ErrorCallback: func(err error) {
			select {
			case failed <- err:
			default:
			}
		}}
	if err := netlink.AddrSubscribeWithOptions(ch, done, opts); err != nil {
		close(done)
		return netip.Addr{}, fmt.Errorf("watching the addresses of %s: %w", ifname, err)
	}
	defer func() {
		// Closing done closes the socket; the library's reader then
		// closes ch. Until then it may be sending: drain it.
		close(done)
		for range ch {
		}
	}()
	conf, err := x.linkLocalConf(ifname)
	if err != nil {
		return netip.Addr{}, err
	}
	addrs, err := x.Target.NL.AddrList(link, netlink.FAMILY_V6)
	if err != nil {
		return netip.Addr{}, fmt.Errorf("listing the addresses of %s: %w", ifname, err)
	}
	base := x.LinkLocalWait
	if base == 0 {
		base = 10 * time.Second
	}
	w := llWait{ifname: ifname, conf: conf, deadline: start.Add(base), limit: start.Add(max(base, maxLinkLocalWait))}
	found := false
	for _, a := range addrs {
		ll, ok := linkLocalIP(a.IP)
		if !ok || a.LinkIndex != index {
			continue
		}
		found = true
		if end, a, err := w.see(ll, a.Flags); end {
			return a, err
		}
	}
	if !found {
		switch {
		case conf.disabled:
			return netip.Addr{}, fmt.Errorf("%s: %w: IPv6 is disabled on the interface (net.ipv6.conf.%s.disable_ipv6=1)", ifname, ErrNoLinkLocal, ifname)
		case conf.noAuto:
			return netip.Addr{}, fmt.Errorf("%s: %w: the interface makes none (addrgenmode none, net.ipv6.conf.%s.addr_gen_mode=1) and has none", ifname, ErrNoLinkLocal, ifname)
		}
	}
	timer := time.NewTimer(time.Until(w.deadline))
	defer timer.Stop()
	for {
		select {
		case u, ok := <-ch:
			if !ok {
				return netip.Addr{}, fmt.Errorf("watching the addresses of %s: subscription closed", ifname)
			}
			ll, isLL := linkLocal(u, index)
			if !isLL {
				continue
			}
			before := w.deadline
			if end, a, err := w.see(ll, u.Flags); end {
				return a, err
			}
			if w.deadline != before {
				timer.Reset(time.Until(w.deadline))
			}
		case err := <-failed:
			return netip.Addr{}, fmt.Errorf("watching the addresses of %s: %w", ifname, err)
		case <-timer.C:
			return netip.Addr{}, w.timedOut(start)
		case <-ctx.Done():
			return netip.Addr{}, fmt.Errorf("%s: %w: %w", ifname, ErrNoLinkLocal, ctx.Err())
		}
	}
}

// llWait is the state of one waitLinkLocal: until when it waits, and
// whether a tentative link-local address was seen.
type llWait struct {
	ifname          string
	conf            llConf
	deadline, limit time.Time
	tentative       bool
}

// see takes a link-local address ll with flags: done with the address,
// done with an error (DAD failed), or not done, the wait extended to the
// interface's DAD time when ll is tentative.
func (w *llWait) see(ll netip.Addr, flags int) (bool, netip.Addr, error) {
	switch {
	case flags&unix.IFA_F_DADFAILED != 0:
		return true, netip.Addr{}, fmt.Errorf("%s: %w (duplicate address detection of %v failed)", w.ifname, ErrNoLinkLocal, ll)
	case usableLinkLocal(flags):
		return true, ll, nil
	}
	w.tentative = true
	d := time.Now().Add(w.conf.dad + dadSlack)
	if d.After(w.limit) {
		d = w.limit
	}
	if d.After(w.deadline) {
		w.deadline = d
	}
	return false, netip.Addr{}, nil
}

// timedOut is the error of a wait that ran out, saying what was seen.
func (w *llWait) timedOut(start time.Time) error {
	waited := time.Since(start).Round(100 * time.Millisecond)
	if w.tentative {
		return fmt.Errorf("%s: %w: its link-local address is still tentative after %v (duplicate address detection takes %v here)", w.ifname, ErrNoLinkLocal, waited, w.conf.dad)
	}
	return fmt.Errorf("%s: %w: none after %v (is the link down or without carrier?)", w.ifname, ErrNoLinkLocal, waited)
}

// llConf is what an interface's IPv6 sysctls say about its link-local
// address.
type llConf struct {
	disabled bool          // disable_ipv6 (or no IPv6 on the interface at all)
	noAuto   bool          // addr_gen_mode 1: the kernel makes no link-local address
	dad      time.Duration // duplicate address detection's longest run
}

// Defaults and bounds of the sysctls linkLocalConf reads.
const (
	maxDADTransmits = 100
	maxRetransTime  = 60 * time.Second
)

// linkLocalConf reads ifname's IPv6 sysctls inside the target namespace
// (/proc/sys/net shows the namespace of the thread that opens it). A
// value that cannot be read or is out of bounds counts as the kernel's
// default; an interface without an IPv6 configuration has IPv6 disabled.
func (x *NetnsExchanger) linkLocalConf(ifname string) (llConf, error) {
	var c llConf
	err := x.Target.Do(func() error {
		conf := "/proc/sys/net/ipv6/conf/" + ifname + "/"
		if _, err := os.Stat(conf); errors.Is(err, fs.ErrNotExist) {
			c.disabled = true
			return nil
		} else if err != nil {
			return err
		}
		c.disabled = readSysctl(conf+"disable_ipv6", 0, 1, 0) == 1
		c.noAuto = readSysctl(conf+"addr_gen_mode", 0, 3, 0) == 1
		transmits := readSysctl(conf+"dad_transmits", 0, maxDADTransmits, 1)
		retrans := readSysctl("/proc/sys/net/ipv6/neigh/"+ifname+"/retrans_time_ms", 1, int64(maxRetransTime/time.Millisecond), 1000)
		delay := readSysctl(conf+"router_solicitation_delay", 0, 60, 1)
		c.dad = time.Duration(transmits*retrans)*time.Millisecond + time.Duration(delay)*time.Second
		return nil
	})
	if err != nil {
		return llConf{}, fmt.Errorf("reading the IPv6 settings of %s: %w", ifname, err)
	}
	return c, nil
}

// readSysctl reads an integer sysctl file; def when it cannot be read or
// is outside lo-hi.
func readSysctl(path string, lo, hi, def int64) int64 {
	data, err := os.ReadFile(path)
	if err != nil || len(data) > 32 {
		return def
	}
	v, err := strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64)
	if err != nil || v < lo || v > hi {
		return def
	}
	return v
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
	return linkLocalIP(u.LinkAddress.IP)
}

// linkLocalIP returns ip if it is an IPv6 link-local unicast address.
func linkLocalIP(ip net.IP) (netip.Addr, bool) {
	a, ok := netip.AddrFromSlice(ip)
	if !ok || !a.Is6() || a.Is4In6() || !a.IsLinkLocalUnicast() {
		return netip.Addr{}, false
	}
	return a, true
}
