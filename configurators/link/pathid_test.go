package link

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// sysfsFixture builds a sysfs tree under a temporary root: each device
// is a path under devices/ ("pci0000:00/0000:00:03.0") with its
// subsystem ("" for none); each NIC a class/net link to a device's
// net/<name> dir.
type sysfsFixture struct {
	t    *testing.T
	root string
}

func newSysfsFixture(t *testing.T) *sysfsFixture {
	f := &sysfsFixture{t: t, root: t.TempDir()}
	f.mkdir("devices")
	f.mkdir("class/net")
	return f
}

func (f *sysfsFixture) mkdir(p string) string {
	dir := filepath.Join(f.root, p)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		f.t.Fatal(err)
	}
	return dir
}

// device makes devices/<p>, of subsystem subsys ("": none).
func (f *sysfsFixture) device(p, subsys string) {
	dir := f.mkdir("devices/" + p)
	if subsys == "" {
		return
	}
	bus := f.mkdir("bus/" + subsys)
	if err := os.Symlink(bus, filepath.Join(dir, "subsystem")); err != nil {
		f.t.Fatal(err)
	}
}

// nic makes the net device name under the device at p, and its
// class/net link (relative, as sysfs has it).
func (f *sysfsFixture) nic(p, name string) {
	f.device(p+"/net/"+name, "net")
	rel, _ := filepath.Rel(filepath.Join(f.root, "class/net"), filepath.Join(f.root, "devices", p, "net", name))
	if err := os.Symlink(rel, filepath.Join(f.root, "class/net", name)); err != nil {
		f.t.Fatal(err)
	}
}

// sysfsPath derives udev's ID_PATH for PCI (behind bridges: the NIC's
// own function), virtio-net-pci (the PCI function), platform and ACPI
// devices, and refuses virtual devices, USB NICs, a missing NIC and a
// subsystem link with an odd name.
func TestSysfsPath(t *testing.T) {
	f := newSysfsFixture(t)
	f.device("pci0000:00", "")
	f.device("pci0000:00/0000:00:1c.0", "pci")
	f.device("pci0000:00/0000:00:1c.0/0000:01:00.0", "pci")
	f.nic("pci0000:00/0000:00:1c.0/0000:01:00.0", "enp1s0")
	f.device("pci0000:00/0000:00:1f.6", "pci")
	f.nic("pci0000:00/0000:00:1f.6", "eno1")
	f.device("pci0000:00/0000:00:03.0", "pci")
	f.device("pci0000:00/0000:00:03.0/virtio0", "virtio")
	f.nic("pci0000:00/0000:00:03.0/virtio0", "ens3")
	f.device("platform", "")
	f.device("platform/1c30000.ethernet", "platform")
	f.nic("platform/1c30000.ethernet", "end0")
	f.device("LNXSYSTM:00/ACPI0001:00", "acpi")
	f.nic("LNXSYSTM:00/ACPI0001:00", "eth9")
	f.device("pci0000:00/0000:00:14.0", "pci")
	f.device("pci0000:00/0000:00:14.0/usb1", "usb")
	f.device("pci0000:00/0000:00:14.0/usb1/1-2", "usb")
	f.nic("pci0000:00/0000:00:14.0/usb1/1-2", "enx0")
	f.device("virtual", "")
	f.nic("virtual", "veth0")
	f.device("pci0000:00/0000:00:05.0", "")
	if err := os.Symlink("../bus/odd name", filepath.Join(f.root, "devices/pci0000:00/0000:00:05.0/subsystem")); err != nil {
		t.Fatal(err)
	}
	f.nic("pci0000:00/0000:00:05.0", "odd0")
	for name, want := range map[string]string{
		"enp1s0": "pci-0000:01:00.0", "eno1": "pci-0000:00:1f.6", "ens3": "pci-0000:00:03.0",
		"end0": "platform-1c30000.ethernet", "eth9": "acpi-ACPI0001:00",
	} {
		if got, err := sysfsPath(f.root, name); err != nil || got != want {
			t.Errorf("sysfsPath(%s) = %q, %v; want %q", name, got, err, want)
		}
	}
	for name, why := range map[string]string{"enx0": "usb", "veth0": "not on a PCI", "missing0": "no such file", "odd0": "odd name"} {
		got, err := sysfsPath(f.root, name)
		if !errors.Is(err, ErrNoPath) || !strings.Contains(err.Error(), why) {
			t.Errorf("sysfsPath(%s) = %q, %v; want ErrNoPath (%s)", name, got, err, why)
		}
	}
}

