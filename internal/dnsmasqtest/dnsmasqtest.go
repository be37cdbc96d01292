// Package dnsmasqtest runs a real DHCPv4 server for a test: Debian's
// dnsmasq (which scripts/setup.sh installs) inside a peer namespace of its
// own, on the far end of a veth whose near end is put in the client's
// namespace. The server hands out addresses from a fixed range with a
// router (option 3), a DNS server (option 6) and classless static routes
// (option 121); its lease file lives in t.TempDir(), and it is killed in
// t.Cleanup.
//
// When dnsmasq is missing the test is skipped, except under CI (CI=true),
// where it fails: CI must run the DHCP tests.
package dnsmasqtest

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/netagent/netagent/configurators/netnsx"
	"github.com/netagent/netagent/internal/testns"
	"github.com/netagent/netagent/internal/testtool"
	"github.com/vishvananda/netlink"
)

// Binary is dnsmasq's name, looked up in $PATH, then in /usr/sbin (Debian).
const Binary = "dnsmasq"

// The addresses every server uses: each lives in its own namespace pair,
// so tests running at the same time never see each other's.
var (
	// ServerAddr is the server's address on the veth (10.77.0.1/24); it is
	// also the router (option 3).
	ServerAddr = netip.MustParsePrefix("10.77.0.1/24")
	// RangeFirst and RangeLast bound the addresses handed out.
	RangeFirst = netip.MustParseAddr("10.77.0.100")
	RangeLast  = netip.MustParseAddr("10.77.0.150")
	// DNS is the name server announced (option 6); nothing listens there.
	DNS = netip.MustParseAddr("10.77.0.53")
)

// Options shape the server. The zero value serves two-minute leases
// (dnsmasq's minimum) with no classless routes.
type Options struct {
	// LeaseTime is the lease length; dnsmasq refuses less than two minutes.
	LeaseTime time.Duration
	// Renew, when set, is the renewal time sent (option 58, T1), so that a
	// test can see a renewal without waiting half the lease.
	Renew time.Duration
	// Rebind, when set, is the rebinding time sent (option 59, T2).
	Rebind time.Duration
	// Routes are classless static routes (option 121), each via the server
	// (ServerAddr). With any, RFC 3442 says the client ignores option 3:
	// add 0.0.0.0/0 here to keep a default route.
	Routes []netip.Prefix
}

// Server is a running dnsmasq.
type Server struct {
	// Peer is the server's namespace; Link is the server's end of the veth.
	Peer *netnsx.Target
	Link string
	// ClientLink is the client's end of the veth, in the client namespace.
	ClientLink string
	// LeaseFile is dnsmasq's lease database.
	LeaseFile string

	cmd  *exec.Cmd
	out  *syncBuffer
	done chan struct{}
	bin  string
	opts Options
}

// Start makes a veth named ifname in client (up), the other end in a new
// peer namespace with ServerAddr, and runs dnsmasq there until the test
// ends.
func Start(t testing.TB, client *netnsx.Target, ifname string, opts Options) *Server {
	t.Helper()
	bin := tool.Find(t)
	peer := testns.New(t)
	s := &Server{Peer: peer, Link: "dhcpsrv0", ClientLink: ifname,
		LeaseFile: filepath.Join(t.TempDir(), "dnsmasq.leases")}
	veth := &netlink.Veth{
		LinkAttrs:     netlink.LinkAttrs{Name: ifname},
		PeerName:      s.Link,
		PeerNamespace: netlink.NsFd(int(peer.NsHandle())),
	}
	if err := client.NL.LinkAdd(veth); err != nil {
		t.Fatalf("adding veth %s: %v", ifname, err)
	}
	link, err := client.NL.LinkByName(ifname)
	if err != nil {
		t.Fatal(err)
	}
	if err := client.NL.LinkSetUp(link); err != nil {
		t.Fatal(err)
	}
	testns.Exec(t, peer, "ip", "addr", "add", ServerAddr.String(), "dev", s.Link)
	testns.Exec(t, peer, "ip", "link", "set", s.Link, "up")
	s.bin, s.opts = bin, opts
	if err := s.start(t, bin, opts); err != nil {
		t.Fatalf("starting dnsmasq: %v", err)
	}
	return s
}

