//go:build vmtest

package netns_test

import (
	"testing"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// Issue 7, defect 7, on a bond: enslaving the first port gives the bond
// the port's MAC, and the kernel flushes the bond's neighbours (permanent
// ones too) and those of a VLAN on it, which follows its parent's MAC. One
// reconcile pass from nothing, with no read-back pass after it, must leave
// both neighbours in the kernel. (A bond has carrier only once a port is
// up, which already orders its neighbours after the ports; the dependency
// on the ports that render adds makes it hold without relying on that.
// This test guards the outcome on a real bond, which the host kernel
// lacks.)
func TestInVMNeighborOnBondSurvivesPorts(t *testing.T) {
	tgt := linkVMNamespace(t)
	linkDummies(t, tgt, "eth0", "eth1")
	st := l3ReconcileOnce(t, tgt, "bond.json", `{"version": 1,
		"interfaces": [
			{"name": "bond0", "type": "bond", "bond": {"mode": "active-backup", "miimon": 100}},
			{"name": "p0", "type": "veth", "veth": {"peer": "p0-peer"}, "master": "bond0"},
			{"name": "eth1", "type": "physical", "master": "bond0"},
			{"name": "bond0.100", "type": "vlan", "vlan": {"parent": "bond0", "id": 100}}
		],
		"neighbors": [
			{"dev": "bond0", "ip": "10.9.0.20", "mac": "02:00:00:00:09:20"},
			{"dev": "bond0.100", "ip": "10.100.0.20", "mac": "02:00:00:00:64:20"}
		]}`)
	for dev, want := range map[string]string{"bond0": "10.9.0.20", "bond0.100": "10.100.0.20"} {
		l, err := tgt.NL.LinkByName(dev)
		if err != nil {
			t.Fatal(err)
		}
		neighs, err := tgt.NL.NeighList(l.Attrs().Index, netlink.FAMILY_V4)
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, n := range neighs {
			if n.IP.String() == want && n.State&unix.NUD_PERMANENT != 0 {
				found = true
			}
		}
		if !found {
			t.Errorf("%s: neighbour %s missing after one pass: %v\n%s", dev, want, neighs, st.OperationLog)
		}
	}
}
