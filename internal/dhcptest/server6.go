package dhcptest

import (
	"net"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/insomniacslk/dhcp/dhcpv6"
	"github.com/insomniacslk/dhcp/dhcpv6/server6"
	"github.com/insomniacslk/dhcp/iana"
	"github.com/vishvananda/netlink"

	"github.com/netagent/netagent/internal/netnsx"
	"github.com/netagent/netagent/internal/testns"
)

// Reply6 is what the DHCPv6 server answers to a SOLICIT (an ADVERTISE)
// and to a REQUEST, RENEW or REBIND (a REPLY): an IA_NA with Address and
// its lifetimes, T1 and T2 as given (0 included), DNS (option 23) and
// Search (option 24) when set.
type Reply6 struct {
	Address          netip.Addr
	Preferred, Valid time.Duration
	T1, T2           time.Duration
	DNS              []netip.Addr
	Search           []string
}

// Server6 is a running DHCPv6 test server.
type Server6 struct {
	Peer *netnsx.Target
	Link string

	mu     sync.Mutex
	reply  Reply6
	counts map[dhcpv6.MessageType]int
}

// serverDUID identifies the test server.
var serverDUID = &dhcpv6.DUIDLL{HWType: iana.HWTypeEthernet, LinkLayerAddr: net.HardwareAddr{2, 0, 0, 0, 0, 1}}

// Start6 makes a veth named ifname in client (up, without duplicate
// address detection on either end, so that the link-local addresses are
// usable at once), the other end in a new peer namespace, and serves r
// there (on ff02::1:2, port 547) until the test ends.
func Start6(t testing.TB, client *netnsx.Target, ifname string, r Reply6) *Server6 {
	t.Helper()
	peer := testns.New(t)
	s := &Server6{Peer: peer, Link: "dhcpsrv0", reply: r, counts: map[dhcpv6.MessageType]int{}}
	for _, ns := range []*netnsx.Target{client, peer} {
		testns.Exec(t, ns, "sysctl", "-qw", "net.ipv6.conf.all.accept_dad=0", "net.ipv6.conf.default.accept_dad=0")
	}
	veth := &netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: ifname}, PeerName: s.Link,
		PeerNamespace: netlink.NsFd(int(peer.NsHandle()))}
	if err := client.NL.LinkAdd(veth); err != nil {
		t.Fatalf("adding veth %s: %v", ifname, err)
	}
	testns.Exec(t, client, "ip", "link", "set", ifname, "up")
	testns.Exec(t, peer, "ip", "link", "set", s.Link, "up")
	var srv *server6.Server
	err := peer.Do(func() error {
		var err error
		srv, err = server6.NewServer(s.Link, nil, s.handle)
		return err
	})
	if err != nil {
		t.Fatalf("starting the DHCPv6 server: %v", err)
	}
	done := make(chan struct{})
	go func() { defer close(done); srv.Serve() }()
	t.Cleanup(func() { srv.Close(); <-done })
	return s
}

// Set changes what the server answers from now on.
func (s *Server6) Set(r Reply6) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reply = r
}

// Count returns how many messages of type mt the server has received.
func (s *Server6) Count(mt dhcpv6.MessageType) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.counts[mt]
}

func (s *Server6) handle(conn net.PacketConn, peer net.Addr, d dhcpv6.DHCPv6) {
	m, err := d.GetInnerMessage()
	if err != nil {
		return
	}
	s.mu.Lock()
	s.counts[m.MessageType]++
	r := s.reply
	s.mu.Unlock()
	var reply *dhcpv6.Message
	mods := replyMods(m, r)
	switch m.MessageType {
	case dhcpv6.MessageTypeSolicit:
		reply, err = dhcpv6.NewAdvertiseFromSolicit(m, mods...)
	case dhcpv6.MessageTypeRequest, dhcpv6.MessageTypeRenew, dhcpv6.MessageTypeRebind:
		reply, err = dhcpv6.NewReplyFromMessage(m, mods...)
	default:
		return
	}
	if err == nil {
		conn.WriteTo(reply.ToBytes(), peer)
	}
}

// replyMods are the options of the answer to m.
func replyMods(m *dhcpv6.Message, r Reply6) []dhcpv6.Modifier {
	ia := &dhcpv6.OptIANA{T1: r.T1, T2: r.T2}
	if req := m.Options.OneIANA(); req != nil {
		ia.IaId = req.IaId
	}
	ia.Options.Add(&dhcpv6.OptIAAddress{IPv6Addr: r.Address.AsSlice(), PreferredLifetime: r.Preferred, ValidLifetime: r.Valid})
	mods := []dhcpv6.Modifier{dhcpv6.WithServerID(serverDUID), dhcpv6.WithOption(ia)}
	if len(r.DNS) > 0 {
		var ips []net.IP
		for _, a := range r.DNS {
			ips = append(ips, a.AsSlice())
		}
		mods = append(mods, dhcpv6.WithDNS(ips...))
	}
	if len(r.Search) > 0 {
		mods = append(mods, dhcpv6.WithDomainSearchList(r.Search...))
	}
	return mods
}
