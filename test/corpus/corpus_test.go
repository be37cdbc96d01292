//go:build !vmtest

package corpus_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/netagent/netagent/agent/intent"
	"github.com/netagent/netagent/internal/testbin"
	"github.com/netagent/netagent/test/vm"
)

// nsCase is one intent of the corpus that runs in a namespace of this
// host's kernel. Every interface of type "physical" in the intent (but lo)
// is made by the test before the apply: a veth end whose peer is up, in the
// case's namespace or, with peerNS, in a peer namespace.
type nsCase struct {
	file string
	// down lists the physical links left admin-down before the apply:
	// links that start down, as after a boot.
	down []string
	// peerNS puts the peers of the physical links into a second namespace,
	// whose name replaces @PEERNS@ in the intent.
	peerNS bool
	// extra runs per-case checks after the first apply.
	extra func(e *env)
}

// nsCases are the corpus cases for the host's kernel, by file. README.md
// says which public configuration each mirrors.
var nsCases = []nsCase{
	{file: "netplan-static-routes.json"},
	{file: "netplan-static-routes-many.json", extra: func(e *env) {
		if n := len(e.ipJSON("-4", "route", "show", "proto", "211", "dev", "enp3s0")); n != 301 {
			e.t.Errorf("IPv4 routes of netagent over enp3s0: %d, want 301", n)
		}
	}},
	{file: "netplan-multi-gateway.json"},
	{file: "netplan-source-routing.json"},
	{file: "netplan-source-routing-blackhole.json"},
	{file: "netplan-ipv6-only.json", peerNS: true},
	{file: "netplan-virtual-ethernet.json"},
	{file: "netplan-vxlan.json"},
	{file: "nmstate-route-rule.json", peerNS: true},
	{file: "nmstate-linux-bridge.json"},
	{file: "nmstate-macvlan.json"},
	{file: "nmstate-veth-peer-netns.json", peerNS: true},
	{file: "systemd-route-static.json"},
	{file: "systemd-neighbor-section.json"},
	{file: "systemd-routing-policy-rule.json"},
	{file: "systemd-sysctl.json"},
	{file: "systemd-veth.json"},
	{file: "systemd-macvlan.json"},
	{file: "systemd-vxlan.json"},
	{file: "systemd-bridge.json"},
	{file: "systemd-activation-policy-up.json", down: []string{"test1"}},
	{file: "systemd-activation-policy-down.json", down: []string{"test2"}},
	{file: "systemd-address-static.json"},
	{file: "systemd-container-nat.json"},
	{file: "systemd-container-nat-two-networks.json"},
	{file: "systemd-container-nat-unordered.json"},
	{file: "ifupdown2-bridge-many-ports.json", down: []string{"swp9", "swp10", "swp11", "swp12"}},
	{file: "ifupdown2-address-virtual.json"},
	{file: "ifupdown2-vxlan.json"},
}

// TestVMCorpus boots a Debian kernel once and runs the corpus cases that
// need bonding, 802.1Q or bridge VLAN filtering in it (TestInVMCorpus).
func TestVMCorpus(t *testing.T) {
	vm.RunVMTests(t)
}

// Every intent of the corpus converges in one apply, and the kernel's own
// tools see it; a second apply writes nothing; check is clean; and the
// empty intent removes exactly netagent's objects.
func TestCorpus(t *testing.T) {
	listed := map[string]bool{}
	for _, c := range nsCases {
		listed[c.file] = true
	}
	for _, c := range vmCaseFiles() {
		listed[c] = true
	}
	files, err := filepath.Glob("*.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if !listed[f] {
			t.Errorf("%s is in the corpus but in no case list", f)
		}
	}
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	for f := range listed {
		if !strings.Contains(string(readme), "`"+f+"`") {
			t.Errorf("README.md does not describe %s", f)
		}
	}
	for _, c := range nsCases {
		t.Run(strings.TrimSuffix(c.file, ".json"), func(t *testing.T) { runNSCase(t, c) })
	}
}

// runNSCase runs one case: setup, apply, kernel checks, a second apply,
// check, removal.
func runNSCase(t *testing.T, c nsCase) {
	e := newEnv(t, c.peerNS)
	in := e.loadIntent(c.file)
	for _, ifc := range in.Interfaces {
		if ifc.Type == "physical" && ifc.Name != "lo" {
			e.addPhysical(ifc.Name, !slices.Contains(c.down, ifc.Name))
		}
	}
	unchanged := e.placeForeign()
	sysctlsBefore := e.sysctls(in)
	before := e.stableSnapshot()

	if res := e.netagent("apply", e.file); res.code != 0 {
		t.Fatalf("apply: %s", res)
	}
	e.checkKernel(in)
	if c.extra != nil {
		c.extra(e)
	}

	applied := e.stableSnapshot()
	if res := e.netagent("apply", e.file); res.code != 0 || !strings.Contains(res.stdout, "converged: 0 operations") {
		t.Errorf("second apply wrote: %s", res)
	}
	if again := e.stableSnapshot(); again != applied {
		t.Errorf("second apply changed the kernel:\n%s", lineDiff(applied, again))
	}
	if res := e.netagent("check", e.file); res.code != 0 {
		t.Errorf("check: %s", res)
	}
	// What show prints is an intent that the kernel already matches.
	if res := e.netagent("show", "--json"); res.code != 0 {
		t.Errorf("show: %s", res)
	} else if res := e.netagent("apply", e.writeFile("shown.json", res.stdout)); res.code != 0 ||
		!strings.Contains(res.stdout, "converged: 0 operations") {
		t.Errorf("apply of what show printed: %s", res)
	}

	e.checkImportKernel(in)

	empty := e.writeFile("empty.json", `{"version": 1}`)
	if res := e.netagent("apply", empty); res.code != 0 {
		t.Fatalf("apply of the empty intent: %s", res)
	}
	if after := e.stableSnapshot(); after != before {
		t.Errorf("removing the intent did not leave the namespace as it was:\n%s", lineDiff(before, after))
	}
	if after := e.sysctls(in); !mapsEqual(after, sysctlsBefore) {
		t.Errorf("sysctls after removal: %v, before: %v", after, sysctlsBefore)
	}
	unchanged()
}

