// Package dhcptest runs a DHCPv4 server whose every answer a test writes
// (github.com/insomniacslk/dhcp's server4): for what dnsmasq will not
// send, such as a renewal time of 0, an address with prefix length 0, a
// loopback address, a router equal to the client's address, or a NAK to
// every REQUEST. Like internal/dnsmasqtest it lives in a peer namespace
// of its own, on the far end of a veth whose near end is in the client's
// namespace, and stops in t.Cleanup. It counts the messages it receives,
// so that a test can see a client storm (or not).
package dhcptest

import (
	"fmt"
	"net"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/insomniacslk/dhcp/dhcpv4"
	"github.com/insomniacslk/dhcp/dhcpv4/server4"
	"github.com/vishvananda/netlink"

	"github.com/netagent/netagent/internal/netnsx"
	"github.com/netagent/netagent/internal/testns"
)

// ServerAddr is the server's address on its end of the veth (the same
// subnet as internal/dnsmasqtest's): its server identifier.
var ServerAddr = netip.MustParsePrefix("10.77.0.1/24")

// Reply is what the server answers to a DISCOVER (an OFFER) and to a
// REQUEST (an ACK, or with NAK a DHCPNAK). Address gives yiaddr and the
// subnet mask (option 1); Router, DNS, Domain and LeaseTime options 3, 6,
// 15 and 51 when set; Options are sent as they are, after those (an
// option given twice: the last wins), so that a test can send any value,
// such as dhcpv4.OptRenewTimeValue(0).
type Reply struct {
	Address   netip.Prefix
	Router    netip.Addr
	DNS       []netip.Addr
	Domain    string
	LeaseTime time.Duration
	Options   []dhcpv4.Option
	NAK       bool
}

// Server is a running test server.
type Server struct {
	// Peer is the server's namespace, Link its end of the veth.
	Peer *netnsx.Target
	Link string

	mu     sync.Mutex
	reply  Reply
	counts map[dhcpv4.MessageType]int
	srv    *server4.Server
}

// Start makes a veth named ifname in client (up), the other end in a new
// peer namespace with ServerAddr, and serves r there until the test ends.
func Start(t testing.TB, client *netnsx.Target, ifname string, r Reply) *Server {
	t.Helper()
	peer := testns.New(t)
	s := &Server{Peer: peer, Link: "dhcpsrv0", reply: r, counts: map[dhcpv4.MessageType]int{}}
	veth := &netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: ifname}, PeerName: s.Link,
		PeerNamespace: netlink.NsFd(int(peer.NsHandle()))}
	if err := client.NL.LinkAdd(veth); err != nil {
		t.Fatalf("adding veth %s: %v", ifname, err)
	}
	testns.Exec(t, client, "ip", "link", "set", ifname, "up")
	testns.Exec(t, peer, "ip", "addr", "add", ServerAddr.String(), "dev", s.Link)
	testns.Exec(t, peer, "ip", "link", "set", s.Link, "up")
	var conn *net.UDPConn
	err := peer.Do(func() error {
		var err error
		conn, err = server4.NewIPv4UDPConn(s.Link, &net.UDPAddr{Port: dhcpv4.ServerPort})
		return err
	})
	if err != nil {
		t.Fatalf("opening the server's socket: %v", err)
	}
	s.srv, err = server4.NewServer("", nil, s.handle, server4.WithConn(conn), server4.WithLogger(quiet{}))
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { defer close(done); s.srv.Serve() }()
	t.Cleanup(func() { s.srv.Close(); <-done })
	return s
}

// Set changes what the server answers from now on.
func (s *Server) Set(r Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reply = r
}

// Count returns how many messages of type mt the server has received.
func (s *Server) Count(mt dhcpv4.MessageType) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.counts[mt]
}

// handle answers a DISCOVER with an OFFER and a REQUEST with an ACK (or
// NAK), to the broadcast address for a client without one, else to the
// client.
func (s *Server) handle(conn net.PacketConn, peer net.Addr, m *dhcpv4.DHCPv4) {
	s.mu.Lock()
	s.counts[m.MessageType()]++
	r := s.reply
	s.mu.Unlock()
	var mt dhcpv4.MessageType
	switch m.MessageType() {
	case dhcpv4.MessageTypeDiscover:
		mt = dhcpv4.MessageTypeOffer
	case dhcpv4.MessageTypeRequest:
		mt = dhcpv4.MessageTypeAck
		if r.NAK {
			mt = dhcpv4.MessageTypeNak
		}
	default:
		return
	}
	reply, err := build(m, mt, r)
	if err != nil {
		return
	}
	conn.WriteTo(reply.ToBytes(), peer)
}

// build makes the reply of type mt to m.
func build(m *dhcpv4.DHCPv4, mt dhcpv4.MessageType, r Reply) (*dhcpv4.DHCPv4, error) {
	mods := []dhcpv4.Modifier{dhcpv4.WithMessageType(mt),
		dhcpv4.WithOption(dhcpv4.OptServerIdentifier(ServerAddr.Addr().AsSlice()))}
	if mt == dhcpv4.MessageTypeNak {
		return dhcpv4.NewReplyFromRequest(m, mods...)
	}
	mods = append(mods, dhcpv4.WithYourIP(r.Address.Addr().AsSlice()),
		dhcpv4.WithNetmask(net.CIDRMask(r.Address.Bits(), 32)))
	if r.Router.IsValid() {
		mods = append(mods, dhcpv4.WithRouter(r.Router.AsSlice()))
	}
	if len(r.DNS) > 0 {
		var ips []net.IP
		for _, a := range r.DNS {
			ips = append(ips, a.AsSlice())
		}
		mods = append(mods, dhcpv4.WithDNS(ips...))
	}
	if r.Domain != "" {
		mods = append(mods, dhcpv4.WithOption(dhcpv4.OptDomainName(r.Domain)))
	}
	if r.LeaseTime > 0 {
		mods = append(mods, dhcpv4.WithLeaseTime(uint32(r.LeaseTime/time.Second)))
	}
	for _, o := range r.Options {
		mods = append(mods, dhcpv4.WithOption(o))
	}
	reply, err := dhcpv4.NewReplyFromRequest(m, mods...)
	if err != nil {
		return nil, fmt.Errorf("building the %s: %w", mt, err)
	}
	return reply, nil
}

// quiet drops server4's log lines.
type quiet struct{}

func (quiet) PrintMessage(string, *dhcpv4.DHCPv4) {}
func (quiet) Printf(string, ...any)               {}