// busDevice links bus/<bus>/devices/<base of p> to devices/<p>, as sysfs
// lists a bus's devices.
func (f *sysfsFixture) busDevice(bus, p string) {
	dir := f.mkdir("bus/" + bus + "/devices")
	if err := os.Symlink(filepath.Join(f.root, "devices", p), filepath.Join(dir, filepath.Base(p))); err != nil {
		f.t.Fatal(err)
	}
}

// parentPath, from the parent device rtnetlink names (bus and name),
// gives what sysfsPath gives from the link's class/net entry, for a NIC
// behind PCI bridges, a virtio-net-pci one and a USB one (refused alike);
// a parent the bus does not list, none, and names that would leave the
// bus's dir are ErrNoPath.
func TestParentPath(t *testing.T) {
	f := newSysfsFixture(t)
	f.device("pci0000:00", "")
	f.device("pci0000:00/0000:00:1c.0", "pci")
	f.device("pci0000:00/0000:00:1c.0/0000:01:00.0", "pci")
	f.nic("pci0000:00/0000:00:1c.0/0000:01:00.0", "enp1s0")
	f.busDevice("pci", "pci0000:00/0000:00:1c.0/0000:01:00.0")
	f.device("pci0000:00/0000:00:03.0", "pci")
	f.device("pci0000:00/0000:00:03.0/virtio0", "virtio")
	f.nic("pci0000:00/0000:00:03.0/virtio0", "ens3")
	f.busDevice("virtio", "pci0000:00/0000:00:03.0/virtio0")
	f.device("pci0000:00/0000:00:14.0", "pci")
	f.device("pci0000:00/0000:00:14.0/usb1", "usb")
	f.device("pci0000:00/0000:00:14.0/usb1/1-2", "usb")
	f.nic("pci0000:00/0000:00:14.0/usb1/1-2", "enx0")
	f.busDevice("usb", "pci0000:00/0000:00:14.0/usb1/1-2")
	for name, parent := range map[string][2]string{"enp1s0": {"pci", "0000:01:00.0"}, "ens3": {"virtio", "virtio0"}, "enx0": {"usb", "1-2"}} {
		want, wantErr := sysfsPath(f.root, name)
		got, err := parentPath(f.root, parent[0], parent[1], name)
		if got != want || (err == nil) != (wantErr == nil) {
			t.Errorf("parentPath(%s %s) = %q, %v; sysfsPath(%s) = %q, %v", parent[0], parent[1], got, err, name, want, wantErr)
		}
	}
	if p, _ := parentPath(f.root, "pci", "0000:01:00.0", "enp1s0"); p != "pci-0000:01:00.0" {
		t.Errorf("parentPath of enp1s0 = %q", p)
	}
	for _, parent := range [][2]string{{"pci", "0000:09:00.0"}, {"", ""}, {"pci", ".."}, {"..", "devices"}, {"pci", "a/b"}, {"mdio bus", "x"}} {
		if p, err := parentPath(f.root, parent[0], parent[1], "eth0"); !errors.Is(err, ErrNoPath) {
			t.Errorf("parentPath(%q %q) = %q, %v; want ErrNoPath", parent[0], parent[1], p, err)
		}
	}
}

// pciAddress takes the kernel's form of a PCI function's address, and
// nothing else a driver may write as bus-info.
func TestPCIAddress(t *testing.T) {
	for s, want := range map[string]bool{
		"0000:00:04.0": true, "0001:3b:1f.7": true, "10000:00:00.0": true,
		"virtio0": false, "usb-0000:00:14.0-2": false, "0000:00:20.0": false, "0000:00:04.8": false,
		"0000:00:04.0/..": false, "0000:0G:04.0": false, "": false, "0000:00:04.0\n": false,
	} {
		if got := pciAddress().MatchString(s); got != want {
			t.Errorf("pciAddress(%q) = %t, want %t", s, got, want)
		}
	}
}
