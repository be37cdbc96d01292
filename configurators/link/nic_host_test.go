package link

import (
	"errors"
	"testing"

	"github.com/netagent/netagent/internal/netnsx"
	"github.com/netagent/netagent/internal/testns"
)

// In a test namespace: the driver comes from the kernel's ethtool
// drvinfo ("veth"); a link without a driver answer, or a bad name, has
// none; a veth has no bus path (no parent device), as lo, a virtual
// device, has none in sysfs itself.
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
		t.Errorf("path of the veth ens5: %q, %v; want ErrNoPath", p, err)
	}
	if p, err := sysfsPath("/sys", "lo"); !errors.Is(err, ErrNoPath) {
		t.Errorf("path of lo: %q, %v; want ErrNoPath", p, err)
	}
}

// In the test's own namespace, whose links sysfs shows: nicPath (from the
// parent device rtnetlink names) gives for every link what sysfsPath
// gives from its class/net entry, a path or ErrNoPath alike. It only
// reads the namespace.
func TestHostNICPathAgreesWithSysfs(t *testing.T) {
	testns.RequireRoot(t)
	own, err := netnsx.Open("")
	if err != nil {
		t.Fatal(err)
	}
	defer own.Close()
	links, err := own.NL.LinkList()
	if err != nil {
		t.Fatal(err)
	}
	h, paths := hostNIC{t: own, sysfs: "/sys"}, 0
	for _, l := range links {
		a := l.Attrs()
		want, wantErr := sysfsPath("/sys", a.Name)
		got, err := h.nicPath(a.Name, a.Index)
		if got != want || errors.Is(err, ErrNoPath) != errors.Is(wantErr, ErrNoPath) {
			t.Errorf("%s (parent %s %s): nicPath %q, %v; sysfsPath %q, %v", a.Name, a.ParentDevBus, a.ParentDev, got, err, want, wantErr)
		}
		if err == nil {
			paths++
		}
		t.Logf("%s: %q %v", a.Name, got, err)
	}
	t.Logf("%d links, %d with a bus path", len(links), paths)
}
