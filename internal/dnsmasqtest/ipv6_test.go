package dnsmasqtest

import (
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/netagent/netagent/internal/testns"
	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// The IPv6 options add router advertisements and a DHCPv6 range to the
// DHCPv4 server's arguments, and nothing without them.
func TestArgs6(t *testing.T) {
	s := &Server{Link: "srv0"}
	if args := s.Args(Options{}); slices.ContainsFunc(args, func(a string) bool { return a == "--enable-ra" || strings.Contains(a, "option6") }) {
		t.Errorf("IPv4 only: %q", args)
	}
	args := strings.Join(s.Args(Options{RA: RAStateless, DHCP6: true, Domain: "lan.example"}), " ")
	for _, want := range []string{"--enable-ra", "--ra-param=srv0,4,1800", "--dhcp-range=2001:db8:77::,ra-stateless,64,120s",
		"--dhcp-range=2001:db8:77::100,2001:db8:77::1ff,64,120s", "option6:dns-server,[2001:db8:77::53]",
		"option6:domain-search,lan.example", "--dhcp-option=15,lan.example"} {
		if !strings.Contains(args, want) {
			t.Errorf("args %s lack %s", args, want)
		}
	}
}

// With RA, a client whose kernel accepts advertisements (a fresh
// namespace's default) makes a SLAAC address in the advertised prefix and
// a default route through the server.
func TestAdvertises(t *testing.T) {
	client := testns.New(t)
	ch, done := make(chan netlink.AddrUpdate, 64), make(chan struct{})
	defer close(done)
	ns := client.NsHandle()
	if err := netlink.AddrSubscribeWithOptions(ch, done, netlink.AddrSubscribeOptions{Namespace: &ns, ListExisting: true}); err != nil {
		t.Fatal(err)
	}
	srv := Start(t, client, "up0", Options{RA: RAOnly})
	prefix := ServerAddr6.Masked()
	deadline := time.After(time.Minute)
	for {
		select {
		case u := <-ch:
			a, _ := netip.AddrFromSlice(u.LinkAddress.IP)
			if u.NewAddr && prefix.Contains(a) && u.Flags&unix.IFA_F_TENTATIVE == 0 {
				out := testns.Exec(t, client, "ip", "-6", "route", "show", "default")
				if !strings.Contains(out, "proto ra") {
					// The route comes with the same advertisement: it is
					// in place before the address finishes DAD.
					t.Errorf("no default route from the advertisement: %q", out)
				}
				return
			}
		case <-deadline:
			t.Fatalf("no SLAAC address in %v:\n%s\n%s", prefix, testns.Exec(t, client, "ip", "-6", "addr"), srv.Log())
		}
	}
}
