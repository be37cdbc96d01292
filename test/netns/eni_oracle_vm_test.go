//go:build vmtest

package netns_test

import (
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/netagent/netagent/agent/intent"
	"github.com/netagent/netagent/internal/netnsx"
	"github.com/netagent/netagent/internal/testns"
	"github.com/netagent/netagent/test/vm"
)

// eniVMCases are this test's own files for the kinds the host kernel
// lacks (bonds, 802.1Q VLANs, VRFs, VLAN-aware bridges), compared with
// ifupdown2 in the VM as TestENIOracle compares the others on the host.
var eniVMCases = map[string]map[string]string{
	"vm:bond": {"interfaces": "auto eth1\niface eth1 inet manual\nauto eth2\niface eth2 inet manual\n" +
		"auto bond0\niface bond0 inet static\n  bond-slaves eth1 eth2\n  bond-mode 802.3ad\n  bond-miimon 100\n" +
		"  bond-lacp-rate fast\n  bond-xmit-hash-policy layer3+4\n  bond-min-links 1\n  mtu 9000\n" +
		"  address 192.0.2.10/24\n  gateway 192.0.2.1\n"},
	"vm:bond-active-backup": {"interfaces": "auto bond1\niface bond1\n  bond-ports eth1 eth2\n  bond-mode active-backup\n" +
		"  bond-primary eth2\n  bond-miimon 50\n  address 198.51.100.2/24\n"},
	"vm:vlan": {"interfaces": "auto eth0\niface eth0 inet static\n  address 192.0.2.1/24\n" +
		"auto eth0.100\niface eth0.100 inet static\n  address 10.100.0.1/24\n  mtu 1400\n" +
		"auto mgmt\niface mgmt inet static\n  vlan-raw-device eth0\n  vlan-id 200\n  address 10.200.0.1/24\n  gateway 10.200.0.254\n"},
	"vm:bond-vlan": {"interfaces": "auto bond0\niface bond0\n  bond-slaves eth1 eth2\n  bond-mode balance-xor\n" +
		"auto bond0.10\niface bond0.10\n  address 10.10.0.2/24\n" +
		"auto bond0.20\niface bond0.20\n  address 2001:db8:20::2/64\n"},
	"vm:vrf": {"interfaces": "auto blue\niface blue\n  vrf-table 1001\n" +
		"auto eth1\niface eth1 inet static\n  vrf blue\n  address 192.0.2.10/24\n  gateway 192.0.2.1\n" +
		"auto eth2\niface eth2 inet static\n  address 198.51.100.10/24\n"},
	"vm:vlan-aware-bridge": {"interfaces": "auto eth1\niface eth1\n  bridge-vids 10 20\n" +
		"auto eth2\niface eth2\n  bridge-access 30\n" +
		"auto eth3\niface eth3\n  bridge-pvid 20\n  bridge-vids 20 40\n" +
		"auto br0\niface br0\n  bridge-vlan-aware yes\n  bridge-ports eth1 eth2 eth3\n  bridge-stp off\n" +
		"  bridge-vids 10 20 30\n  bridge-pvid 10\n  address 203.0.113.1/24\n"},
}

// eniVMExample is the example of ifupdown2's that must be compared in
// the VM (it imports today: a VLAN-aware bridge of 52 ports).
const eniVMExample = "vlan_aware_bridges/interfaces.basic"

// eniVMKnown are the differences a case is known to show, "-" ifupdown2
// only, "+" netagent only, each with why. A case must show exactly these.
var eniVMKnown = map[string]struct {
	diff []string
	why  string
}{
	"vm:vrf": {why: "ifupdown2 moves the kernel's 0: lookup local rules to 32765 on making a VRF; an intent cannot move the kernel's rule, so under netagent they stay at 0 (README: import eni)",
		diff: []string{
			"- rule -4 prio=32765 from=all/<nil> to=<nil> table=local",
			"- rule -6 prio=32765 from=all/<nil> to=<nil> table=local",
			"+ rule -4 prio=0 from=all/<nil> to=<nil> table=local",
			"+ rule -6 prio=0 from=all/<nil> to=<nil> table=local",
		}},
}

