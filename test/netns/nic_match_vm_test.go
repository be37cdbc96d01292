//go:build vmtest

package netns_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sirupsen/logrus"

	"github.com/netagent/netagent/agent/host"
	"github.com/netagent/netagent/agent/render"
	"github.com/netagent/netagent/internal/testns"
	"github.com/netagent/netagent/test/vm"
)

// applyChildEnv, when set ("<namespace> <state dir> <intent file> <want>"),
// makes the test binary apply the intent file in the namespace twice, as
// `netagent apply` does (agent/host), and exit 0 when the first apply
// converges and the second runs nothing (want "converge"), or when the
// first does not converge (want "fail", printing the problems). It runs
// under `ip netns exec` (nsApply), its process in the target namespace,
// or in the VM's own namespace targeting the namespace by name
// (nsApplyFrom), as `netagent --netns` does.
const applyChildEnv = "NETAGENT_VMTEST_APPLY_CHILD"

func init() {
	if arg := os.Getenv(applyChildEnv); arg != "" {
		os.Exit(applyChild(strings.Fields(arg)))
	}
}

func applyChild(args []string) int {
	if err := applyChildRun(args); err != nil {
		fmt.Fprintln(os.Stderr, "apply child:", err)
		return 1
	}
	return 0
}

func applyChildRun(args []string) error {
	if len(args) != 4 {
		return fmt.Errorf("%s=%q: want <namespace> <state dir> <intent file> <want>", applyChildEnv, args)
	}
	doc, err := os.ReadFile(args[2])
	if err != nil {
		return err
	}
	g, err := render.Load(map[string][]byte{filepath.Base(args[2]): doc})
	if err != nil {
		return err
	}
	log := logrus.New()
	log.SetOutput(os.Stderr)
	rt, err := host.Open(args[0], args[1], log)
	if err != nil {
		return err
	}
	defer rt.Close()
	res, err := rt.Apply(context.Background(), g, host.ApplyOptions{})
	switch {
	case err != nil:
		return err
	case args[3] == "fail" && !res.Converged():
		fmt.Printf("problems: %v\n", res.Problems)
		return nil
	case !res.Converged():
		return fmt.Errorf("apply: %v %v", res.Problems, res.Err)
	case args[3] == "fail":
		return fmt.Errorf("apply converged, want it to fail: %s", res.Ops)
	}
	fmt.Printf("first apply: %d operations\n", len(res.Ops))
	if res, err = rt.Apply(context.Background(), g, host.ApplyOptions{}); err != nil || len(res.Ops) != 0 {
		return fmt.Errorf("second apply: %v, ran %s", err, res.Ops)
	}
	return nil
}

// nsApply runs the apply child on doc in ns and returns its output.
func nsApply(t *testing.T, ns, stateDir, doc, want string) string {
	t.Helper()
	return nsApplyFrom(t, true, ns, stateDir, doc, want)
}

// nsApplyFrom runs the apply child on doc, in ns itself (inside) or in
// the VM's own namespace targeting ns, and returns its output.
func nsApplyFrom(t *testing.T, inside bool, ns, stateDir, doc, want string) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "intent.json")
	if err := os.WriteFile(file, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(self)
	if inside {
		cmd = exec.Command("ip", "netns", "exec", ns, self)
	}
	cmd.Env = append(os.Environ(), applyChildEnv+"="+strings.Join([]string{ns, stateDir, file, want}, " "))
	out, err := cmd.CombinedOutput()
	t.Logf("apply %s:\n%s", doc, out)
	if err != nil {
		t.Fatalf("the apply child (%s): %v", want, err)
	}
	return string(out)
}

// bootNIC returns the NIC with the given ID that the harness plugged at boot.
func bootNIC(t *testing.T, id string) vm.NIC {
	t.Helper()
	nics, err := vm.GuestNICs()
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range nics {
		if n.ID == id && !n.Hot {
			return n
		}
	}
	t.Fatalf("the harness gave the VM no NIC %s at boot: %+v", id, nics)
	return vm.NIC{}
}

// hotNIC returns the NIC with the given ID that the harness plugs in when
// asked (vm.HotAdd).
func hotNIC(t *testing.T, id string) vm.NIC {
	t.Helper()
	nics, _ := vm.GuestNICs()
	for _, n := range nics {
		if n.ID == id && n.Hot {
			return n
		}
	}
	t.Fatalf("the harness gives the VM no hot NIC %s: %+v", id, nics)
	return vm.NIC{}
}

// nicInSlot returns the boot NIC in PCI slot slot.
func nicInSlot(t *testing.T, slot int) vm.NIC {
	t.Helper()
	nics, _ := vm.GuestNICs()
	for _, n := range nics {
		if n.Slot == slot && !n.Hot {
			return n
		}
	}
	t.Fatalf("no NIC in slot %d: %+v", slot, nics)
	return vm.NIC{}
}

// wantNamed reads the link name back in ns with ip and ethtool: it is the
// card n (its MAC, driver and PCI address). It logs "vm-match <name> <MAC>
// <PCI address>" for the host, which compares the swapped boot's lines.
func wantNamed(t *testing.T, ns, name string, n vm.NIC) {
	t.Helper()
	var found *vm.IPLink
	for _, l := range vm.IPLinks(t, ns) {
		if l.Ifname == name {
			found = &l
		}
	}
	if found == nil {
		t.Fatalf("ip -n %s -d -j link: no %s (want NIC %s, %s)", ns, name, n.ID, n.MAC)
	}
	info := vm.Ethtool(t, ns, name)
	if !strings.EqualFold(found.Address, n.MAC) || info.Driver != n.Driver() || info.BusInfo != n.PCIAddress() {
		t.Errorf("%s: address %s, ethtool driver %s bus-info %s; want NIC %s: %s %s %s",
			name, found.Address, info.Driver, info.BusInfo, n.ID, n.MAC, n.Driver(), n.PCIAddress())
	}
	t.Logf("vm-match %s %s %s", name, found.Address, info.BusInfo)
}

