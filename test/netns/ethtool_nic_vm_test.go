//go:build vmtest

package netns_test

import (
	"context"
	"errors"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/vishvananda/netlink"

	"github.com/netagent/netagent/configurators/ethtool"
	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/internal/netnsx"
	"github.com/netagent/netagent/internal/testns"
	"github.com/netagent/netagent/items"
	"github.com/netagent/netagent/test/vm"
)

// The ethtool settings a veth lacks, on the VM's emulated NICs (qemu
// e1000 and virtio-net-pci): rings, coalesce, pause, link modes and
// Wake-on-LAN. For each, either the ethtool program reads the setting
// and netagent sets it (ethtool reads the new value back, a second
// converge reads back equal, the delete gives the found value back), or
// the ethtool program reports the driver lacks it and netagent refuses
// it before writing, or the driver shows it but refuses the write
// (ErrNotSupported) and ethtool still reads the found value. It needs NICs bound to e1000 and virtio_net and the
// ethtool program in the guest: TestVM boots the VM with both (vmNICs,
// vm.ProgramsIPEthtool) and runs it with the other TestInVM tests.
func TestInVMNICEthtool(t *testing.T) {
	if !vm.InGuest() {
		t.Fatal("this test runs in the VM only, with emulated NICs")
	}
	if _, err := exec.LookPath("ethtool"); err != nil {
		t.Fatal("the ethtool program is not in the guest: the vmnics harness puts it in the initramfs")
	}
	for _, driver := range []string{"e1000", "virtio_net"} {
		t.Run(driver, func(t *testing.T) {
			tgt, nic := nicInNamespace(t, driver)
			for _, c := range nicEthtoolCases {
				t.Run(c.group, func(t *testing.T) { c.run(t, tgt, nic) })
			}
		})
	}
}

// nicInNamespace moves the first NIC bound to driver into a test
// namespace (it goes back to the VM's when the namespace is removed).
func nicInNamespace(t *testing.T, driver string) (*netnsx.Target, string) {
	links, _ := filepath.Glob("/sys/class/net/*/device/driver")
	for _, l := range links {
		target, err := os.Readlink(l)
		if err != nil || filepath.Base(target) != driver {
			continue
		}
		name := filepath.Base(filepath.Dir(filepath.Dir(l)))
		tgt := testns.New(t)
		nl, err := netlink.LinkByName(name)
		if err != nil {
			t.Fatal(err)
		}
		if err := netlink.LinkSetNsFd(nl, int(tgt.NsHandle())); err != nil {
			t.Fatalf("moving %s into the test namespace: %v", name, err)
		}
		nicUp(t, tgt, name)
		return tgt, name
	}
	t.Fatalf("no NIC bound to %s in the VM", driver)
	return nil, ""
}

// nicUp sets the NIC up and waits (5s at most) for its carrier: a link
// without one reports no speed.
func nicUp(t *testing.T, tgt *netnsx.Target, name string) {
	l, err := tgt.NL.LinkByName(name)
	if err == nil {
		err = tgt.NL.LinkSetUp(l)
	}
	if err != nil {
		t.Fatalf("setting %s up: %v", name, err)
	}
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if l, err := tgt.NL.LinkByName(name); err == nil && l.Attrs().OperState == netlink.OperUp {
			return
		}
	}
	t.Logf("%s has no carrier after 5s: its speed reads as unknown", name)
}

// nicEthtoolCase is one group: the ethtool program's flag showing it,
// how to read a field's current value (and maximum) from its output,
// and the value to set given the found one.
type nicEthtoolCase struct {
	group, field, flag string
	cur                *regexp.Regexp
	target             func(found uint32, out string) uint32
	// extra are settings applied with it (a forced speed needs
	// autonegotiation off and a duplex).
	extra map[string]uint32
}

var nicEthtoolCases = []nicEthtoolCase{
	{"rings", "rx", "-g", regexp.MustCompile(`(?s)Current hardware settings:\s+RX:\s+(\d+)`), func(found uint32, out string) uint32 {
		max := nicNumber(regexp.MustCompile(`(?s)Pre-set maximums:\s+RX:\s+(\d+)`), out)
		if found == max {
			return max / 2
		}
		return max
	}, nil},
	{"coalesce", "rx-usecs", "-c", regexp.MustCompile(`(?m)^rx-usecs:\s+(\d+)`), func(found uint32, _ string) uint32 {
		return map[bool]uint32{true: 200, false: 100}[found == 100]
	}, nil},
	{"pause", "rx", "-a", regexp.MustCompile(`(?m)^RX:\s+(on|off)`), func(found uint32, _ string) uint32 { return 1 - found }, nil},
	{"link", "speed", "", regexp.MustCompile(`(?m)^\s+Speed: (\d+)Mb/s`), func(found uint32, _ string) uint32 {
		return map[bool]uint32{true: 100, false: 1000}[found == 1000]
	}, map[string]uint32{"link/autoneg": 0, "link/duplex": items.EthtoolDuplexFull}},
	{"wake-on-lan", "modes", "", regexp.MustCompile(`(?m)^\s+Wake-on: (\w+)`), func(found uint32, _ string) uint32 {
		return map[bool]uint32{true: 0, false: items.EthtoolWakeOnLan["magic"]}[found != 0]
	}, nil},
}