// TestInVMENIOracle: for each VM case, and each of ifupdown2's examples
// that imports and has what only the VM's kernel has, `netagent import
// eni` and `apply` in one namespace give the kernel ifupdown2's `ifup -a
// -i FILE` gives in another (the host's python3 and the unpacked ifupdown2
// run in a chroot on the host's root, shared read-only: vm.Config.HostRoot),
// read back by the host oracle's normalizer (eniState) with the rules.
// The examples are read at test time through the share (they are GPL).
func TestInVMENIOracle(t *testing.T) {
	if !vm.InGuest() {
		t.Fatal("this test runs in the VM only: go test -run '^TestVM$' ./test/netns/")
	}
	var table []string
	for _, name := range slices.Sorted(maps.Keys(eniVMCases)) {
		table = append(table, fmt.Sprintf("%-58s %s", name, eniVMCase(t, name, eniWriteCase(t, eniVMCases[name]), true)))
	}
	examples := filepath.Join(vm.GuestHostRoot, eniCache, "usr/share/doc/ifupdown2/examples")
	files, _ := filepath.Glob(examples + "/*")
	sub, _ := filepath.Glob(examples + "/*/*")
	exampleCompared := false
	for _, f := range append(files, sub...) {
		if st, err := os.Stat(f); err != nil || st.IsDir() || strings.HasSuffix(f, ".py") || strings.HasSuffix(f, ".sh") {
			continue
		}
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		name := strings.TrimPrefix(f, examples+"/")
		outcome := eniVMCase(t, name, eniWriteCase(t, map[string]string{"interfaces": string(data)}), false)
		exampleCompared = exampleCompared || name == eniVMExample && strings.HasPrefix(outcome, "agrees")
		table = append(table, fmt.Sprintf("%-58s %s", name, outcome))
	}
	if !exampleCompared {
		t.Errorf("%s was not compared (in %s: scripts/setup.sh unpacks ifupdown2)", eniVMExample, examples)
	}
	t.Logf("ENI oracle outcomes in the VM:\n%s", strings.Join(table, "\n"))
}

// eniVMCase compares one file and returns its outcome. An own case must
// import; an example may be refused, and one with nothing the host's
// kernel lacks is left to TestENIOracle.
func eniVMCase(t *testing.T, name, file string, own bool) string {
	in, refusal := eniVMImport(t, file)
	switch {
	case in == nil && own:
		t.Errorf("%s: netagent import eni refused it: %s", name, refusal)
		return "refused"
	case in == nil:
		return "refused: " + refusal
	case !own && !eniVMOnly(in):
		return "imports; nothing the host's kernel lacks (TestENIOracle compares it)"
	}
	old, ours := eniVMNewEnv(t), eniVMNewEnv(t)
	eniStandIns(old, in)
	eniStandIns(ours, in)
	eniVMIfup(t, old, file)
	takeoverAgent(t, ours, "apply", file+".json")
	want, have := eniVMState(old), eniVMState(ours)
	eniVMCovered(t, name, in, want)
	diff := lineDiff(want, have)
	known := eniVMKnown[name]
	got := strings.Split(diff, "\n")
	if diff == "" {
		got = nil
	}
	if !slices.Equal(got, known.diff) {
		t.Errorf("%s: the kernels differ (-: ifupdown2, +: netagent) other than pinned:\n%s\npinned:\n%s", name, diff, strings.Join(known.diff, "\n"))
		return "differs"
	}
	lines := strings.Count(want, "\n") + 1
	if len(got) > 0 {
		return fmt.Sprintf("agrees on %d lines but for %d pinned (%s)", lines, len(got), known.why)
	}
	return fmt.Sprintf("agrees on %d lines", lines)
}

// eniVMCovered fails unless ifupdown2's view (view) has a link of every
// interface of in, so that an agreement is about them and not about two
// empty namespaces, and the VLANs of a VLAN-aware bridge.
func eniVMCovered(t *testing.T, name string, in *intent.Intent, view string) {
	for _, ifc := range in.Interfaces {
		if !strings.Contains(view, "\nlink "+ifc.Name+" ") && !strings.HasPrefix(view, "link "+ifc.Name+" ") {
			t.Errorf("%s: ifupdown2 made no %s:\n%s", name, ifc.Name, view)
		}
	}
	if eniVLANFiltering(in) && !strings.Contains(view, "\nvlan ") {
		t.Errorf("%s: a VLAN-aware bridge with no bridge VLANs:\n%s", name, view)
	}
}

// eniVMImport runs `netagent import eni FILE` into FILE.json and parses
// it; when the importer refuses the file, it returns its first refusal.
func eniVMImport(t *testing.T, file string) (*intent.Intent, string) {
	out, err := exec.Command(vm.GuestBinary("netagent"), "import", "eni", "--out", file+".json", file).CombinedOutput()
	if err != nil {
		first, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
		return nil, strings.ReplaceAll(first, file, "FILE")
	}
	data, err := os.ReadFile(file + ".json")
	if err != nil {
		t.Fatal(err)
	}
	in, err := intent.Parse(data)
	if err != nil {
		t.Fatalf("%s: the imported intent: %v\n%s", file, err, data)
	}
	return in, ""
}

