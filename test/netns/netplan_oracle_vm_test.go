//go:build vmtest

package netns_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/netagent/netagent/agent/importer"
	"github.com/netagent/netagent/agent/importer/netplan"
	"github.com/netagent/netagent/agent/intent"
	"github.com/netagent/netagent/internal/dnsmasqtest"
	"github.com/netagent/netagent/test/vm"
)

// netplanVMKnown are the differences an example compared in the VM is
// known to show, "-" networkd only, "+" netagent only, each with why. An
// example must show exactly these (none now).
var netplanVMKnown = map[string]struct {
	diff []string
	why  string
}{}

// netplanVMNIC is the VM's card (vmNICs) an example's match by permanent
// MAC is pointed at: the example is read with its MAC replaced by the
// card's, in a copy in a temporary directory.
const netplanVMNIC = "nic2"

// TestInVMNetplanOracle compares, in the VM, the netplan examples
// TestNetplanOracle cannot compare on the host because its kernel lacks
// their kinds (bonds, 802.1Q VLANs, VRFs, tunnels) or because they match
// a NIC by its permanent MAC (a real card of the VM, netplanVMNIC, not a
// veth): `netplan generate` renders the example and systemd-networkd
// runs on it in one namespace, `netagent apply` runs the import in
// another, both the host's programs in a chroot on the host's root
// (vm.Config.HostRoot; a DHCP server too, dnsmasqtest in that chroot),
// and the two kernels must agree as the host oracle's normalizer reads
// them (eniState with the rules, leased addresses as "leased"). The
// examples are read at test time through the share (they are GPL). The
// outcome of each example is logged as a table.
func TestInVMNetplanOracle(t *testing.T) {
	if !vm.InGuest() {
		t.Fatal("this test runs in the VM only: go test -run '^TestVM$' ./test/netns/")
	}
	files, err := filepath.Glob(filepath.Join(vm.GuestHostRoot, netplanExamples))
	if err != nil || len(files) == 0 {
		t.Fatalf("no netplan examples through the host's root (scripts/setup.sh installs netplan.io): %v", err)
	}
	var table []string
	compared := 0
	for _, f := range files {
		outcome := netplanVMOutcome(t, f)
		if strings.HasPrefix(outcome, "agrees") {
			compared++
		}
		table = append(table, fmt.Sprintf("%-42s %s", filepath.Base(f), outcome))
	}
	if compared == 0 {
		t.Error("no example was compared in the VM")
	}
	t.Logf("netplan examples in the VM:\n%s", strings.Join(table, "\n"))
}

// netplanVMOutcome is one example's line of the table.
func netplanVMOutcome(t *testing.T, file string) string {
	name := filepath.Base(file)
	in, refused := netplanImportOrRefusal(t, file)
	if in == nil {
		return refused
	}
	why, inVM := netplanVMWhy(in)
	if !inVM {
		return why
	}
	var outcome string
	t.Run(name, func(t *testing.T) { outcome = netplanVMCompare(t, file, in) + " (" + why + ")" })
	return outcome
}

// netplanVMWhy says why an example is compared in the VM (true), or why
// it is not: the host compares it, or the VM cannot either.
func netplanVMWhy(in *intent.Intent) (string, bool) {
	why := netplanNotOnHost(in)
	matches := 0
	for _, ifc := range in.Interfaces {
		switch {
		case ifc.IPv6 != nil && (ifc.IPv6.AcceptRA || ifc.IPv6.DHCP6):
			return "not compared: RA or DHCPv6, no IPv6 router in the VM either", false
		case ifc.Ethtool != nil:
			return "not compared: networkd sets offloads by udev, absent in the VM too (TestNetplanOracle checks the import)", false
		case ifc.Match != nil:
			if m := *ifc.Match; m.PermanentMAC == "" || m != (intent.Match{PermanentMAC: m.PermanentMAC}) {
				return "not compared: a match other than by permanent MAC", false
			}
			matches++
		}
	}
	switch {
	case why == "":
		return "compared on the host (TestNetplanOracle)", false
	case matches > 1:
		return "not compared: the VM lends one card (" + netplanVMNIC + ") to a match", false
	case matches == 1:
		return "a match by permanent MAC, run on " + netplanVMNIC, true
	}
	return why, true
}

