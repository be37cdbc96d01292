package probe_test

import (
	"bufio"
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/netagent/netagent/agent/probe"
	"github.com/netagent/netagent/internal/netnsx"
	"github.com/netagent/netagent/internal/testns"
)

// Addresses of the test pair: here (the probe's target) and peer.
const (
	here4, peer4, absent4 = "10.99.0.1", "10.99.0.2", "10.99.0.3"
	here6, peer6, absent6 = "fd00:99::1", "fd00:99::2", "fd00:99::3"
)

// pair makes two namespaces joined by a veth carrying here*/peer*.
func pair(t *testing.T) (here, peer *netnsx.Target) {
	t.Helper()
	here, peer = testns.New(t), testns.New(t)
	veth := &netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: "pr0"}, PeerName: "pr1", PeerNamespace: netlink.NsFd(peer.NsHandle())}
	if err := here.NL.LinkAdd(veth); err != nil {
		t.Fatal(err)
	}
	awaitHere := setup(t, here, "pr0", here4+"/24", here6+"/64")
	awaitPeer := setup(t, peer, "pr1", peer4+"/24", peer6+"/64")
	awaitHere()
	awaitPeer()
	return here, peer
}

// setup adds the addresses to the link, sets it up, and returns a func that
// waits for it to be operationally up (which needs the other end up too).
func setup(t *testing.T, tgt *netnsx.Target, name string, addrs ...string) (await func()) {
	t.Helper()
	l, err := tgt.NL.LinkByName(name)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range addrs {
		addr, err := netlink.ParseAddr(a)
		if err != nil {
			t.Fatal(err)
		}
		addr.Flags = unix.IFA_F_NODAD // usable at once, no duplicate detection to await
		if err := tgt.NL.AddrAdd(l, addr); err != nil {
			t.Fatalf("adding %s to %s: %v", a, name, err)
		}
	}
	ch, done := make(chan netlink.LinkUpdate, 16), make(chan struct{})
	ns := tgt.NsHandle()
	if err := netlink.LinkSubscribeWithOptions(ch, done, netlink.LinkSubscribeOptions{Namespace: &ns}); err != nil {
		t.Fatal(err)
	}
	if err := tgt.NL.LinkSetUp(l); err != nil {
		t.Fatal(err)
	}
	return func() {
		defer close(done)
		awaitOperUp(t, tgt, name, ch)
	}
}

// awaitOperUp waits for the link's operational state to turn up: the
// kernel sets up the link's IPv6 (its multicast route, used by neighbour
// discovery) at the same moment, a while after the carrier comes on.
func awaitOperUp(t *testing.T, tgt *netnsx.Target, name string, ch <-chan netlink.LinkUpdate) {
	t.Helper()
	if l, err := tgt.NL.LinkByName(name); err == nil && l.Attrs().OperState == netlink.OperUp {
		return
	}
	for u := range ch {
		if u.Attrs().Name == name && u.Attrs().OperState == netlink.OperUp {
			return
		}
	}
	t.Fatalf("link updates of %s ended before it came up", tgt.Name)
}