// eniVMOnly reports whether in has what the host's kernel lacks: a bond,
// an 802.1Q VLAN, a VRF or a VLAN-aware bridge.
func eniVMOnly(in *intent.Intent) bool {
	return eniVLANFiltering(in) || slices.ContainsFunc(in.Interfaces, func(ifc intent.Interface) bool {
		return ifc.Type == intent.LinkBond || ifc.Type == intent.LinkVLAN || ifc.Type == intent.LinkVRF
	})
}

// eniVMState is the host oracle's view (eniState) with the rules of both
// families (oracleRules), whose VRF rules eniState leaves out.
func eniVMState(e oracleNS) string {
	return eniState(e) + "\n" + strings.Join(slices.Concat(oracleRules(e, "-4", false), oracleRules(e, "-6", false)), "\n")
}

// eniVMEnv is a namespace of the VM with a state directory for netagent:
// the VM's oracleNS, as cliEnv is the host's (ip and ipJSON are l3Env's).
type eniVMEnv struct {
	*l3Env
	stateDir string
}

func eniVMNewEnv(t *testing.T) *eniVMEnv {
	e := &eniVMEnv{l3Env: &l3Env{t: t, tgt: testns.New(t)}, stateDir: t.TempDir()}
	// No duplicate address detection, as cliNewEnv.
	e.exec("sh", "-c", "echo 0 >/proc/sys/net/ipv6/conf/all/accept_dad && echo 0 >/proc/sys/net/ipv6/conf/default/accept_dad")
	return e
}

func (e *eniVMEnv) tb() testing.TB { return e.t }

func (e *eniVMEnv) exec(name string, args ...string) string {
	e.t.Helper()
	return testns.Exec(e.t, e.tgt, name, args...)
}

func (e *eniVMEnv) target() *netnsx.Target { return e.tgt }

// agentRun runs the guest's netagent binary with e's state directory on
// e's namespace: `netagent COMMAND --netns NS ARGS` (takeoverNS).
func (e *eniVMEnv) agentRun(command string, args ...string) (stdout, stderr string, code int) {
	e.t.Helper()
	var out, errOut strings.Builder
	cmd := exec.Command(vm.GuestBinary("netagent"), append([]string{"--state-dir", e.stateDir, command, "--netns", e.tgt.Name}, args...)...)
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	if x, ok := err.(*exec.ExitError); ok {
		return out.String(), errOut.String(), x.ExitCode()
	} else if err != nil {
		e.t.Fatalf("netagent %s: %v", command, err)
	}
	return out.String(), errOut.String(), 0
}

// writeFile writes a file into the test's temporary directory.
func (e *eniVMEnv) writeFile(name, content string) string {
	e.t.Helper()
	return takeoverTempFile(e.t, name, content)
}

// eniVMIfup runs ifupdown2's ifup -a -i FILE in e's namespace as
// eniIfup does on the host: the host's python3 in a chroot on the
// host's root (vm.GuestHostRoot), in the mount namespace `ip netns exec`
// makes, with the namespace's /sys, the VM's /dev and /tmp (where FILE
// is), and /run, /var/tmp (ifupdown2's state_dir), /etc/network and
// /etc/iproute2/rt_tables.d (where it names VRF tables) on
// tmpfs: the share is read-only and nothing of the host is touched.
func eniVMIfup(t *testing.T, e *eniVMEnv, file string) {
	script := `set -e
mount -t proc proc $H/proc
mount -o bind /sys $H/sys
mount -o bind /dev $H/dev
mount -o bind /tmp $H/tmp
for d in /run /var/tmp /etc/network /etc/iproute2/rt_tables.d; do mount -t tmpfs none $H$d; done
mkdir -p $H/etc/network/ifupdown2 $H/run/network $H/run/eni-bin
cp -r $H$C/etc/network/ifupdown2/. $H/etc/network/ifupdown2/
ln -s $C/usr/share/ifupdown2/ifupdown2 $H/run/eni-bin/ifup
exec chroot $H /usr/bin/env -u LD_LIBRARY_PATH PATH=/usr/sbin:/usr/bin:/sbin:/bin /bin/sh -c 'cd "$D" && exec /usr/bin/python3 /run/eni-bin/ifup -a -i "$F"'`
	cmd := exec.Command("ip", "netns", "exec", e.tgt.Name, "sh", "-c", script)
	cmd.Env = append(os.Environ(), "H="+vm.GuestHostRoot, "C="+eniCache, "F="+file, "D="+filepath.Dir(file))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("ifup -a -i %s: %v\n%s", file, err, out)
	}
}
