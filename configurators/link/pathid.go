package link

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// ErrNoPath: a NIC's bus path (udev's ID_PATH) cannot be derived from
// sysfs: it sits on a bus this package does not name the way udev does,
// or sysfs does not show it (another network namespace's sysfs).
var ErrNoPath = errors.New("no bus path derivable")

// ErrNoPermAddr is a link whose ethtool permaddr is none or all zeros.
var ErrNoPermAddr = errors.New("no permanent address")

// maxDeviceDepth bounds the walk up sysfs's device tree.
const maxDeviceDepth = 32

// sysfsPath derives the ID_PATH of the network interface name from the
// sysfs mounted at root ("/sys"), which shows the links of the namespace
// that mounted it: the walk (walkPath) from the link's device dir.
func sysfsPath(root, name string) (string, error) {
	dev, err := filepath.EvalSymlinks(filepath.Join(root, "class", "net", name))
	if err != nil {
		return "", fmt.Errorf("%s: %w: %w", name, ErrNoPath, err)
	}
	return walkPath(root, dev, name)
}

// parentPath derives the ID_PATH of a link from its parent device, as
// rtnetlink names it in any namespace (IFLA_PARENT_DEV_BUS_NAME and
// IFLA_PARENT_DEV_NAME: "pci" "0000:00:04.0", "virtio" "virtio0"): the
// devices of a bus are not per namespace, and sysfs at root lists them
// under bus/<bus>/devices/<dev>, a link to the device dir whose child the
// link's own dir is. The walk from there is sysfsPath's after its first
// step (the link's own dir, of the net subsystem, adds nothing). Both
// names are checked (sysName, and neither "." nor "..").
func parentPath(root, bus, dev, name string) (string, error) {
	if bus == "" || dev == "" {
		return "", fmt.Errorf("%s: %w: the kernel names no parent device", name, ErrNoPath)
	}
	if !sysName(bus) || !sysName(dev) || strings.Trim(bus, ".") == "" || strings.Trim(dev, ".") == "" {
		return "", fmt.Errorf("%s: %w: parent device %q on bus %q", name, ErrNoPath, dev, bus)
	}
	dir, err := filepath.EvalSymlinks(filepath.Join(root, "bus", bus, "devices", dev))
	if err != nil {
		return "", fmt.Errorf("%s: %w: %w", name, ErrNoPath, err)
	}
	return walkPath(root, dir, name)
}

// walkPath derives the ID_PATH from the device dir dev upwards, as udev's
// path_id builtin does for PCI, virtio and platform devices: a PCI device
// gives "pci-<its address>" (the bridges above it are skipped), a platform
// device "platform-<its name>", an ACPI one "acpi-<its name>"; virtio
// gives nothing of its own (a virtio-net-pci NIC's path is its PCI
// function's); devices of no subsystem, or of one udev skips, add nothing.
// A bus udev names otherwise (usb, scsi, xen, ...) is ErrNoPath, as is a
// path without a PCI, platform or ACPI device (udev gives none either):
// refused rather than guessed. Names read from sysfs are checked (sysName)
// and the walk is bounded.
func walkPath(root, dev, name string) (string, error) {
	devices, err := filepath.EvalSymlinks(filepath.Join(root, "devices"))
	if err != nil {
		return "", fmt.Errorf("%s: %w: %w", name, ErrNoPath, err)
	}
	var parts []string
	for depth := 0; strings.HasPrefix(dev, devices+"/") && depth < maxDeviceDepth; depth++ {
		part, next, err := pathStep(dev)
		if err != nil {
			return "", fmt.Errorf("%s: %w", name, err)
		}
		if part != "" {
			parts = append([]string{part}, parts...)
		}
		dev = filepath.Dir(next)
	}
	if len(parts) == 0 {
		return "", fmt.Errorf("%s: %w: not on a PCI, platform or ACPI device", name, ErrNoPath)
	}
	return strings.Join(parts, "-"), nil
}

// pathStep is one device dir of the walk: the part of the path it gives
// ("" for none) and the last device of its subsystem upwards (its chain
// of PCI bridges, say), whose parent the walk goes on with.
func pathStep(dir string) (part, last string, err error) {
	subsys, err := subsystemOf(dir)
	if err != nil {
		return "", "", err
	}
	sysname := filepath.Base(dir)
	if !sysName(sysname) {
		return "", "", fmt.Errorf("%w: device name %q", ErrNoPath, sysname)
	}
	switch prefix, known := idPathPrefixes[subsys]; {
	case !known:
		return "", dir, nil // what udev walks past (net, no subsystem, ...)
	case prefix == "":
		return "", "", fmt.Errorf("%w: on a %s bus", ErrNoPath, subsys)
	case prefix == "-":
		return "", skipSubsystem(dir, subsys), nil
	default:
		return prefix + "-" + sysname, skipSubsystem(dir, subsys), nil
	}
}

// idPathPrefixes: the subsystems udev's path_id names, by what they give:
// a prefix, "-" for nothing (virtio), "" for what this package does not
// derive (refused).
var idPathPrefixes = map[string]string{
	"pci": "pci", "platform": "platform", "acpi": "acpi", "virtio": "-",
	"scsi": "", "scsi_tape": "", "cciss": "", "usb": "", "bcma": "", "serio": "", "xen": "",
	"scm": "", "ccw": "", "ccwgroup": "", "ap": "", "iucv": "", "nvme": "",
}

// skipSubsystem returns the topmost device of the unbroken chain of
// subsys's devices that dir starts (udev's skip_subsystem).
func skipSubsystem(dir, subsys string) string {
	for range maxDeviceDepth {
		up := filepath.Dir(dir)
		if s, err := subsystemOf(up); err != nil || s != subsys {
			return dir
		}
		dir = up
	}
	return dir
}

// subsystemOf returns the subsystem of a sysfs device dir (the base name
// of its "subsystem" link), "" when it has none.
func subsystemOf(dir string) (string, error) {
	target, err := os.Readlink(filepath.Join(dir, "subsystem"))
	switch {
	case errors.Is(err, os.ErrNotExist):
		return "", nil
	case err != nil:
		return "", fmt.Errorf("%w: %w", ErrNoPath, err)
	}
	s := filepath.Base(target)
	if len(target) > 4096 || !sysName(s) {
		return "", fmt.Errorf("%w: subsystem %q", ErrNoPath, s)
	}
	return s, nil
}

// sysName reports whether s is a name sysfs could give a device or a
// subsystem: 1 to 255 bytes of letters, digits and "-_.:+".
func sysName(s string) bool {
	if s == "" || len(s) > 255 {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_.:+", r)) {
			return false
		}
	}
	return true
}
