package netns_test

import (
	"context"
	"errors"
	"testing"

	"github.com/netagent/netagent/configurators/link"
	"github.com/netagent/netagent/internal/testns"
	"github.com/netagent/netagent/items"
)

// TestLinkPhysical applies settings to a NIC (a veth end made by ip):
// MTU, MAC, alias, up; changes them (a setting the intent no longer sets
// goes back to what it was before netagent); and checks that deleting the
// item gives the NIC back its settings, once (see TestLinkPhysicalRestore).
func TestLinkPhysical(t *testing.T) {
	tgt := testns.New(t)
	env := newLinkEnv(t, tgt)
	linkExec(t, tgt, "ip", "link", "add", "eth0", "type", "veth", "peer", "name", "eth0p")
	found := linkMustShow(t, tgt, "eth0")
	nic := &items.Interface{IfName: "eth0", Kind: items.KindPhysical, AdminUp: true, MTU: 1400,
		MAC: linkMAC("02:aa:00:00:00:01"), Alias: "uplink"}
	linkWantOps(t, env.applyTwice(nic), "modify interface/eth0")
	got := linkMustShow(t, tgt, "eth0")
	if got.MTU != 1400 || !got.up() || got.Address != "02:aa:00:00:00:01" || got.IfAlias != "uplink" {
		t.Errorf("ip link eth0 = %+v", got)
	}

	nic2 := &items.Interface{IfName: "eth0", Kind: items.KindPhysical, MTU: 1500, Alias: "wan"}
	linkWantOps(t, env.applyTwice(nic2), "modify interface/eth0")
	got = linkMustShow(t, tgt, "eth0")
	if got.MTU != 1500 || got.up() || got.IfAlias != "wan" || got.Address != found.Address {
		t.Errorf("after modify: ip link eth0 = %+v, want the MAC found (%s) back", got, found.Address)
	}

	// The physical item's delete, twice, gives back what was found.
	cfg := env.ifaces()
	linkExec(t, tgt, "ip", "link", "set", "eth0", "mtu", "1450") // as if netagent had set it
	for range 2 {
		if err := cfg.Delete(context.Background(), nic2); err != nil {
			t.Fatalf("deleting physical eth0: %v", err)
		}
	}
	if after := linkMustShow(t, tgt, "eth0"); after.MTU != found.MTU || after.IfAlias != "" || after.up() {
		t.Errorf("after delete: ip link eth0 = %+v, want as found: %+v", after, found)
	}

	// A NIC that is not there: the reconciler waits for its link; the
	// configurator itself refuses with ErrMissing.
	ghost := &items.Interface{IfName: "eth9", Kind: items.KindPhysical, AdminUp: true}
	st := env.tryApply(ghost)
	if st.Err != nil || st.Blocked[items.InterfaceRef("eth9")] == "" {
		t.Errorf("missing NIC: err %v, blocked %v; want blocked", st.Err, st.Blocked)
	}
	if err := cfg.Create(context.Background(), ghost); !errors.Is(err, link.ErrMissing) {
		t.Errorf("creating missing physical eth9: %v, want ErrMissing", err)
	}
}
