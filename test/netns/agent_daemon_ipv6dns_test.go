//go:build !vmtest

package netns_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/netagent/netagent/configurators/dns"
	"github.com/netagent/netagent/internal/dnsmasqtest"
)

// raDaemonEnv is daemonNewEnv with the uplink up0 facing dnsmasq's router
// advertisements instead of uplink0, and the kernel's autoconfiguration
// off until an intent turns it on.
func raDaemonEnv(t *testing.T) *daemonEnv {
	t.Helper()
	e := daemonBareEnv(t)
	e.exec("sysctl", "-qw", "net.ipv6.conf.default.accept_ra=0", "net.ipv6.conf.default.autoconf=0")
	dnsmasqtest.Start(t, e.tgt, "up0", dnsmasqtest.Options{RA: dnsmasqtest.RAOnly})
	return e
}

// inet6 returns the first address `ip -6 addr` shows, "" if none.
func inet6(out string) string {
	f := strings.Fields(out)
	for i := 0; i+1 < len(f); i++ {
		if f[i] == "inet6" {
			return f[i+1]
		}
	}
	return ""
}

// The daemon with acceptRA and a dns section: the kernel's SLAAC address
// and proto ra default route come and stay through drift checks (no
// repair deletes them, none is logged), and the daemon writes the
// resolv.conf it owns.
func TestAgentDaemonIPv6AcceptRAAndDNS(t *testing.T) {
	e := raDaemonEnv(t)
	resolv := filepath.Join(t.TempDir(), "resolv.conf")
	e.writeIntent("10-up.json", `{"version": 1,
  "interfaces": [{"name": "up0", "type": "physical", "ipv6": {"acceptRA": true}}],
  "dns": {"nameservers": ["2001:db8:77::53"], "search": ["lan.example"]}}`)
	e.start("--drift-interval", "1s", "--resolv-conf", resolv)

	e.waitFor("a SLAAC address and a default route from the advertisements", func() (bool, string) {
		addrs, routes := e.ip("-6", "addr", "show", "dev", "up0"), e.ip("-6", "route", "show", "default")
		return strings.Contains(addrs, "2001:db8:77:") && !strings.Contains(addrs, "tentative") && strings.Contains(routes, "proto ra"), addrs + routes
	})
	slaac := inet6(e.ip("-6", "addr", "show", "dev", "up0", "scope", "global"))
	// A clean drift check logs nothing: its rescheduling (status's
	// NextDriftCheck) says that it ran.
	var checks []time.Time
	e.waitFor("two drift checks after the address came", func() (bool, string) {
		st, err := e.status()
		if err != nil {
			return false, err.Error()
		}
		if len(checks) == 0 || !st.NextDriftCheck.Equal(checks[len(checks)-1]) {
			checks = append(checks, st.NextDriftCheck)
		}
		return len(checks) >= 3, fmt.Sprint(checks)
	})
	if got := inet6(e.ip("-6", "addr", "show", "dev", "up0", "scope", "global")); got != slaac || slaac == "" {
		t.Errorf("the SLAAC address went: before %q, after %q", slaac, got)
	}
	if !strings.Contains(e.ip("-6", "route", "show", "default"), "proto ra") {
		t.Error("the default route from the advertisements went")
	}
	if n := len(e.logs.entries(map[string]string{"msg": "drift: repairing"})); n != 0 {
		t.Errorf("%d drift repairs logged:\n%s", n, e.logs.String())
	}
	want := dns.Header + "\nnameserver 2001:db8:77::53\nsearch lan.example\n"
	if got, err := os.ReadFile(resolv); err != nil || string(got) != want {
		t.Errorf("resolv.conf %q (%v), want %q", got, err, want)
	}
}

// A resolv.conf the daemon did not write stays as it is; the daemon's
// status shows the dns item failing, naming the path.
func TestAgentDaemonForeignResolvConf(t *testing.T) {
	e := daemonNewEnv(t)
	resolv := filepath.Join(t.TempDir(), "resolv.conf")
	foreign := "nameserver 9.9.9.9\n"
	if err := os.WriteFile(resolv, []byte(foreign), 0o644); err != nil {
		t.Fatal(err)
	}
	e.writeIntent("10-dns.json", `{"version": 1, "dns": {"nameservers": ["192.0.2.53"]}}`)
	e.startAnyway("--resolv-conf", resolv) // never ready: an item fails
	e.waitFor("the dns item failing", func() (bool, string) {
		st, err := e.status()
		if err != nil {
			return false, err.Error()
		}
		it, ok := daemonItem(st, "dns/"+resolv)
		return ok && strings.Contains(it.LastError, resolv) && strings.Contains(it.LastError, "not written by netagent"), fmt.Sprintf("%+v", st.Items)
	})
	if got, _ := os.ReadFile(resolv); string(got) != foreign {
		t.Errorf("foreign resolv.conf now %q", got)
	}
}
