package vm

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Readers for tests inside the VM that check NICs with the real tools
// (Config.Programs = ProgramsIPEthtool) and sysfs, independently of
// netagent's own read-back.

// IPLink is one link of `ip -d -j link show`, with the fields NIC tests read.
// Permaddr is there only when the current address differs from the
// permanent one (iproute2 prints it only then); ParentBus and ParentDev
// name the device the link sits on ("pci" "0000:00:04.0" for an e1000,
// "virtio" "virtio0" for a virtio_net NIC).
type IPLink struct {
	Ifindex   int    `json:"ifindex"`
	Ifname    string `json:"ifname"`
	Address   string `json:"address"`
	Permaddr  string `json:"permaddr"`
	LinkType  string `json:"link_type"`
	Operstate string `json:"operstate"`
	ParentBus string `json:"parentbus"`
	ParentDev string `json:"parentdev"`
}

// GuestRun runs a program inside the VM, in the named network namespace
// through `ip netns exec` (which also mounts that namespace's sysfs), or in
// the VM's initial namespace when netns is "". It fails t on error and
// returns the output.
func GuestRun(t testing.TB, netns, prog string, args ...string) string {
	t.Helper()
	if netns != "" {
		args = append([]string{"netns", "exec", netns, prog}, args...)
		prog = "ip"
	}
	out, err := exec.Command(prog, args...).Output()
	if err != nil {
		msg := ""
		if ee, ok := err.(*exec.ExitError); ok {
			msg = string(ee.Stderr)
		}
		t.Fatalf("vm: %s %s: %v\n%s", prog, strings.Join(args, " "), err, msg)
	}
	return string(out)
}

// IPLinks returns every link of `ip -d -j link show` in netns ("" for the
// VM's initial namespace).
func IPLinks(t testing.TB, netns string) []IPLink {
	t.Helper()
	out := GuestRun(t, netns, "ip", "-d", "-j", "link", "show")
	var links []IPLink
	if err := json.Unmarshal([]byte(out), &links); err != nil {
		t.Fatalf("vm: ip -d -j link show: %v\n%s", err, out)
	}
	return links
}

// EthtoolInfo is what `ethtool -i` says about a link's driver.
type EthtoolInfo struct {
	Driver  string // "e1000", "virtio_net"
	BusInfo string // the PCI address, "0000:00:04.0"
}

// Ethtool returns `ethtool -i dev` in netns ("" for the initial namespace).
func Ethtool(t testing.TB, netns, dev string) EthtoolInfo {
	t.Helper()
	var info EthtoolInfo
	for _, line := range strings.Split(GuestRun(t, netns, "ethtool", "-i", dev), "\n") {
		key, val, _ := strings.Cut(line, ":")
		switch strings.TrimSpace(key) {
		case "driver":
			info.Driver = strings.TrimSpace(val)
		case "bus-info":
			info.BusInfo = strings.TrimSpace(val)
		}
	}
	return info
}

// PermanentAddress returns what `ethtool -P dev` reports in netns.
func PermanentAddress(t testing.TB, netns, dev string) string {
	t.Helper()
	out := strings.TrimSpace(GuestRun(t, netns, "ethtool", "-P", dev))
	addr, ok := strings.CutPrefix(out, "Permanent address: ")
	if !ok {
		t.Fatalf("vm: ethtool -P %s: %q, want \"Permanent address: ...\"", dev, out)
	}
	return addr
}

var pciAddrPattern = regexp.MustCompile(`^[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$`)

// SysfsPCIAddress returns the PCI address of the device under the link dev
// of the VM's initial namespace (/sys/class/net/<dev>/device, or the
// nearest PCI device above it: a virtio_net link sits on virtioN, which
// sits on the PCI function), the address udev's ID_PATH is made from.
func SysfsPCIAddress(dev string) (string, error) {
	real, err := filepath.EvalSymlinks(filepath.Join("/sys/class/net", dev, "device"))
	if err != nil {
		return "", fmt.Errorf("link %s: %w", dev, err)
	}
	for d := real; d != "/" && d != "."; d = filepath.Dir(d) {
		sub, err := os.Readlink(filepath.Join(d, "subsystem"))
		if err == nil && filepath.Base(sub) == "pci" && pciAddrPattern.MatchString(filepath.Base(d)) {
			return filepath.Base(d), nil
		}
	}
	return "", fmt.Errorf("link %s: no PCI device above %s", dev, real)
}

// MoveNIC moves the link of the VM's initial namespace whose address is
// the NIC's MAC into the named namespace, and back when the test ends
// (before the namespace goes, when netns came from testns.New earlier in
// the test). It returns the link's name.
func MoveNIC(t testing.TB, n NIC, netns string) string {
	t.Helper()
	dev, err := LinkWithMAC(n.MAC)
	if err != nil || dev == "" {
		t.Fatalf("vm: NIC %s: no link with MAC %s in the initial namespace (%v)", n.ID, n.MAC, err)
	}
	GuestRun(t, "", "ip", "link", "set", "dev", dev, "netns", netns)
	t.Cleanup(func() { moveBack(t, n, netns) })
	return dev
}

// moveBack returns the NIC's link, whatever its name now, to the initial
// namespace (that of pid 1).
func moveBack(t testing.TB, n NIC, netns string) {
	t.Helper()
	for _, l := range IPLinks(t, netns) {
		// The card itself, not a VLAN or macvlan on it with its MAC: only
		// the card has a parent bus.
		if l.ParentBus != "" && (strings.EqualFold(l.Address, n.MAC) || strings.EqualFold(l.Permaddr, n.MAC)) {
			GuestRun(t, "", "ip", "-n", netns, "link", "set", "dev", l.Ifname, "netns", "1")
			return
		}
	}
	t.Errorf("vm: NIC %s: no link with MAC %s left in %s to move back", n.ID, n.MAC, netns)
}
