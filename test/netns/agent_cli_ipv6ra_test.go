//go:build !vmtest

package netns_test

import (
	"net"
	"strings"
	"testing"
	"time"

	"github.com/netagent/netagent/internal/dnsmasqtest"
	"github.com/netagent/netagent/internal/testns"
	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// raEnv is a namespace whose uplink up0 faces dnsmasq advertising
// 2001:db8:77::/64 (router advertisements every few seconds), with the
// kernel's autoconfiguration off until an intent turns it on.
func raEnv(t *testing.T, opts dnsmasqtest.Options) *cliEnv {
	t.Helper()
	e, _ := raEnvServer(t, opts)
	return e
}

// raEnvServer is raEnv with its server.
func raEnvServer(t *testing.T, opts dnsmasqtest.Options) (*cliEnv, *dnsmasqtest.Server) {
	t.Helper()
	e := &cliEnv{t: t, tgt: testns.New(t), bin: cliBinary(t), stateDir: t.TempDir()}
	e.exec("sysctl", "-qw", "net.ipv6.conf.default.accept_ra=0", "net.ipv6.conf.default.autoconf=0")
	return e, dnsmasqtest.Start(t, e.tgt, "up0", opts)
}

// waitAddr waits, on netlink events (no polling), for a usable (not
// tentative) address of up0 in prefix; it fails the test at the deadline.
func (e *cliEnv) waitAddr(prefix *net.IPNet, within time.Duration) net.IPNet {
	e.t.Helper()
	ch, done := make(chan netlink.AddrUpdate, 64), make(chan struct{})
	defer close(done)
	ns := e.tgt.NsHandle()
	if err := netlink.AddrSubscribeWithOptions(ch, done, netlink.AddrSubscribeOptions{Namespace: &ns, ListExisting: true}); err != nil {
		e.t.Fatal(err)
	}
	deadline := time.After(within)
	for {
		select {
		case u := <-ch:
			if u.NewAddr && prefix.Contains(u.LinkAddress.IP) && u.Flags&unix.IFA_F_TENTATIVE == 0 {
				return u.LinkAddress
			}
		case <-deadline:
			e.t.Fatalf("no address in %v on up0 after %v:\n%s", prefix, within, e.ip("-6", "addr"))
		}
	}
}

// waitDefault6 waits, on netlink events, for an IPv6 default route of
// protocol ra.
func (e *cliEnv) waitDefault6(within time.Duration) {
	e.t.Helper()
	ch, done := make(chan netlink.RouteUpdate, 64), make(chan struct{})
	defer close(done)
	ns := e.tgt.NsHandle()
	if err := netlink.RouteSubscribeWithOptions(ch, done, netlink.RouteSubscribeOptions{Namespace: &ns, ListExisting: true}); err != nil {
		e.t.Fatal(err)
	}
	deadline := time.After(within)
	for {
		select {
		case u := <-ch:
			ones, bits := 0, 0
			if u.Dst != nil {
				ones, bits = u.Dst.Mask.Size()
			}
			if u.Type == unix.RTM_NEWROUTE && u.Family == unix.AF_INET6 && ones == 0 && (u.Dst == nil || bits == 128) && u.Protocol == unix.RTPROT_RA {
				return
			}
		case <-deadline:
			e.t.Fatalf("no IPv6 default route from router advertisements after %v:\n%s", within, e.ip("-6", "route"))
		}
	}
}

var raPrefix = func() *net.IPNet { _, p, _ := net.ParseCIDR("2001:db8:77::/64"); return p }()

// ipv6.acceptRA on an uplink of a host that forwards IPv6 (the kernel's
// all.forwarding, not the intent's): accept_ra is 2, without which a
// forwarding interface ignores advertisements; the kernel makes a SLAAC
// address and a default route from dnsmasq's advertisements. Applying
// again changes nothing and check is clean: the kernel's address and its
// proto ra route are not netagent's to remove. Taking the section out
// puts the sysctls back.
func TestAgentCLIIPv6AcceptRA(t *testing.T) {
	e := raEnv(t, dnsmasqtest.Options{RA: dnsmasqtest.RAOnly})
	e.exec("sysctl", "-qw", "net.ipv6.conf.all.forwarding=1") // also sets up0's
	get := func(k string) string { return strings.TrimSpace(e.exec("sysctl", "-n", "net.ipv6.conf.up0."+k)) }

	on := e.writeFile("ra.json", `{"version": 1, "interfaces": [{"name": "up0", "type": "physical", "ipv6": {"acceptRA": true}}]}`)
	e.mustRun(0, "apply", on)
	if got := get("accept_ra"); got != "2" {
		t.Fatalf("accept_ra %s, want 2 on a forwarding host", got)
	}
	if get("autoconf") != "1" || get("disable_ipv6") != "0" || get("accept_ra_defrtr") != "1" {
		t.Fatalf("autoconf %s disable_ipv6 %s accept_ra_defrtr %s", get("autoconf"), get("disable_ipv6"), get("accept_ra_defrtr"))
	}
	slaac := e.waitAddr(raPrefix, time.Minute)
	e.waitDefault6(time.Minute)

	if res := e.mustRun(0, "apply", on); !strings.Contains(res.stdout, "converged: 0 operations") {
		t.Errorf("second apply: %s", res)
	}
	e.mustRun(0, "check", on)
	if out := e.ip("-6", "addr", "show", "dev", "up0"); !strings.Contains(out, slaac.IP.String()) {
		t.Errorf("SLAAC address %v gone after the second apply:\n%s", slaac.IP, out)
	}
	if out := e.ip("-6", "route", "show", "default"); !strings.Contains(out, "proto ra") {
		t.Errorf("default route gone after the second apply:\n%s", out)
	}

	e.mustRun(0, "apply", e.writeFile("off.json", `{"version": 1, "interfaces": [{"name": "up0", "type": "physical"}]}`))
	if get("accept_ra") != "0" || get("autoconf") != "0" {
		t.Errorf("after removal accept_ra %s autoconf %s, want the originals 0 0", get("accept_ra"), get("autoconf"))
	}
}

// Without forwarding, acceptRA is accept_ra 1; acceptRADefRoute false
// takes the address but no default route.
func TestAgentCLIIPv6AcceptRANoDefault(t *testing.T) {
	e := raEnv(t, dnsmasqtest.Options{RA: dnsmasqtest.RAOnly})
	on := e.writeFile("ra.json", `{"version": 1, "interfaces": [{"name": "up0", "type": "physical", "ipv6": {"acceptRA": true, "acceptRADefRoute": false}}]}`)
	e.mustRun(0, "apply", on)
	if got := strings.TrimSpace(e.exec("sysctl", "-n", "net.ipv6.conf.up0.accept_ra")); got != "1" {
		t.Fatalf("accept_ra %s, want 1", got)
	}
	e.waitAddr(raPrefix, time.Minute)
	if out := e.ip("-6", "route", "show", "default"); out != "" {
		t.Errorf("a default route with acceptRADefRoute false:\n%s", out)
	}
	e.mustRun(0, "check", on)
}

// Turning acceptRA on for a link that is already up solicits a router at
// once (the kernel solicits only when a link comes up, and the router's
// next periodic advertisement may be minutes away): dnsmasq logs the
// Router Solicitation and answers it.
func TestAgentCLIAcceptRASolicits(t *testing.T) {
	e := &cliEnv{t: t, tgt: testns.New(t), bin: cliBinary(t), stateDir: t.TempDir()}
	e.exec("sysctl", "-qw", "net.ipv6.conf.default.accept_ra=0", "net.ipv6.conf.default.autoconf=0")
	srv := dnsmasqtest.Start(t, e.tgt, "up0", dnsmasqtest.Options{RA: dnsmasqtest.RAOnly})
	_, linkLocal, _ := net.ParseCIDR("fe80::/64")
	e.waitAddr(linkLocal, 20*time.Second) // the kernel sends nothing from a tentative address
	if strings.Contains(srv.Log(), "RTR-SOLICIT") {
		t.Fatalf("a solicitation before acceptRA:\n%s", srv.Log())
	}
	e.mustRun(0, "apply", e.writeFile("ra.json", `{"version": 1, "interfaces": [{"name": "up0", "type": "physical", "ipv6": {"acceptRA": true}}]}`))
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(srv.Log(), "RTR-SOLICIT(") {
		if time.Now().After(deadline) {
			t.Fatalf("no Router Solicitation reached the router:\n%s", srv.Log())
		}
		time.Sleep(100 * time.Millisecond)
	}
	e.waitAddr(raPrefix, time.Minute)
}