// run applies the case's setting and checks it as the doc of
// TestInVMNICEthtool says.
func (c nicEthtoolCase) run(t *testing.T, tgt *netnsx.Target, nic string) {
	show := func() (string, error) {
		args := []string{nic}
		if c.flag != "" {
			args = []string{c.flag, nic}
		}
		var out []byte
		err := tgt.Do(func() (err error) { out, err = exec.Command("ethtool", args...).CombinedOutput(); return err })
		return string(out), err
	}
	out, err := show()
	cfg, err2 := ethtool.New(tgt, t.TempDir())
	if err2 != nil {
		t.Fatal(err2)
	}
	m := c.cur.FindStringSubmatch(out)
	if err != nil || m == nil {
		// The driver lacks it: netagent refuses it and writes nothing.
		it := &items.Ethtool{Interface: nic, Settings: map[string]uint32{items.EthtoolKey(c.group, c.field): 1}}
		if err := cfg.Create(context.Background(), it); !errors.Is(err, ethtool.ErrRefused) {
			t.Errorf("ethtool %s reports no %s %s (%v):\n%s\nnetagent: %v, want a refusal", c.flag, c.group, c.field, err, out, err)
		}
		t.Logf("%s %s: not supported by the driver; refused", c.group, c.field)
		return
	}
	found := nicValue(m[1])
	key := items.EthtoolKey(c.group, c.field)
	it := &items.Ethtool{Interface: nic, Settings: map[string]uint32{key: c.target(found, out)}}
	maps.Copy(it.Settings, c.extra)
	if err := cfg.Create(context.Background(), it); errors.Is(err, ethtool.ErrNotSupported) {
		// The driver reports the setting but refuses to change it (qemu's
		// e1000 lists Wake-on modes it cannot set; virtio-net without
		// notification coalescing shows its coalesce values): only the
		// write can tell. The item fails naming that, and nothing changed.
		if out, _ := show(); nicValue(c.cur.FindStringSubmatch(out)[1]) != found {
			t.Errorf("after a refused write of %s, ethtool %s shows (found %d):\n%s", key, c.flag, found, out)
		}
		t.Logf("%s: the driver refused the write (%v); the found value stays", key, err)
		return
	} else if err != nil {
		t.Fatalf("setting %s to %d (found %d): %v", key, it.Settings[key], found, err)
	}
	if out, _ := show(); nicValue(c.cur.FindStringSubmatch(out)[1]) != it.Settings[key] {
		t.Errorf("after setting %s %d, ethtool %s shows:\n%s", key, it.Settings[key], c.flag, out)
	}
	back, err := ethtool.ReadBack(tgt, "", dg.New("hint", it))
	if err != nil || len(back) != 1 || !back[0].Equal(it) {
		t.Errorf("read back %v, %v: a second apply would not be a no-op", back, err)
	}
	if err := cfg.Delete(context.Background(), it); err != nil {
		t.Fatal(err)
	}
	if out, _ := show(); nicValue(c.cur.FindStringSubmatch(out)[1]) != found {
		t.Errorf("after the delete, ethtool %s shows (found %d):\n%s", c.flag, found, out)
	}
}

// nicValue reads a number, on/off, or ethtool's Wake-on letters ("d":
// off; "g": magic) as the item's value.
func nicValue(s string) uint32 {
	switch s {
	case "on":
		return 1
	case "off", "d":
		return 0
	}
	if n, err := strconv.ParseUint(s, 10, 32); err == nil {
		return uint32(n)
	}
	var mask uint32
	for _, c := range s {
		mask |= map[rune]uint32{'p': 1, 'u': 2, 'm': 4, 'b': 8, 'a': 16, 'g': 32, 's': 64, 'f': 128}[c]
	}
	return mask
}

// nicNumber is the number re finds in out, 0 when none.
func nicNumber(re *regexp.Regexp, out string) uint32 {
	if m := re.FindStringSubmatch(out); m != nil {
		return nicValue(m[1])
	}
	return 0
}
