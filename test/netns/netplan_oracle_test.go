//go:build !vmtest

package netns_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/netagent/netagent/agent/importer"
	"github.com/netagent/netagent/agent/importer/netplan"
	"github.com/netagent/netagent/agent/intent"
)

// netplanExamples are netplan.io's examples, read where Debian installs
// them (never copied into the repository: GPL).
const netplanExamples = "/usr/share/doc/netplan/examples/*.yaml"

// TestNetplanOracle imports each of netplan.io's examples. One this host's
// kernel can hold (physical NICs, played by veths, and bridges; no DHCP
// server, no udev for offloads) is applied twice: by systemd-networkd on
// what `netplan generate` renders, and by netagent on the import, each in
// a namespace of its own; the two kernels must agree (links, addresses,
// routes of every table, rules). One with kinds the host lacks must
// import to an intent that validates; one netagent cannot express must be
// refused at a line. The outcome of each is logged as a table.
func TestNetplanOracle(t *testing.T) {
	var table []string
	for _, f := range netplanFiles(t) {
		table = append(table, fmt.Sprintf("%-42s %s", filepath.Base(f), netplanOutcome(t, f)))
	}
	t.Logf("netplan examples:\n%s", strings.Join(table, "\n"))
}

// netplanOutcome is one example's line of the table.
func netplanOutcome(t *testing.T, file string) string {
	res, err := netplan.Import([]string{file}, importer.Options{})
	var ie *importer.Error
	switch {
	case errors.As(err, &ie):
		r := ie.Refusals[0]
		if r.Pos.Line == 0 {
			t.Errorf("%s: refused without a line: %v", file, err)
		}
		return fmt.Sprintf("refused at line %d: %s: %s", r.Pos.Line, r.Key, r.Why)
	case err != nil:
		t.Errorf("%s: %v", file, err)
		return "error: " + err.Error()
	}
	if why := netplanNotOnHost(res.Intent); why != "" {
		return netplanExpected(t, file, res.Intent, why)
	}
	var diff string
	t.Run(filepath.Base(file), func(t *testing.T) {
		if diff = oracleCompare(t, netplanCase(file, res.Intent)); diff != "" {
			t.Errorf("%s: the kernels differ (-: networkd only, +: netagent only):\n%s", file, diff)
		}
	})
	if diff != "" {
		return "DIFFERS: " + strings.ReplaceAll(diff, "\n", "; ")
	}
	return "agrees with systemd-networkd"
}

// netplanNotOnHost says why in cannot be applied on this host ("": it can).
func netplanNotOnHost(in *intent.Intent) string {
	for _, ifc := range in.Interfaces {
		switch {
		case ifc.Type != intent.LinkPhysical && ifc.Type != intent.LinkBridge:
			return "the host kernel has no " + string(ifc.Type)
		case ifc.DHCP4.Enabled() || ifc.IPv6 != nil:
			return "DHCP or RA: no server here"
		case ifc.Ethtool != nil:
			return "offloads: networkd sets them by udev, absent here"
		case ifc.Match != nil:
			return "a match: the veths stand-ins have random MACs"
		}
	}
	return ""
}

// netplanGenerate renders file with `netplan generate --root-dir` and
// returns the directory of the systemd-networkd files.
func netplanGenerate(t *testing.T, file string) string {
	root := t.TempDir()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(root, "etc/netplan"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "etc/netplan", filepath.Base(file)), data, 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("netplan", "generate", "--root-dir", root).CombinedOutput(); err != nil {
		t.Fatalf("netplan generate %s: %v\n%s", file, err, out)
	}
	return filepath.Join(root, "run/systemd/network")
}

