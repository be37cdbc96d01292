//go:build vmtest

package netns_test

import (
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/netagent/netagent/internal/testns"
	"github.com/netagent/netagent/items"
	"github.com/netagent/netagent/test/vm"
)

// ethtoolModes are the link modes `ethtool dev` lists under heading
// ("Supported" or "Advertised"), sorted; none for "Not reported".
func ethtoolModes(t *testing.T, ns, dev, heading string) []string {
	t.Helper()
	out := vm.GuestRun(t, ns, "ethtool", dev)
	var modes []string
	in := false
	for _, line := range strings.Split(out, "\n") {
		field := strings.TrimSpace(line)
		if rest, ok := strings.CutPrefix(field, heading+" link modes:"); ok {
			in, field = true, rest
		} else if strings.Contains(field, ":") {
			in = false
		}
		if in {
			modes = append(modes, strings.Fields(field)...)
		}
	}
	modes = slices.DeleteFunc(modes, func(m string) bool { return m == "Not" || m == "reported" })
	slices.Sort(modes)
	return modes
}

// modeMask is the ethtool CLI's hexadecimal mask of link modes (their
// bits in the kernel's order).
func modeMask(modes []string) string {
	var mask uint64
	for _, m := range modes {
		mask |= 1 << slices.Index(items.EthtoolLinkModes, m)
	}
	return fmt.Sprintf("0x%x", mask)
}

// ethtoolAdvertiseCLI runs `ethtool -s dev advertise mask` in ns and
// returns its error and output: what the ethtool program itself gets
// from the driver.
func ethtoolAdvertiseCLI(ns, dev, mask string) (string, error) {
	out, err := exec.Command("ip", "netns", "exec", ns, "ethtool", "-s", dev, "advertise", mask).CombinedOutput()
	return string(out), err
}

// TestInVMEthtoolAdvertise sets the advertised link modes of qemu's
// e1000 (found by permanentMac, renamed adv0) and reads them back with
// the ethtool program: after the ethtool program's own write of a mask
// (and its undo) shows the e1000 takes one, netagent advertises two of
// the five modes the card supports, a second apply writes nothing, a
// mode the card lacks is refused (the two stay), and dropping the section
// gives back the five found. On virtio-net, which reports no link modes
// (the ethtool program's write of a mask exits 0 and leaves none
// advertised), netagent refuses the modes before writing anything.
func TestInVMEthtoolAdvertise(t *testing.T) {
	if !vm.InGuest() {
		t.Fatal("this test runs in the VM only: go test -run '^TestVM$' ./test/netns/")
	}
	t.Run("e1000", testAdvertiseE1000)
	t.Run("virtio", testAdvertiseVirtio)
}

func testAdvertiseE1000(t *testing.T) {
	nic := bootNIC(t, "nic0")
	ns := testns.New(t).Name
	dev := vm.MoveNIC(t, nic, ns)
	vm.GuestRun(t, ns, "ip", "link", "set", "dev", dev, "up")
	before, supported := ethtoolModes(t, ns, dev, "Advertised"), ethtoolModes(t, ns, dev, "Supported")
	t.Logf("e1000 %s: supported %v, advertised %v", dev, supported, before)
	if len(supported) == 0 || !slices.Equal(before, supported) {
		t.Fatalf("the e1000 does not advertise what it supports: %v of %v", before, supported)
	}
	out, err := ethtoolAdvertiseCLI(ns, dev, modeMask([]string{"100baseT/Full"}))
	t.Logf("ethtool -s %s advertise 0x8: %v %s; advertised now %v", dev, err, out, ethtoolModes(t, ns, dev, "Advertised"))
	if _, err := ethtoolAdvertiseCLI(ns, dev, modeMask(before)); err != nil || !slices.Equal(ethtoolModes(t, ns, dev, "Advertised"), before) {
		t.Fatalf("the ethtool program's undo: %v; advertised %v, want %v", err, ethtoolModes(t, ns, dev, "Advertised"), before)
	}
	state := t.TempDir()
	iface := `{"name": "adv0", "type": "physical", "match": {"permanentMac": "` + nic.MAC + `"}`
	two := []string{"1000baseT/Full", "100baseT/Full"}
	nsApply(t, ns, state, `{"version": 1, "interfaces": [`+iface+`, "ethtool": {"link": {"advertise": ["100baseT/Full", "1000baseT/Full"]}}}]}`, "converge")
	if got := ethtoolModes(t, ns, "adv0", "Advertised"); !slices.Equal(got, two) {
		t.Errorf("ethtool adv0 advertises %v, want %v", got, two)
	}
	out = nsApply(t, ns, state, `{"version": 1, "interfaces": [`+iface+`, "ethtool": {"link": {"advertise": ["10000baseT/Full"]}}}]}`, "fail")
	if !strings.Contains(out, "the NIC does not support 10000baseT/Full (it supports "+strings.Join(supported, ", ")+")") {
		t.Errorf("the refusal does not name the mode and the supported ones:\n%s", out)
	}
	if got := ethtoolModes(t, ns, "adv0", "Advertised"); !slices.Equal(got, two) {
		t.Errorf("after the refusal ethtool adv0 advertises %v, want %v (nothing written)", got, two)
	}
	nsApply(t, ns, state, `{"version": 1, "interfaces": [`+iface+`}]}`, "converge")
	if got := ethtoolModes(t, ns, "adv0", "Advertised"); !slices.Equal(got, before) {
		t.Errorf("after the section left the intent ethtool adv0 advertises %v, want the %v found", got, before)
	}
	nsApply(t, ns, state, `{"version": 1}`, "converge")
}

func testAdvertiseVirtio(t *testing.T) {
	nic := bootNIC(t, "nic2")
	ns := testns.New(t).Name
	dev := vm.MoveNIC(t, nic, ns)
	vm.GuestRun(t, ns, "ip", "link", "set", "dev", dev, "up")
	supported := ethtoolModes(t, ns, dev, "Supported")
	out, err := ethtoolAdvertiseCLI(ns, dev, modeMask([]string{"1000baseT/Full"}))
	t.Logf("virtio %s: supported %v; ethtool -s advertise 0x20: %v %s; advertised now %v", dev, supported, err, out, ethtoolModes(t, ns, dev, "Advertised"))
	if len(supported) != 0 {
		t.Fatalf("virtio-net reports supported modes %v", supported)
	}
	iface := `{"name": "adv1", "type": "physical", "match": {"permanentMac": "` + nic.MAC + `"}`
	state := t.TempDir()
	out = nsApply(t, ns, state, `{"version": 1, "interfaces": [`+iface+`, "ethtool": {"link": {"autoneg": true, "advertise": ["1000baseT/Full"]}}}]}`, "fail")
	if !strings.Contains(out, "the NIC does not support 1000baseT/Full (it supports none)") {
		t.Errorf("the refusal does not say the NIC supports no mode:\n%s", out)
	}
	wantEthtool(t, ns, "adv1", nil, `Auto-negotiation: off`)
	nsApply(t, ns, state, `{"version": 1}`, "converge")
}