// wantNamesBack checks that every NIC has the name it had before the first apply.
func wantNamesBack(t *testing.T, ns string, orig map[string]vm.NIC) {
	t.Helper()
	for name, n := range orig {
		if l, err := vm.LinkWithMAC(n.MAC); err == nil && l != "" {
			t.Errorf("NIC %s is in the initial namespace as %s", n.ID, l)
		}
		out := vm.GuestRun(t, "", "ip", "-n", ns, "-br", "link", "show", "dev", name)
		if !strings.Contains(strings.ToLower(out), strings.ToLower(n.MAC)) {
			t.Errorf("leaving the intent: %s is %q, want NIC %s (%s) with its name back", name, out, n.ID, n.MAC)
		}
	}
}

// TestInVMMatchNICs applies, on real e1000 and virtio_net NICs moved into a
// test namespace, intents that find them by permanentMac and driver, then
// by path (the e1000 ones' PCI function, and the virtio one's through its
// virtio device), with the agent in the namespace and then in the VM's own
// namespace targeting it, and rename them; each rename read back with ip and ethtool, a
// second apply runs nothing, leaving the intent gives the kernel names
// back; a match of two NICs and a match of none fail and rename nothing.
// The host runs it again with nic0 and nic1 in each other's slots
// (TestVM): the names by permanentMac follow the cards, those by path the
// slots.
func TestInVMMatchNICs(t *testing.T) {
	if !vm.InGuest() {
		t.Fatal("this test runs in the VM only: go test -run '^TestVM$' ./test/netns/")
	}
	ns := testns.New(t).Name
	nic0, nic1, nic2 := bootNIC(t, "nic0"), bootNIC(t, "nic1"), bootNIC(t, "nic2")
	orig, names := map[string]vm.NIC{}, map[string]string{}
	for _, n := range []vm.NIC{nic0, nic1, nic2} {
		names[n.ID] = vm.MoveNIC(t, n, ns)
		orig[names[n.ID]] = n
	}
	state := t.TempDir()
	nsApply(t, ns, state, `{"version": 1, "interfaces": [
  {"name": "lan0", "type": "physical", "match": {"permanentMac": "`+nic0.MAC+`"}, "addresses": ["192.0.2.1/24"]},
  {"name": "wan0", "type": "physical", "match": {"permanentMac": "`+nic1.MAC+`", "driver": "e1000"}},
  {"name": "virt0", "type": "physical", "match": {"driver": "virtio_net"}}]}`, "converge")
	wantNamed(t, ns, "lan0", nic0)
	wantNamed(t, ns, "wan0", nic1)
	wantNamed(t, ns, "virt0", nic2)
	nsApply(t, ns, state, `{"version": 1}`, "converge")
	wantNamesBack(t, ns, orig)

	for _, inside := range []bool{true, false} {
		nsApplyFrom(t, inside, ns, state, `{"version": 1, "interfaces": [
  {"name": "slot4", "type": "physical", "match": {"path": "pci-0000:00:04.0"}},
  {"name": "slot5", "type": "physical", "match": {"path": "pci-0000:00:05.0", "name": "eth*"}},
  {"name": "slot6", "type": "physical", "match": {"path": "pci-0000:00:06.0"}}]}`, "converge")
		wantNamed(t, ns, "slot4", nicInSlot(t, 4))
		wantNamed(t, ns, "slot5", nicInSlot(t, 5))
		wantNamed(t, ns, "slot6", nicInSlot(t, 6))
		nsApplyFrom(t, inside, ns, state, `{"version": 1}`, "converge")
		wantNamesBack(t, ns, orig)
	}

	out := nsApply(t, ns, state, `{"version": 1, "interfaces": [
  {"name": "any0", "type": "physical", "match": {"driver": "e1000"}},
  {"name": "none0", "type": "physical", "match": {"permanentMac": "52:54:00:ff:ff:ff"}}]}`, "fail")
	for _, want := range []string{"no NIC matches", names["nic0"], names["nic1"]} {
		if !strings.Contains(out, want) {
			t.Errorf("a match of two NICs and one of none: the problems lack %q", want)
		}
	}
	wantNamesBack(t, ns, orig)
}

// TestInVMMatchHotAdded: an interface matching a NIC that is not there
// fails with "no NIC matches" and renames nothing; once qemu's monitor has
// plugged the card in (vm.HotAdd) and it is in the namespace, the next
// apply finds it by permanentMac and renames it.
func TestInVMMatchHotAdded(t *testing.T) {
	if !vm.InGuest() {
		t.Fatal("this test runs in the VM only: go test -run '^TestVM$' ./test/netns/")
	}
	hot := hotNIC(t, "hot0")
	ns := testns.New(t).Name
	state := t.TempDir()
	doc := `{"version": 1, "interfaces": [{"name": "late0", "type": "physical", "match": {"permanentMac": "` + hot.MAC + `"}}]}`
	if out := nsApply(t, ns, state, doc, "fail"); !strings.Contains(out, "no NIC matches permanentMac "+hot.MAC) {
		t.Errorf("before the hot-add: the problems lack the no-match error")
	}
	vm.HotAdd(t, hot.ID)
	vm.MoveNIC(t, hot, ns)
	nsApply(t, ns, state, doc, "converge")
	wantNamed(t, ns, "late0", hot)
}
