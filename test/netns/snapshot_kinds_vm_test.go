//go:build vmtest

package netns_test

import (
	"strconv"
	"strings"
	"testing"
)

// snapKindsIntent is a bond of two NICs (balance-tlb, a primary, a
// transmit hash policy), a VLAN on it in a VRF, with an address and a
// route in the VRF's table; id and miimon vary.
func snapKindsIntent(vlanID, miimon int) string {
	return strings.NewReplacer("@ID@", strconv.Itoa(vlanID), "@MIIMON@", strconv.Itoa(miimon)).Replace(`{"version": 1, "interfaces": [
	  {"name": "eth1", "type": "physical", "master": "bond0"},
	  {"name": "eth2", "type": "physical", "master": "bond0"},
	  {"name": "bond0", "type": "bond", "bond": {"mode": "balance-tlb", "miimon": @MIIMON@, "primary": "eth1", "xmitHashPolicy": "layer3+4"}},
	  {"name": "blue", "type": "vrf", "vrf": {"table": 100}},
	  {"name": "bond0.v", "type": "vlan", "master": "blue", "vlan": {"parent": "bond0", "id": @ID@}, "addresses": ["192.0.2.2/24"]}],
	  "routes": [{"to": "10.9.0.0/16", "via": "192.0.2.1", "dev": "bond0.v", "table": 100}]}`)
}

// TestInVMSnapshotPlanAgainstKinds: with a bond, a VLAN and a VRF, then
// GRE, SIT, IPIP and ip6tnl tunnels (the kinds this host's kernel lacks,
// beside the tunnel modules' fallback devices), `plan --against` a
// snapshot prints
// what the live plan prints, byte for byte with the same exit code:
// before the apply (everything to make), after it (nothing), for a new
// miimon (a change in place) and a new VLAN id (a recreate with what
// depends on it), and for an intent without them (deletes); the tunnels
// before and after their apply, with a new TTL, and removed.
func TestInVMSnapshotPlanAgainstKinds(t *testing.T) {
	r := newSnapRig(t)
	run, file, same := r.run, r.file, r.same
	first := file("kinds.json", snapKindsIntent(10, 100))
	if live := same(first); !strings.Contains(live, "create interface/bond0") {
		t.Errorf("the plan makes no bond:\n%s", live)
	}
	if out, errOut, code := run("apply", first); code != 0 {
		t.Fatalf("apply: exit %d: %s%s", code, out, errOut)
	}
	if live := same(first); !strings.Contains(live, "no changes") {
		t.Errorf("the plan of what was applied changes something:\n%s", live)
	}
	same(file("miimon.json", snapKindsIntent(10, 200)))
	same(file("vlanid.json", snapKindsIntent(20, 100)))
	same(file("empty.json", `{"version": 1}`))

	// Tunnels of each kind beside the modules' fallback devices.
	tunnels := func(ttl int) string {
		return file("tunnels.json", `{"version": 1, "interfaces": [
		  {"name": "eth1", "type": "physical", "addresses": ["192.0.2.1/24", "2001:db8::1/64"]},
		  {"name": "gre1", "type": "gre", "gre": {"local": "192.0.2.1", "remote": "198.51.100.2", "ttl": `+strconv.Itoa(ttl)+`, "key": 42, "parent": "eth1"}},
		  {"name": "sit1", "type": "sit", "sit": {"remote": "198.51.100.3", "ttl": 255}},
		  {"name": "ipip1", "type": "ipip", "ipip": {"local": "192.0.2.1", "remote": "198.51.100.4"}},
		  {"name": "ip6t1", "type": "ip6tnl", "ip6tnl": {"local": "2001:db8::1", "remote": "2001:db8::2", "mode": "ip6ip6"}}]}`)
	}
	if live := same(tunnels(64)); !strings.Contains(live, "create interface/gre1") {
		t.Errorf("the plan makes no GRE tunnel:\n%s", live)
	}
	if out, errOut, code := run("apply", tunnels(64)); code != 0 {
		t.Fatalf("apply: exit %d: %s%s", code, out, errOut)
	}
	if live := same(tunnels(64)); !strings.Contains(live, "no changes") {
		t.Errorf("the plan of the tunnels applied changes something:\n%s", live)
	}
	same(tunnels(32))
	same(file("empty.json", `{"version": 1}`))
}