// stableSnapshot waits until two snapshots in a row are the same (links
// settle for a moment after they change) and returns it.
func (e *env) stableSnapshot() string {
	e.t.Helper()
	prev, last, settled := "", "", false
	wait := 20 * time.Millisecond
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); {
		settled = e.carrierSettled() // before the snapshot, which it vouches for
		cur := e.snapshot()
		if cur == prev && settled {
			return cur
		}
		last, prev = prev, cur
		time.Sleep(wait)
		wait = min(2*wait, 300*time.Millisecond)
	}
	// Say what kept moving, so that a failure on a loaded machine can be
	// told from one netagent caused.
	e.t.Fatalf("the namespace never settled (carrier settled at the last look: %v); the last two snapshots:\n%s",
		settled, lineDiff(last, prev))
	return ""
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// checkImportKernel checks the round trip of import kernel: what it prints
// of the namespace holds the others' objects placeForeign placed, and less
// them and the sysctls the environment set (netagent would adopt them:
// that is apply --adopt's) is an intent whose plan is empty there.
func (e *env) checkImportKernel(applied *intent.Intent) {
	e.t.Helper()
	r := testbin.Run(e.t, e.bin, nil, "--state-dir", e.stateDir, "--netns", e.tgt.Name, "import", "kernel")
	if r.Code != 0 {
		e.t.Errorf("import kernel: exit %d\n%s", r.Code, r.Stderr)
		return
	}
	in, err := intent.Parse([]byte(r.Stdout))
	if err != nil {
		e.t.Fatalf("import kernel printed an intent that does not parse: %v\n%s", err, r.Stdout)
	}
	if n := withoutPlacedForeign(in); n != placedForeignObjects {
		e.t.Errorf("import kernel holds %d of the %d objects placeForeign placed:\n%s", n, placedForeignObjects, r.Stdout)
	}
	withoutEnvSysctls(in, applied)
	fixturesAsPhysical(in, applied)
	data, err := json.Marshal(in)
	if err != nil {
		e.t.Fatal(err)
	}
	if res := e.netagent("plan", e.writeFile("imported.json", string(data))); res.code != 0 ||
		!strings.Contains(res.stdout, "no changes: the kernel already matches the intent") {
		e.t.Errorf("plan of what import kernel printed, less placeForeign's objects:\n%s\nimported:\n%s\nwarnings:\n%s", res, r.Stdout, r.Stderr)
	}
}

// withoutEnvSysctls removes from in the sysctls that newEnv and
// addPhysical set (DAD off, no IPv6 on a peer), unless the applied
// intent has them too.
func withoutEnvSysctls(in, applied *intent.Intent) {
	for k := range in.Sysctls {
		_, intended := applied.Sysctls[k]
		env := strings.HasSuffix(k, ".accept_dad") || strings.HasSuffix(k, "p.disable_ipv6")
		if env && !intended {
			delete(in.Sysctls, k)
		}
	}
}

// fixturesAsPhysical describes as physical, as the applied intent does,
// the case's physical interfaces that the import gives as the veth pairs
// they are: this host has no spare NICs, so the test made each as a veth
// end with its peer beside it, and a pair made by hand that netagent's
// objects do not use (test2 of systemd-activation-policy-down, down and
// bare) is a pair to the import.
func fixturesAsPhysical(in, applied *intent.Intent) {
	physical := map[string]bool{}
	for _, i := range applied.Interfaces {
		physical[i.Name] = i.Type == intent.LinkPhysical
	}
	for n := range in.Interfaces {
		if i := &in.Interfaces[n]; i.Type == intent.LinkVeth && physical[i.Name] {
			i.Type, i.Veth, i.MAC = intent.LinkPhysical, nil, ""
		}
	}
}

// placedForeignObjects is how many objects of an intent placeForeign's
// are: the bridge, its address, the route, the rule, the neighbour, the
// chain (both families).
const placedForeignObjects = 6

// withoutPlacedForeign removes from in the objects placeForeign placed and
// returns how many it found.
func withoutPlacedForeign(in *intent.Intent) int {
	n := 0
	in.Interfaces = slices.DeleteFunc(in.Interfaces, func(i intent.Interface) bool {
		found := i.Name == "foreign0" && i.Type == intent.LinkBridge
		if found {
			n++
			if slices.Equal(i.Addresses, []string{"10.97.0.1/24"}) {
				n++
			}
		}
		return found
	})
	del := func(found bool) bool {
		if found {
			n++
		}
		return found
	}
	in.Routes = slices.DeleteFunc(in.Routes, func(r intent.Route) bool { return del(r.To == "10.99.0.0/16" && r.Via == "10.97.0.254") })
	in.Rules = slices.DeleteFunc(in.Rules, func(r intent.Rule) bool { return del(r.Priority == 500 && r.From == "10.98.0.0/16") })
	in.Neighbors = slices.DeleteFunc(in.Neighbors, func(x intent.Neighbor) bool { return del(x.Dev == "foreign0" && x.IP == "10.97.0.9") })
	in.Firewall.Chains = slices.DeleteFunc(in.Firewall.Chains, func(c intent.Chain) bool { return del(c.Name == "FOREIGN") })
	return n
}
