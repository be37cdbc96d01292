package probe_test

import (
	"errors"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/net/dns/dnsmessage"

	"github.com/netagent/netagent/agent/probe"
	"github.com/netagent/netagent/internal/netnsx"
	"github.com/netagent/netagent/internal/testns"
)

// The test server's zone: what it answers to each name.
var (
	okA     = netip.MustParseAddr("192.0.2.10")
	okA2    = netip.MustParseAddr("192.0.2.11")
	sixAAAA = netip.MustParseAddr("2001:db8::10")
)

// dnsServer serves the test zone over UDP and TCP on addr (HOST:PORT,
// port 0: any) inside tgt, until the test ends, and returns its address.
//
//	ok.test     A 192.0.2.10, 192.0.2.11
//	six.test    AAAA 2001:db8::10 (no A)
//	big.test    over UDP truncated and empty; over TCP A 192.0.2.10
//	broken.test SERVFAIL
//	slow.test   no answer at all
//	other names NXDOMAIN
func dnsServer(t *testing.T, tgt *netnsx.Target, addr string) string {
	t.Helper()
	var pc net.PacketConn
	var ln net.Listener
	if err := tgt.Do(func() (err error) {
		if pc, err = net.ListenPacket("udp", addr); err != nil {
			return err
		}
		ln, err = net.Listen("tcp", pc.LocalAddr().String())
		return err
	}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Close(); ln.Close() })
	go func() {
		buf := make([]byte, 512)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			if out := zoneAnswer(buf[:n], false); out != nil {
				pc.WriteTo(out, from)
			}
		}
	}()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			buf := make([]byte, 514)
			n, _ := c.Read(buf)
			if n > 2 {
				out := zoneAnswer(buf[2:n], true)
				c.Write(append([]byte{byte(len(out) >> 8), byte(len(out))}, out...))
			}
			c.Close()
		}
	}()
	return pc.LocalAddr().String()
}

func zoneAnswer(q []byte, overTCP bool) []byte {
	var m dnsmessage.Message
	if err := m.Unpack(q); err != nil || len(m.Questions) != 1 {
		return nil
	}
	qn := m.Questions[0]
	m.Response, m.RecursionAvailable = true, true
	rr := func(a netip.Addr) dnsmessage.Resource {
		h := dnsmessage.ResourceHeader{Name: qn.Name, Class: dnsmessage.ClassINET, TTL: 60}
		if a.Is4() {
			return dnsmessage.Resource{Header: h, Body: &dnsmessage.AResource{A: a.As4()}}
		}
		return dnsmessage.Resource{Header: h, Body: &dnsmessage.AAAAResource{AAAA: a.As16()}}
	}
	switch name := strings.TrimSuffix(qn.Name.String(), "."); {
	case name == "slow.test":
		return nil
	case name == "broken.test":
		m.RCode = dnsmessage.RCodeServerFailure
	case name == "ok.test" && qn.Type == dnsmessage.TypeA:
		m.Answers = []dnsmessage.Resource{rr(okA), rr(okA2)}
	case name == "six.test" && qn.Type == dnsmessage.TypeAAAA:
		m.Answers = []dnsmessage.Resource{rr(sixAAAA)}
	case name == "big.test" && qn.Type == dnsmessage.TypeA && !overTCP:
		m.Truncated = true
	case name == "big.test" && qn.Type == dnsmessage.TypeA:
		m.Answers = []dnsmessage.Resource{rr(okA)}
	case name == "ok.test" || name == "six.test" || name == "big.test":
		// NOERROR, no record of the type
	default:
		m.RCode = dnsmessage.RCodeNameError
	}
	out, _ := m.Pack()
	return out
}

func TestDNSAnswers(t *testing.T) {
	here, peer := pair(t)
	local := dnsServer(t, here, "127.0.0.1:0")
	remote := dnsServer(t, peer, peer4+":0")
	remote6 := dnsServer(t, peer, "["+peer6+"]:0")
	for _, srv := range []string{local, remote, remote6} {
		mustPass(t, here, "dns:ok.test@"+srv)
		mustPass(t, here, "dns:ok.test.@"+srv+",addr="+okA2.String())
		mustPass(t, here, "dns:six.test@"+srv)
		mustPass(t, here, "dns:six.test@"+srv+",addr="+sixAAAA.String())
		mustPass(t, here, "dns:big.test@"+srv+",addr="+okA.String()) // over TCP
		mustFail(t, here, "dns:ok.test@"+srv+",addr=192.0.2.99", "does not hold 192.0.2.99")
		mustFail(t, here, "dns:six.test@"+srv+",addr=192.0.2.10", "no address in the answer")
		mustFail(t, here, "dns:gone.test@"+srv, "NXDOMAIN")
		mustFail(t, here, "dns:broken.test@"+srv, "SERVFAIL")
		mustFail(t, here, "dns:slow.test@"+srv+",timeout=300ms", "no answer in time")
	}
}

// The server is reached from the target namespace only.
func TestDNSRunsInTheTargetNamespace(t *testing.T) {
	here, peer := pair(t)
	remote := dnsServer(t, peer, peer4+":0")
	other := testns.New(t)
	mustPass(t, here, "dns:ok.test@"+remote)
	mustFail(t, other, "dns:ok.test@"+remote, "network is unreachable")
}

// Without @SERVER the probe asks the namespace's resolvers: those of
// /etc/netns/NAME/resolv.conf, as `ip netns exec` gives them.
func TestDNSDefaultResolvers(t *testing.T) {
	here, peer := pair(t)
	dnsServer(t, peer, peer4+":53")
	// The first resolver does not answer: the probe asks the next.
	resolvConf(t, here, "# test\nsearch test\nnameserver 192.0.2.250\nnameserver "+peer4+"\n")
	mustPass(t, here, "dns:ok.test")
	mustFail(t, here, "dns:gone.test", "NXDOMAIN")
	resolvConf(t, here, "search test\n")
	err := run(t, here, "dns:ok.test")
	if err == nil || errors.Is(err, probe.ErrFailed) || !strings.Contains(err.Error(), "names no name server") {
		t.Errorf("dns:ok.test with no nameserver line: %v, want an error saying so (not a failed probe)", err)
	}
}

// resolvConf writes the namespace's resolv.conf (/etc/netns/NAME), removed
// when the test ends.
func resolvConf(t *testing.T, tgt *netnsx.Target, text string) {
	t.Helper()
	dir := filepath.Join("/etc/netns", tgt.Name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.WriteFile(filepath.Join(dir, "resolv.conf"), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}