// networkdScript runs systemd-networkd in a private mount namespace (a
// tmpfs /run holding the generated files, /sys read-only: a container
// without udev) until every link with a .network file is configured or
// online (networkd's own state files say so), then stops it.
const networkdScript = `set -e
mount -t tmpfs tmpfs /run
mkdir -p /run/systemd/network /run/systemd/netif
cp "$1"/* /run/systemd/network/
chown -R systemd-network:systemd-network /run/systemd/netif
mount -o remount,ro /sys
/lib/systemd/systemd-networkd 2>/dev/null & pid=$!
for i in $(seq 1 60); do
	pending=0
	for f in /run/systemd/netif/links/*; do
		[ -e "$f" ] || { pending=1; continue; }
		grep -q NETWORK_FILE= "$f" || continue
		grep -q -e ADMIN_STATE=configured -e ONLINE_STATE=online "$f" || pending=1
	done
	[ $pending = 0 ] && [ $i -gt 1 ] && break
	sleep 0.25
done
kill $pid; wait $pid || true
[ $pending = 0 ] || { echo "networkd did not configure the links"; cat /run/systemd/netif/links/*; exit 1; }
`

func runNetworkd(t *testing.T, e *cliEnv, dir string) {
	out, err := exec.Command("ip", "netns", "exec", e.tgt.Name, "unshare", "-m", "sh", "-c", networkdScript, "sh", dir).CombinedOutput()
	if err != nil {
		t.Fatalf("systemd-networkd: %v\n%s", err, out)
	}
}

// autoPriorities reports whether in has rules netplan gave no priority:
// the kernel numbers them (32765 and down) in the order they are added,
// which is networkd's order of its links there and the intent's here, so
// their priorities are compared as the kernel's choice, not as numbers.
func autoPriorities(in *intent.Intent) bool {
	for _, r := range in.Rules {
		if r.Priority > 32700 && r.Priority < 32766 {
			return true
		}
	}
	return false
}

// netplanWanted are the intents the examples the host cannot hold must
// import to, as read from netplan's documentation of each key (the bond's
// ports name it as master; a VRF's routes and rules without a table are
// in its table; a rule without priority has the kernel's first choice;
// per-link nameservers are the intent's global DNS, in order, once each).
var netplanWanted = map[string]string{
	"bonding.yaml": `{"version":1,"interfaces":[{"name":"enp3s0","type":"physical","master":"bond0"},{"name":"enp4s0","type":"physical","master":"bond0"},` +
		`{"name":"bond0","type":"bond","bond":{"mode":"active-backup","primary":"enp3s0"},"dhcp4":true}]}`,
	"vrf.yaml": `{"version":1,"interfaces":[{"name":"vrf1005","type":"vrf","vrf":{"table":1005}},{"name":"br1","type":"bridge","master":"vrf1005"},` +
		`{"name":"br1005","type":"bridge","master":"vrf1005"}],"routes":[{"to":"0.0.0.0/0","via":"10.10.10.4","dev":"vrf1005","table":1005}],` +
		`"rules":[{"priority":32765,"from":"10.10.10.42/32","table":1005}]}`,
	"vlan.yaml": `{"version":1,"interfaces":[{"name":"mainif","type":"physical","match":{"mac":"de:ad:be:ef:ca:fe"},"addresses":["10.3.0.5/23"]},` +
		`{"name":"vlan15","type":"vlan","addresses":["10.3.99.5/24"],"vlan":{"parent":"mainif","id":15}},` +
		`{"name":"vlan10","type":"vlan","addresses":["10.3.98.5/24"],"vlan":{"parent":"mainif","id":10}}],` +
		`"routes":[{"to":"0.0.0.0/0","via":"10.3.0.1","dev":"mainif"}],` +
		`"dns":{"nameservers":["8.8.8.8","8.8.4.4","127.0.0.1"],"search":["example.com","domain1.example.com","domain2.example.com"]}}`,
}

// netplanExpected checks an example the host cannot hold against the
// intent it should import to, where one is written down.
func netplanExpected(t *testing.T, file string, got *intent.Intent, why string) string {
	want, ok := netplanWanted[filepath.Base(file)]
	if !ok {
		return "imports and validates (not compared: " + why + ")"
	}
	data, err := json.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	if string(data) != want {
		t.Errorf("%s: imported\n%s\nwant\n%s", file, data, want)
		return "DIFFERS from the expected intent (" + why + ")"
	}
	return "imports as expected (" + why + ")"
}
