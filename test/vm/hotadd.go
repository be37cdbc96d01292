package vm

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A hot-add is a request from the guest to the harness, over the console:
//
//	guest: HotAdd(t, "hot0")  ── "NETAGENT-VM-HOTADD-<nonce> hot0" on ttyS0 ──▶ host: console
//	                                                                              │ QMP netdev_add,
//	guest kernel: ACPI GPE, acpiphp rescans bus 0, e1000 probes  ◀── device_add ──┘
//	guest: a link with the NIC's MAC in /sys/class/net: HotAdd returns its name
//
// The guest finds the nonce in NonceEnv, so test output that happens to
// print the words cannot plug anything.

// NonceEnv carries, inside the VM, the nonce of the harness's console markers.
const NonceEnv = "NETAGENT_VM_NONCE"

// HotAddTimeout bounds how long HotAdd waits for the guest kernel to show
// the new link.
const HotAddTimeout = time.Minute

// hotAddMarker starts the console line that asks the harness to plug a NIC.
func hotAddMarker(nonce string) string { return markerPrefix + "HOTADD-" + nonce + " " }

// HotAdd, inside the VM, asks the harness to plug in the NIC with the given
// ID (one of Config.NICs with Hot set) through qemu's monitor, waits until
// the guest kernel has a link with the NIC's MAC, and returns the link's
// name when first seen. It fails t if id names no hot NIC, or no link
// appears within HotAddTimeout (the host's log says why qemu refused).
func HotAdd(t testing.TB, id string) string {
	t.Helper()
	nic, err := hotNIC(id)
	if err != nil {
		t.Fatalf("vm: hot-adding NIC %s: %v", id, err)
	}
	fmt.Printf("\n%s%s\n", hotAddMarker(os.Getenv(NonceEnv)), id)
	start := time.Now()
	for time.Since(start) < HotAddTimeout {
		if name, err := LinkWithMAC(nic.MAC); err == nil && name != "" {
			t.Logf("vm: NIC %s (%s, %s) appeared as %s after %v", id, nic.Model, nic.PCIAddress(), name,
				time.Since(start).Round(time.Millisecond))
			return name
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("vm: hot-added NIC %s (MAC %s): no link with its MAC after %v", id, nic.MAC, HotAddTimeout)
	return ""
}

// hotNIC finds the hot-pluggable NIC with the given ID among GuestNICs.
func hotNIC(id string) (NIC, error) {
	if !InGuest() {
		return NIC{}, fmt.Errorf("called outside the VM")
	}
	nics, err := GuestNICs()
	if err != nil {
		return NIC{}, err
	}
	for _, n := range nics {
		if n.ID == id && n.Hot {
			return n, nil
		}
	}
	return NIC{}, fmt.Errorf("no NIC with Hot set has this id (Config.NICs: %s)", encodeNICs(nics))
}

// LinkWithMAC returns the name of the link in sysfs's network namespace
// (the VM's initial one) whose current address is mac and that is a bus
// device (the card, not a VLAN or macvlan on it), or "" if none is.
func LinkWithMAC(mac string) (string, error) {
	want, err := net.ParseMAC(mac)
	if err != nil {
		return "", fmt.Errorf("MAC %q: %w", mac, err)
	}
	paths, err := filepath.Glob("/sys/class/net/*/address")
	if err != nil {
		return "", err
	}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			continue // the link went away between the glob and the read
		}
		dir := filepath.Dir(p)
		if _, err := os.Stat(filepath.Join(dir, "device")); err != nil {
			continue // no bus device: a VLAN, macvlan or bond has the NIC's MAC too
		}
		if got, err := net.ParseMAC(strings.TrimSpace(string(b))); err == nil && got.String() == want.String() {
			return filepath.Base(dir), nil
		}
	}
	return "", nil
}