// Stop kills the server (its lease file stays): the network has no DHCP
// server until Restart.
func (s *Server) Stop() {
	s.cmd.Process.Kill()
	<-s.done
}

// Restart starts the server again, with its lease file, after Stop.
func (s *Server) Restart(t testing.TB) {
	t.Helper()
	if err := s.start(t, s.bin, s.opts); err != nil {
		t.Fatalf("restarting dnsmasq: %v", err)
	}
}

// Args are dnsmasq's arguments for opts: no DNS service (port 0), no
// configuration file, no daemon, logging to stderr.
func (s *Server) Args(opts Options) []string {
	lease := opts.LeaseTime
	if lease == 0 {
		lease = 2 * time.Minute
	}
	router := ServerAddr.Addr().String()
	args := []string{
		"--keep-in-foreground", "--conf-file=/dev/null", "--port=0",
		"--log-facility=-", "--log-dhcp", "--user=root", "--pid-file",
		"--interface=" + s.Link, "--bind-interfaces", "--dhcp-authoritative",
		"--no-ping", // no 3 s wait for an echo before each offer
		"--dhcp-leasefile=" + s.LeaseFile,
		fmt.Sprintf("--dhcp-range=%s,%s,255.255.255.0,%ds", RangeFirst, RangeLast, int(lease.Seconds())),
		"--dhcp-option=3," + router,
		"--dhcp-option=6," + DNS.String(),
	}
	if opts.Renew > 0 {
		args = append(args, fmt.Sprintf("--dhcp-option=58,%d", int(opts.Renew.Seconds())))
	}
	if opts.Rebind > 0 {
		args = append(args, fmt.Sprintf("--dhcp-option=59,%d", int(opts.Rebind.Seconds())))
	}
	if len(opts.Routes) > 0 {
		var r []string
		for _, p := range opts.Routes {
			r = append(r, p.String(), router)
		}
		args = append(args, "--dhcp-option=121,"+strings.Join(r, ","))
	}
	return args
}

// start runs dnsmasq in the peer namespace and waits until it serves
// (its "DHCP, IP range" line) or exits.
func (s *Server) start(t testing.TB, bin string, opts Options) error {
	if s.out == nil {
		s.out = &syncBuffer{}
	}
	args := append([]string{"netns", "exec", s.Peer.Name, bin}, s.Args(opts)...)
	s.cmd = exec.Command("ip", args...) // ip netns exec execs dnsmasq: same pid
	pr, pw, err := os.Pipe()
	if err != nil {
		return err
	}
	s.cmd.Stdout, s.cmd.Stderr = pw, pw
	if err := s.cmd.Start(); err != nil {
		pw.Close()
		pr.Close()
		return err
	}
	pw.Close()
	s.done = make(chan struct{})
	ready := make(chan struct{})
	go func() {
		defer close(s.done)
		sc := bufio.NewScanner(pr)
		once := sync.Once{}
		for sc.Scan() {
			s.out.WriteLine(sc.Text())
			if strings.Contains(sc.Text(), "DHCP, IP range") {
				once.Do(func() { close(ready) })
			}
		}
		pr.Close()
		s.cmd.Wait()
	}()
	t.Cleanup(func() {
		s.cmd.Process.Kill()
		<-s.done
		if t.Failed() {
			t.Logf("dnsmasq output:\n%s", s.out.String())
		}
	})
	select {
	case <-ready:
		return nil
	case <-s.done:
		return fmt.Errorf("dnsmasq exited: %s", s.out.String())
	}
}

// Log returns what dnsmasq has logged so far.
func (s *Server) Log() string { return s.out.String() }

// Leases returns the lines of the lease file ("expiry mac ip name id").
func (s *Server) Leases(t testing.TB) []string {
	t.Helper()
	b, err := os.ReadFile(s.LeaseFile)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, l := range strings.Split(string(b), "\n") {
		if l != "" {
			lines = append(lines, l)
		}
	}
	return lines
}

// tool is the server binary, found by testtool.
var tool = testtool.Tool{Name: Binary, Fallback: "/usr/sbin/" + Binary, Package: "dnsmasq"}

// syncBuffer collects dnsmasq's output lines for failure messages.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) WriteLine(s string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.b.WriteString(s)
	b.b.WriteByte('\n')
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}