// netplanVMCompare applies file by networkd and in by netagent and
// returns the outcome: how many lines agree, or how they differ (a test
// error unless netplanVMKnown pins it).
func netplanVMCompare(t *testing.T, file string, in *intent.Intent) string {
	name := filepath.Base(file)
	var nic *vm.NIC
	if slices.ContainsFunc(in.Interfaces, func(ifc intent.Interface) bool { return ifc.Match != nil }) {
		n := bootNIC(t, netplanVMNIC)
		nic = &n
		file, in = netplanVMOnNIC(t, file, in, n)
	}
	nd, na := eniVMNewEnv(t), eniVMNewEnv(t)
	netplanVMStandIns(t, nd, in)
	netplanVMStandIns(t, na, in)
	var restore func()
	if nic != nil {
		restore = netplanVMLendNIC(t, *nic, nd, netplanMatched(in))
	}
	netplanVMNetworkd(t, nd, file)
	want := netplanVMState(nd, in)
	if nic != nil {
		restore()
		vm.MoveNIC(t, *nic, na.tgt.Name)
		// Before vm.MoveNIC's cleanup, which takes the first link with
		// the card's MAC back: netagent's VLANs on it have that MAC too.
		t.Cleanup(func() { netplanVMFreeNIC(na, *nic) })
	}
	if out, err := netplanVMApply(na, in); err != nil {
		t.Errorf("%s: netagent apply: %v\n%s", name, err, out)
		return "netagent's apply does not converge: " + notConverged(out)
	}
	have := netplanVMState(na, in)
	t.Logf("%s: networkd's kernel, as read:\n%s", name, want)
	eniVMCovered(t, name, in, want)
	diff := lineDiff(want, have)
	var got []string
	if diff != "" {
		got = strings.Split(diff, "\n")
	}
	known := netplanVMKnown[name]
	if !slices.Equal(got, known.diff) {
		t.Errorf("%s: the kernels differ (-: networkd, +: netagent) other than pinned:\n%s\npinned:\n%s\nnetworkd's:\n%s", name, diff, strings.Join(known.diff, "\n"), want)
		return "DIFFERS"
	}
	lines := strings.Count(want, "\n") + 1
	if len(got) > 0 {
		return fmt.Sprintf("agrees on %d lines but for %d pinned: %s", lines, len(got), known.why)
	}
	return fmt.Sprintf("agrees on %d lines", lines)
}

// netplanMatched is the interface of in with a match.
func netplanMatched(in *intent.Intent) string {
	for _, ifc := range in.Interfaces {
		if ifc.Match != nil {
			return ifc.Name
		}
	}
	return ""
}

