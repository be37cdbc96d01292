//go:build !vmtest

package netns_test

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// daemonUnitCaps returns the capabilities systemd/netagent.service leaves
// the daemon (CapabilityBoundingSet=), as setpriv spells them:
// "-all,+net_admin,...".
func daemonUnitCaps(t *testing.T) string {
	t.Helper()
	unit, err := os.ReadFile("../../systemd/netagent.service")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(unit), "\n") {
		if caps, ok := strings.CutPrefix(line, "CapabilityBoundingSet="); ok {
			spec := "-all"
			for _, c := range strings.Fields(caps) {
				spec += ",+" + strings.ToLower(strings.TrimPrefix(c, "CAP_"))
			}
			return spec
		}
	}
	t.Fatal("the unit sets no CapabilityBoundingSet=")
	return ""
}

// daemonFullFile exercises every kind of kernel access: netlink (links,
// addresses, routes), iptables and a sysctl write.
const daemonFullFile = `{"version": 1,
  "interfaces": [{"name": "uplink0", "type": "physical", "addresses": ["192.0.2.2/24"]},
                 {"name": "br-test", "type": "bridge", "addresses": ["192.168.77.1/24"]}],
  "routes": [{"to": "198.51.100.0/24", "via": "192.0.2.1", "dev": "uplink0", "metric": 10}],
  "sysctls": {"net.ipv4.ip_forward": "1"},
  "firewall": {"chains": [{"table": "filter", "name": "NA-DAEMON", "jumpFrom": "FORWARD",
                           "rules": ["-i br-test -o uplink0 -j ACCEPT"]}]}}`

// TestAgentDaemonRunsWithTheUnitsCapabilities: with only the capabilities
// the unit grants, the daemon converges an intent that needs netlink,
// iptables and sysctl writes.
func TestAgentDaemonRunsWithTheUnitsCapabilities(t *testing.T) {
	setpriv := daemonSetpriv(t)
	e := daemonNewEnv(t)
	e.wrap = []string{setpriv, "--bounding-set", daemonUnitCaps(t), "--inh-caps", "-all", "--"}
	e.writeIntent("10-full.json", daemonFullFile)
	e.start()
	if !strings.Contains(e.exec("iptables", "-S", "FORWARD"), "-j NA-DAEMON") {
		t.Error("the firewall chain's jump is missing")
	}
	if got := strings.TrimSpace(e.exec("sysctl", "-n", "net.ipv4.ip_forward")); got != "1" {
		t.Errorf("ip_forward = %s", got)
	}
	if _, ok := e.route("198.51.100.0/24"); !ok {
		t.Error("the route is missing")
	}
}

// TestAgentDaemonNeedsCapSysAdmin: without CAP_SYS_ADMIN the daemon cannot
// enter the namespace and fails at start, which is why the unit keeps it.
func TestAgentDaemonNeedsCapSysAdmin(t *testing.T) {
	setpriv := daemonSetpriv(t)
	e := daemonNewEnv(t)
	e.wrap = []string{setpriv, "--bounding-set", "-all,+net_admin,+net_raw", "--inh-caps", "-all", "--"}
	e.writeIntent("10-full.json", daemonFullFile)
	ctx, cancel := context.WithTimeout(context.Background(), daemonWait)
	defer cancel()
	cmd := e.command()
	cmd = exec.CommandContext(ctx, cmd.Path, cmd.Args[1:]...)
	out, err := cmd.CombinedOutput()
	if err == nil || ctx.Err() != nil {
		t.Fatalf("the daemon ran without CAP_SYS_ADMIN (%v)\n%s", err, out)
	}
	if !strings.Contains(string(out), "root (or the capabilities CAP_NET_ADMIN and CAP_SYS_ADMIN) is needed") {
		t.Errorf("the failure does not say why:\n%s", out)
	}
}

func daemonSetpriv(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("setpriv")
	if err != nil {
		t.Fatal("setpriv (util-linux) is missing")
	}
	return p
}
