package netns_test

import (
	"errors"
	"testing"

	"github.com/netagent/netagent/configurators/link"
	"github.com/netagent/netagent/internal/testns"
	"github.com/netagent/netagent/items"
)

// TestLinkPhysicalNeverOwned: ownership of a link cannot be forged through
// a physical interface, even past validation. The configurator refuses to
// write the mark as a physical alias (ErrReservedAlias, nothing written);
// and a NIC that carries the mark already (written by someone, or by an
// older netagent) is still a physical interface when the intent says so:
// it is modified, never deleted or recreated, and keeps existing, with its
// peer, when it leaves the intent.
func TestLinkPhysicalNeverOwned(t *testing.T) {
	tgt := testns.New(t)
	env := newLinkEnv(t, tgt)
	linkExec(t, tgt, "ip", "link", "add", "victim0", "type", "veth", "peer", "name", "victim0p")
	linkExec(t, tgt, "ip", "link", "add", "uplink0", "type", "veth", "peer", "name", "uplink0p")

	for _, alias := range []string{"netagent", "netagent:wan"} {
		forged := &items.Interface{IfName: "uplink0", Kind: items.KindPhysical, AdminUp: true, Alias: alias}
		st := env.tryApply(forged)
		if !errors.Is(st.Err, link.ErrReservedAlias) {
			t.Errorf("physical alias %q: err %v, want ErrReservedAlias", alias, st.Err)
		}
		if got := linkMustShow(t, tgt, "uplink0"); got.IfAlias != "" || got.up() {
			t.Errorf("after the refused alias %q: uplink0 = %+v, want untouched", alias, got)
		}
	}

	// A NIC that carries the mark already, declared without a change,
	// then leaving the intent: it stays.
	linkExec(t, tgt, "ip", "link", "set", "uplink0", "alias", "netagent:wan", "up")
	linkWantOps(t, env.applyTwice(&items.Interface{IfName: "uplink0", Kind: items.KindPhysical, AdminUp: true}),
		"modify interface/uplink0") // records it, writes nothing
	linkWantOps(t, env.applyTwice())
	if got := linkMustShow(t, tgt, "uplink0"); got.IfAlias != "netagent:wan" || !got.up() {
		t.Errorf("uplink0 = %+v, want untouched", got)
	}
	linkMustShow(t, tgt, "uplink0p")

	// The same with changes.
	linkExec(t, tgt, "ip", "link", "set", "victim0", "alias", "netagent")
	nic := &items.Interface{IfName: "victim0", Kind: items.KindPhysical, AdminUp: true, MTU: 1400}
	linkWantOps(t, env.applyTwice(nic), "modify interface/victim0")
	if got := linkMustShow(t, tgt, "victim0"); got.MTU != 1400 || !got.up() {
		t.Errorf("victim0 = %+v, want mtu 1400 and up", got)
	}
	nicAlias := &items.Interface{IfName: "victim0", Kind: items.KindPhysical, AdminUp: true, MTU: 1400, Alias: "wan"}
	linkWantOps(t, env.applyTwice(nicAlias), "modify interface/victim0")

	// It leaves the intent: its settings go back; it and its peer stay.
	linkWantOps(t, env.applyTwice(), "delete interface/victim0")
	got := linkMustShow(t, tgt, "victim0")
	if got.MTU != 1500 || got.up() || got.IfAlias != "netagent" {
		t.Errorf("victim0 after it left the intent = %+v, want mtu 1500, down, its alias as found", got)
	}
	linkMustShow(t, tgt, "victim0p")
	linkMustShow(t, tgt, "uplink0")
}

// TestLinkPhysicalRestore: the settings netagent changes on a NIC are
// given back, as found before its first change, when the NIC leaves the
// intent; a restart in between (a new configurator over the same state
// directory) neither loses the originals nor takes netagent's own values
// for them; once restored, they are forgotten.
func TestLinkPhysicalRestore(t *testing.T) {
	tgt := testns.New(t)
	env := newLinkEnv(t, tgt)
	linkExec(t, tgt, "ip", "link", "add", "eth0", "type", "veth", "peer", "name", "eth0p")
	linkExec(t, tgt, "ip", "link", "set", "eth0", "alias", "as found")
	found := linkMustShow(t, tgt, "eth0")

	nic := &items.Interface{IfName: "eth0", Kind: items.KindPhysical, AdminUp: true, MTU: 1400, Alias: "uplink",
		MAC: linkMAC("02:aa:00:00:00:01")}
	linkWantOps(t, env.applyTwice(nic), "modify interface/eth0")

	// Restarted: changes again; the originals stay those found first.
	restarted := newLinkEnvAt(t, tgt, env.stateDir)
	nic2 := &items.Interface{IfName: "eth0", Kind: items.KindPhysical, AdminUp: true, MTU: 1450, Alias: "wan",
		MAC: linkMAC("02:aa:00:00:00:02")}
	linkWantOps(t, restarted.applyTwice(nic2), "modify interface/eth0")
	if got := linkMustShow(t, tgt, "eth0"); got.MTU != 1450 || got.IfAlias != "wan" || !got.up() {
		t.Errorf("eth0 = %+v", got)
	}

	// It leaves the intent, read back by another restarted agent.
	again := newLinkEnvAt(t, tgt, env.stateDir)
	linkWantOps(t, again.applyTwice(), "delete interface/eth0")
	got := linkMustShow(t, tgt, "eth0")
	if got.MTU != found.MTU || got.up() || got.IfAlias != found.IfAlias || got.Address != found.Address {
		t.Errorf("eth0 after it left the intent = %+v, want as found %+v", got, found)
	}

	// Forgotten: a later change by hand is not undone.
	linkExec(t, tgt, "ip", "link", "set", "eth0", "mtu", "9000")
	linkWantOps(t, again.applyTwice())
	if got := linkMustShow(t, tgt, "eth0"); got.MTU != 9000 {
		t.Errorf("eth0 mtu %d, want 9000 (the originals were forgotten)", got.MTU)
	}

	// A setting the intent stops setting goes back, the others stay.
	linkWantOps(t, again.applyTwice(&items.Interface{IfName: "eth0", Kind: items.KindPhysical, AdminUp: true, MTU: 1400}),
		"modify interface/eth0")
	linkWantOps(t, again.applyTwice(&items.Interface{IfName: "eth0", Kind: items.KindPhysical, AdminUp: true}),
		"modify interface/eth0")
	if got := linkMustShow(t, tgt, "eth0"); got.MTU != 9000 || !got.up() {
		t.Errorf("eth0 = %+v, want the mtu found (9000) back, still up", got)
	}
}