// netplanVMOnNIC writes a copy of file with the permanent MAC in's match
// names replaced by nic's, and returns it with its import.
func netplanVMOnNIC(t *testing.T, file string, in *intent.Intent, nic vm.NIC) (string, *intent.Intent) {
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	mac := in.Interfaces[slices.IndexFunc(in.Interfaces, func(ifc intent.Interface) bool { return ifc.Match != nil })].Match.PermanentMAC
	text := regexp.MustCompile("(?i)"+regexp.QuoteMeta(mac)).ReplaceAllString(string(data), nic.MAC)
	copied := filepath.Join(t.TempDir(), filepath.Base(file))
	if err := os.WriteFile(copied, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	res, err := netplan.Import([]string{copied}, importer.Options{})
	if err != nil {
		t.Fatalf("%s on %s's MAC: %v", file, nic.ID, err)
	}
	return copied, res.Intent
}

// netplanVMLendNIC moves nic into e's namespace under the name name, as
// udev would have named it by the .link file netplan writes for set-name
// (networkd matches it by permanent MAC and that name, and renames
// nothing). The function it returns deletes the links on it there (its
// VLANs would stay behind in the namespace, on the card, whose VLAN ids
// would then be taken elsewhere) and brings the card back under its own
// name, down; if the test fails first, a cleanup does.
func netplanVMLendNIC(t *testing.T, nic vm.NIC, e *eniVMEnv, name string) func() {
	ns := e.tgt.Name
	dev, err := vm.LinkWithMAC(nic.MAC)
	if err != nil || dev == "" {
		t.Fatalf("NIC %s: no link with MAC %s (%v)", nic.ID, nic.MAC, err)
	}
	vm.GuestRun(t, "", "ip", "link", "set", "dev", dev, "netns", ns)
	vm.GuestRun(t, ns, "ip", "link", "set", "dev", dev, "name", name)
	lent := true
	restore := func() {
		if lent {
			lent = false
			netplanVMFreeNIC(e, nic)
			vm.GuestRun(t, ns, "ip", "link", "set", "dev", name, "down")
			vm.GuestRun(t, ns, "ip", "link", "set", "dev", name, "name", dev)
			vm.GuestRun(t, ns, "ip", "link", "set", "dev", dev, "netns", "1")
		}
	}
	t.Cleanup(func() { netplanVMUnmark(t, nic, dev) }) // after restore, or vm.MoveNIC's
	t.Cleanup(restore)
	return restore
}

// netplanVMFreeNIC deletes the links on top of nic (the VLANs networkd
// or netagent made on it) in e's namespace.
func netplanVMFreeNIC(e *eniVMEnv, nic vm.NIC) {
	links := e.ipJSON("-d", "link", "show")
	card := ""
	for _, l := range links {
		if _, virtual := l["linkinfo"]; !virtual && strings.EqualFold(fmt.Sprint(l["address"]), nic.MAC) {
			card = fmt.Sprint(l["ifname"])
		}
	}
	for _, l := range links {
		if card != "" && l["link"] == card {
			e.ip("link", "del", "dev", fmt.Sprint(l["ifname"]))
		}
	}
}

// netplanVMUnmark leaves nic as other tests find it once the test has
// ended (vm.MoveNIC's cleanup has brought it back): named dev, as before
// the test lent it, down, without the alias netagent marks it with.
func netplanVMUnmark(t *testing.T, nic vm.NIC, dev string) {
	now, err := vm.LinkWithMAC(nic.MAC)
	if err != nil || now == "" {
		t.Errorf("NIC %s: not back in the VM's namespace (%v)", nic.ID, err)
		return
	}
	vm.GuestRun(t, "", "ip", "link", "set", "dev", now, "down")
	if now != dev {
		vm.GuestRun(t, "", "ip", "link", "set", "dev", now, "name", dev)
	}
	vm.GuestRun(t, "", "ip", "link", "set", "dev", dev, "alias", "")
}

// netplanVMStandIns gives e each physical NIC of in that matches
// nothing: a veth, its peer up, or, when the example asks for DHCPv4, a
// veth with dnsmasq at its far end (the host's, in the chroot), as
// netplanCompare does on the host.
func netplanVMStandIns(t *testing.T, e *eniVMEnv, in *intent.Intent) {
	dhcp := netplanDHCP(in)
	for i, ifc := range in.Interfaces {
		if ifc.Type != intent.LinkPhysical || ifc.Name == "lo" || ifc.Match != nil {
			continue
		}
		if dhcp {
			dnsmasqtest.Start(t, e.tgt, ifc.Name, dnsmasqtest.Options{Command: []string{"sh", "-c", netplanVMChroot + `exec chroot ` + vm.GuestHostRoot + ` /usr/sbin/dnsmasq "$@"`, "sh"}})
			continue
		}
		peer := fmt.Sprintf("standin%d", i)
		e.ip("link", "add", ifc.Name, "type", "veth", "peer", "name", peer)
		e.ip("link", "set", peer, "up")
	}
}

// netplanVMChroot mounts what a host program in the chroot on the host's
// root needs, in the mount namespace `ip netns exec` makes: the VM's
// /proc, the namespace's /sys, /dev and /tmp (where the test's files
// are); the share itself is read-only.
const netplanVMChroot = `set -e
H=` + vm.GuestHostRoot + `
mount -t proc proc $H/proc
mount -o bind /sys $H/sys
mount -o bind /dev $H/dev
mount -o bind /tmp $H/tmp
`

// netplanVMNetworkd renders file with the host's `netplan generate
// --root-dir` and runs the host's systemd-networkd on the result in e's
// namespace (networkdScript, allowed two minutes under TCG), both in the
// chroot.
func netplanVMNetworkd(t *testing.T, e *eniVMEnv, file string) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "etc/netplan"), 0o755); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "etc/netplan", filepath.Base(file)), data, 0o600); err != nil {
		t.Fatal(err)
	}
	script := netplanVMChroot + `chroot $H /usr/bin/env -u LD_LIBRARY_PATH PATH=/usr/sbin:/usr/bin:/sbin:/bin netplan generate --root-dir "$R"
exec chroot $H /usr/bin/env -u LD_LIBRARY_PATH PATH=/usr/sbin:/usr/bin:/sbin:/bin /bin/sh -c "$S" sh "$R/run/systemd/network" 480`
	cmd := exec.Command("ip", "netns", "exec", e.tgt.Name, "sh", "-c", script)
	cmd.Env = append(os.Environ(), "R="+root, "S="+networkdScript)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("netplan generate and systemd-networkd on %s: %v\n%s", file, err, out)
	}
}

// netplanVMApply writes in and has the guest's netagent apply it in e's
// namespace, waiting for leases; it returns apply's report.
func netplanVMApply(e *eniVMEnv, in *intent.Intent) (string, error) {
	data, err := importer.Encode(in)
	if err != nil {
		e.t.Fatal(err)
	}
	path := filepath.Join(e.t.TempDir(), "intent.json")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		e.t.Fatal(err)
	}
	out, err := exec.Command(vm.GuestBinary("netagent"), "--state-dir", e.stateDir, "apply", "--netns", e.tgt.Name, "--wait", "90s", path).CombinedOutput()
	return string(out), err
}

// netplanVMState is the ENI oracle's view in the VM (eniState: links with
// their kinds' settings, bridge VLANs, addresses, routes with onlink)
// with the rules, the kernel's priorities as such (autoPriorities), and
// the DHCP server's addresses as "leased" (each client gets its own).
func netplanVMState(e *eniVMEnv, in *intent.Intent) string {
	auto := autoPriorities(in)
	lines := strings.Split(eniState(e), "\n")
	lines = append(lines, slices.Concat(oracleRules(e, "-4", auto), oracleRules(e, "-6", auto))...)
	for i, l := range lines {
		f := strings.Fields(l)
		if len(f) == 3 && f[0] == "addr" {
			if a, prefix, ok := strings.Cut(f[2], "/"); ok {
				lines[i] = fmt.Sprintf("addr %s %v/%s", f[1], leased(a), prefix)
			}
		}
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}
