// Package dnsmasqtest runs a real DHCPv4 server for a test (and, with
// Options.RA and Options.DHCP6, an IPv6 router sending advertisements and
// a DHCPv6 server): Debian's
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
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/netagent/netagent/internal/netnsx"
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

	// ServerAddr6 is the server's IPv6 address on the veth; its prefix is
	// the one advertised (router advertisements) and served (DHCPv6).
	ServerAddr6 = netip.MustParsePrefix("2001:db8:77::1/64")
	// Range6First and Range6Last bound the DHCPv6 addresses (IA_NA).
	Range6First = netip.MustParseAddr("2001:db8:77::100")
	Range6Last  = netip.MustParseAddr("2001:db8:77::1ff")
	// DNS6 is the IPv6 name server announced (DHCPv6 option 23, and the
	// RDNSS of router advertisements); nothing listens there.
	DNS6 = netip.MustParseAddr("2001:db8:77::53")
)

// RAMode is how the server advertises its IPv6 prefix (dnsmasq's
// dhcp-range modes): "" sends no router advertisements.
type RAMode string

// The router advertisement modes.
const (
	// RAOnly: advertisements with the prefix for SLAAC, no DHCPv6.
	RAOnly RAMode = "ra-only"
	// RAStateless: SLAAC, and DHCPv6 for other configuration (DNS).
	RAStateless RAMode = "ra-stateless"
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

	// RA, when set, makes the server a router advertising ServerAddr6's
	// prefix every few seconds (dnsmasq's --enable-ra, router lifetime
	// 30 min: a default route for the clients).
	RA RAMode
	// DHCP6 serves DHCPv6 addresses (IA_NA) from Range6First-Range6Last
	// with DNS6 and, with Domain, a domain search list; with RA unset,
	// the advertisements say "managed" (M flag) and carry no prefix for
	// SLAAC.
	DHCP6 bool
	// Domain, when set, is the search domain sent (DHCPv4 option 15 and
	// DHCPv6 option 24).
	Domain string
	// DHCPOptions are further dhcp-option values, sent as they are
	// (after the others: one given again replaces it), such as
	// `6,127.0.0.1,10.77.0.53` or `15,"a.example\nnameserver 6.6.6.6"`.
	// They go into a configuration file, where dnsmasq unescapes \n, \t,
	// \r and \e in a quoted string (on its command line it does not).
	DHCPOptions []string
	// Command, when set, is run in the peer namespace instead of the
	// dnsmasq found on $PATH, with dnsmasq's arguments (Args) after it:
	// a wrapper that execs dnsmasq elsewhere, such as the host's, in a
	// chroot of the VM's tests on the host's root (test/vm's HostRoot).
	// It must exec dnsmasq (the same pid), as `ip netns exec` does.
	Command []string
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
	bin := ""
	if len(opts.Command) == 0 {
		bin = tool.Find(t)
	}
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
	if opts.RA != "" || opts.DHCP6 {
		testns.Exec(t, peer, "ip", "addr", "add", ServerAddr6.String(), "dev", s.Link, "nodad")
	}
	testns.Exec(t, peer, "ip", "link", "set", s.Link, "up")
	s.bin, s.opts = bin, opts
	if len(opts.DHCPOptions) > 0 {
		var conf strings.Builder
		for _, o := range opts.DHCPOptions {
			conf.WriteString("dhcp-option=" + o + "\n")
		}
		if err := os.WriteFile(s.confFile(), []byte(conf.String()), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.start(t, bin, opts); err != nil {
		t.Fatalf("starting dnsmasq: %v", err)
	}
	return s
}

// confFile is where Options.DHCPOptions go, next to the lease file.
func (s *Server) confFile() string { return s.LeaseFile + ".conf" }

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
	if opts.Domain != "" {
		args = append(args, "--dhcp-option=15,"+opts.Domain)
	}
	if len(opts.DHCPOptions) > 0 {
		args[1] = "--conf-file=" + s.confFile()
	}
	return append(args, s.args6(opts, lease)...)
}

// args6 are the arguments of router advertisements and DHCPv6.
func (s *Server) args6(opts Options, lease time.Duration) []string {
	if opts.RA == "" && !opts.DHCP6 {
		return nil
	}
	prefix := ServerAddr6.Masked().Addr().String()
	args := []string{"--enable-ra", "--ra-param=" + s.Link + ",4,1800",
		"--dhcp-option=option6:dns-server,[" + DNS6.String() + "]"}
	if opts.Domain != "" {
		args = append(args, "--dhcp-option=option6:domain-search,"+opts.Domain)
	}
	if opts.RA != "" {
		args = append(args, fmt.Sprintf("--dhcp-range=%s,%s,64,%ds", prefix, opts.RA, int(lease.Seconds())))
	}
	if opts.DHCP6 {
		args = append(args, fmt.Sprintf("--dhcp-range=%s,%s,64,%ds", Range6First, Range6Last, int(lease.Seconds())))
	}
	return args
}

// readyLines are the lines dnsmasq logs once it serves what opts ask for.
func readyLines(opts Options) []string {
	lines := []string{"DHCP, IP range"}
	if opts.RA != "" || opts.DHCP6 {
		lines = append(lines, "IPv6 router advertisement enabled")
	}
	if opts.DHCP6 {
		lines = append(lines, "DHCPv6, IP range")
	}
	return lines
}

// start runs dnsmasq in the peer namespace and waits until it serves
// (its "DHCP, IP range" line) or exits.
func (s *Server) start(t testing.TB, bin string, opts Options) error {
	if s.out == nil {
		s.out = &syncBuffer{}
	}
	prog := []string{bin}
	if len(opts.Command) > 0 {
		prog = opts.Command
	}
	args := slices.Concat([]string{"netns", "exec", s.Peer.Name}, prog, s.Args(opts))
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
		waiting := readyLines(opts)
		for sc.Scan() {
			s.out.WriteLine(sc.Text())
			waiting = slices.DeleteFunc(waiting, func(l string) bool { return strings.Contains(sc.Text(), l) })
			if len(waiting) == 0 {
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
