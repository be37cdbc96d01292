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