// listen starts a TCP listener inside tgt and returns its port; it
// accepts and closes connections until the test ends.
func listen(t *testing.T, tgt *netnsx.Target, addr string) string {
	t.Helper()
	var ln net.Listener
	if err := tgt.Do(func() (err error) {
		ln, err = net.Listen("tcp", net.JoinHostPort(addr, "0"))
		return err
	}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	return port
}

func run(t *testing.T, tgt *netnsx.Target, spec string) error {
	t.Helper()
	p, err := probe.Parse(spec)
	if err != nil {
		t.Fatal(err)
	}
	return p.Run(context.Background(), tgt)
}

func mustPass(t *testing.T, tgt *netnsx.Target, spec string) {
	t.Helper()
	if err := run(t, tgt, spec); err != nil {
		t.Errorf("%s: %v, want a pass", spec, err)
	}
}

func mustFail(t *testing.T, tgt *netnsx.Target, spec, why string) {
	t.Helper()
	err := run(t, tgt, spec)
	if !errors.Is(err, probe.ErrFailed) || !strings.Contains(err.Error(), why) || !strings.Contains(err.Error(), spec) {
		t.Errorf("%s: %v, want a failure naming the probe and saying %q", spec, err, why)
	}
}

func TestPingPeer(t *testing.T) {
	here, _ := pair(t)
	mustPass(t, here, "ping:"+peer4)
	mustPass(t, here, "ping:"+peer6)
	mustPass(t, here, "ping:["+peer6+"]")
}

func TestPingAbsentAddressFailsAtTheTimeout(t *testing.T) {
	here, _ := pair(t)
	mustFail(t, here, "ping:"+absent4+",count=2,interval=50ms,timeout=300ms", "no reply to 2 echo requests within 300ms")
	mustFail(t, here, "ping:"+absent6+",count=2,interval=50ms,timeout=300ms", "no reply to 2 echo requests within 300ms")
}

// Echo replies to someone else (ping(8) from the same namespace, which a
// raw socket sees too) never pass the probe of an absent address.
func TestPingIgnoresOtherReplies(t *testing.T) {
	here, _ := pair(t)
	for _, peer := range []string{peer4, peer6} {
		cmd := exec.Command("ip", "netns", "exec", here.Name, "ping", "-n", "-i", "0.02", peer)
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		lines := bufio.NewScanner(out)
		for lines.Scan() && !strings.Contains(lines.Text(), "bytes from") {
		}
		go func() { // keep reading: the replies go on while the probe runs
			for lines.Scan() {
			}
		}()
		absent := strings.Replace(peer, "2", "3", 1)
		// Many requests, so the sequence numbers of ping(8) are among ours.
		mustFail(t, here, "ping:"+absent+",count=100,interval=3ms,timeout=300ms", "no reply")
		cmd.Process.Kill()
		cmd.Wait()
	}
}

// No route at all: the sends fail and the error says why.
func TestPingWithoutRouteSaysWhy(t *testing.T) {
	here, _ := pair(t)
	mustFail(t, here, "ping:192.0.2.1,count=1,timeout=100ms", "network is unreachable")
}

func TestTCPListenerInPeer(t *testing.T) {
	here, peer := pair(t)
	mustPass(t, here, "tcp:"+peer4+":"+listen(t, peer, peer4))
	mustPass(t, here, "tcp:["+peer6+"]:"+listen(t, peer, peer6))
}

func TestTCPClosedPortIsRefused(t *testing.T) {
	here, _ := pair(t)
	mustFail(t, here, "tcp:"+peer4+":1", "connection refused")
	mustFail(t, here, "tcp:["+peer6+"]:1", "connection refused")
}

func TestTCPAbsentHostTimesOut(t *testing.T) {
	here, _ := pair(t)
	mustFail(t, here, "tcp:"+absent4+":22,timeout=300ms", "no connection within 300ms")
}

// The probes act from the target namespace: the peer is reachable from
// the namespace joined to it, and not from another one that is not.
func TestProbesRunInTheTargetNamespace(t *testing.T) {
	here, peer := pair(t)
	other := testns.New(t)
	port := listen(t, peer, peer4)
	mustPass(t, here, "ping:"+peer4)
	mustPass(t, here, "tcp:"+peer4+":"+port)
	mustFail(t, other, "ping:"+peer4+",count=1,timeout=100ms", "network is unreachable")
	mustFail(t, other, "tcp:"+peer4+":"+port, "network is unreachable")
	// A loopback listener inside the target: only the target sees it.
	lport := listen(t, here, "127.0.0.1")
	mustPass(t, here, "tcp:127.0.0.1:"+lport)
	mustFail(t, other, "tcp:127.0.0.1:"+lport, "connection refused")
}

// The unprivileged ping socket (when ping_group_range admits us) works as
// well as the raw socket root falls back on.
func TestPingThroughPingSocket(t *testing.T) {
	here, _ := pair(t)
	if err := here.Do(func() error {
		return os.WriteFile("/proc/sys/net/ipv4/ping_group_range", []byte("0 2147483647"), 0o644)
	}); err != nil {
		t.Fatal(err)
	}
	mustPass(t, here, "ping:"+peer4)
	mustPass(t, here, "ping:"+peer6)
	mustFail(t, here, "ping:"+absent4+",count=1,timeout=200ms", "no reply")
}

func TestAllJoinsEachFailure(t *testing.T) {
	here, peer := pair(t)
	port := listen(t, peer, peer4)
	ps, err := probe.ParseAll([]string{
		"ping:" + peer4,
		"ping:" + absent4 + ",count=1,timeout=200ms",
		"tcp:" + peer4 + ":" + port,
		"tcp:" + peer4 + ":1",
	})
	if err != nil {
		t.Fatal(err)
	}
	err = probe.All(context.Background(), here, ps)
	if !errors.Is(err, probe.ErrFailed) {
		t.Fatalf("All = %v, want ErrFailed", err)
	}
	msg := err.Error()
	for _, s := range []string{"ping:" + absent4, "tcp:" + peer4 + ":1"} {
		if !strings.Contains(msg, s) {
			t.Errorf("All's error does not name %s:\n%s", s, msg)
		}
	}
	for _, s := range []string{"ping:" + peer4 + ":", "tcp:" + peer4 + ":" + port} {
		if strings.Contains(msg, s) {
			t.Errorf("All's error names passing probe %s:\n%s", s, msg)
		}
	}
	if err := probe.All(context.Background(), here, []probe.Probe{ps[0], ps[2]}); err != nil {
		t.Errorf("All of passing probes = %v", err)
	}
}

// A cancelled context ends a probe at once, and is not a probe failure.
func TestCancelledContextIsNotAFailure(t *testing.T) {
	here, _ := pair(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, spec := range []string{"ping:" + absent4 + ",timeout=1h", "tcp:" + absent4 + ":22,timeout=1h"} {
		p, _ := probe.Parse(spec)
		if err := p.Run(ctx, here); !errors.Is(err, context.Canceled) || errors.Is(err, probe.ErrFailed) {
			t.Errorf("%s with a cancelled context: %v, want context.Canceled", spec, err)
		}
	}
}
