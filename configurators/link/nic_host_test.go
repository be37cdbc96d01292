package link

import (
	"errors"
	"testing"

	"github.com/netagent/netagent/internal/testns"
)

// In a test namespace: the driver comes from the kernel's ethtool
// drvinfo ("veth"); a link without a driver answer, or a bad name, has
// none; the bus path is refused (sysfs shows the agent's own namespace,
// not this one), as it is for lo, a virtual device, in sysfs itself.
func TestHostNIC(t *testing.T) {
	tgt := testns.New(t)
	testns.Exec(t, tgt, "ip", "link", "add", "ens5", "type", "veth", "peer", "name", "ens5-peer")
	h := hostNIC{t: tgt, sysfs: "/sys"}
	if d, err := h.nicDriver("ens5"); err != nil || d != "veth" {
		t.Errorf("driver of ens5: %q, %v; want veth", d, err)
	}
	if d, err := h.nicDriver("missing0"); err == nil {
		t.Errorf("driver of a missing link: %q", d)
	}
	if d, err := h.nicDriver("a/b"); err == nil {
		t.Errorf("driver of a bad name: %q", d)
	}
	if a, err := h.nicPermAddr("ens5"); !errors.Is(err, ErrNoPermAddr) {
		t.Errorf("ethtool permaddr of a veth: %s, %v; want ErrNoPermAddr (all zeros)", a, err)
	}
	if a, err := h.nicPermAddr("missing0"); err == nil || errors.Is(err, ErrNoPermAddr) {
		t.Errorf("ethtool permaddr of a missing link: %s, %v; want the kernel's error", a, err)
	}
	if p, err := h.nicPath("ens5", 3); !errors.Is(err, ErrNoPath) {
		t.Errorf("path of ens5 in a test namespace: %q, %v; want ErrNoPath", p, err)
	}
	if p, err := sysfsPath("/sys", "lo"); !errors.Is(err, ErrNoPath) {
		t.Errorf("path of lo: %q, %v; want ErrNoPath", p, err)
	}
}
