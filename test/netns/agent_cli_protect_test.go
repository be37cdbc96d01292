//go:build !vmtest

package netns_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/netagent/netagent/agent/intent"
)

// protectIntent is an uplink that netagent creates (a veth, wan0, with an
// address and the default route through it) and a LAN veth; protected
// marks wan0 "protected": true.
func protectIntent(withWAN, protected bool) *intent.Intent {
	in := &intent.Intent{Version: 1, Interfaces: []intent.Interface{
		{Name: "lan1", Type: intent.LinkVeth, Veth: &intent.Veth{Peer: "lan1-peer"}, Addresses: []string{"198.51.100.1/24"}},
	}}
	if withWAN {
		in.Interfaces = append(in.Interfaces, intent.Interface{Name: "wan0", Type: intent.LinkVeth, Veth: &intent.Veth{Peer: "wan0-peer"},
			Addresses: []string{"192.0.2.10/24"}, Protected: protected})
		in.Routes = []intent.Route{{To: "default", Via: "192.0.2.1", Dev: "wan0", Metric: 100}}
	}
	return in
}

// wanView is what the kernel holds of the uplink: the link, its addresses
// and the routes through it.
func (e *cliEnv) wanView() string {
	e.t.Helper()
	return e.ip("-br", "link", "show", "dev", "wan0") + e.ip("-br", "addr", "show", "dev", "wan0") +
		e.ip("route", "show", "dev", "wan0")
}

// A plan or an apply that removes a protected (--protect) uplink is
// refused with exit 4, naming every object and why, and changes nothing;
// with --force it runs.
func TestAgentCLIProtectRefuses(t *testing.T) {
	e := cliNewEnv(t)
	full := e.writeIntent("full.json", protectIntent(true, false))
	noWAN := e.writeIntent("nowan.json", protectIntent(false, false))
	e.mustRun(0, "apply", full)
	e.ip("link", "set", "wan0-peer", "up")
	before := e.stableSnapshot() + e.ip("-br", "link")

	wants := []string{
		"route 0.0.0.0/0 via 192.0.2.1 dev wan0 would be withdrawn: wan0 is protected",
		"address 192.0.2.10/24 on wan0 would be removed: wan0 is protected",
		"interface wan0 would be deleted: wan0 is protected",
	}
	res := e.mustRun(4, "plan", "--protect", "wan0", noWAN)
	for _, w := range wants {
		if !strings.Contains(res.stderr, w) {
			t.Errorf("plan does not say %q:\n%s", w, res)
		}
	}
	res = e.mustRun(4, "plan", "--json", "--protect", "wan0", noWAN)
	var doc struct{ Refused []string }
	if err := json.Unmarshal([]byte(res.stdout), &doc); err != nil || len(doc.Refused) != len(wants) {
		t.Errorf("plan --json refused %v (%v):\n%s", doc.Refused, err, res)
	}
	res = e.mustRun(4, "apply", "--protect", "wan0", noWAN)
	for _, w := range wants {
		if !strings.Contains(res.stderr, w) {
			t.Errorf("apply does not say %q:\n%s", w, res)
		}
	}
	if strings.Contains(res.stderr, "kernel operation") {
		t.Errorf("a refused apply ran operations:\n%s", res)
	}
	if after := e.snapshot() + e.ip("-br", "link"); after != before {
		t.Errorf("a refused apply changed the kernel:\nbefore:\n%s\nafter:\n%s", before, after)
	}
	// An apply that keeps the uplink is not refused by its protection.
	e.mustRun(0, "apply", "--protect", "wan0", full)

	res = e.mustRun(0, "apply", "--protect", "wan0", "--force", noWAN)
	if !strings.Contains(res.stderr, "forced: interface wan0 would be deleted") {
		t.Errorf("apply --force does not say what it forced:\n%s", res)
	}
	if out := e.ip("-br", "link"); strings.Contains(out, "wan0") {
		t.Errorf("wan0 still there after apply --force:\n%s", out)
	}
}

// Removing an uplink that the intent protected from the intent leaves it
// in the kernel, link, address and route, as an orphan that apply, plan
// and check report (check still exits 0: kept on purpose); later applies
// keep it; an intent that declares it again adopts it with zero
// operations; --force then deletes what an intent leaves out.
func TestAgentCLIProtectOrphans(t *testing.T) {
	e := cliNewEnv(t)
	full := e.writeIntent("full.json", protectIntent(true, true))
	noWAN := e.writeIntent("nowan.json", protectIntent(false, false))
	e.mustRun(0, "apply", full)
	e.ip("link", "set", "wan0-peer", "up")
	e.stableSnapshot()
	kept := e.wanView()
	if !strings.Contains(kept, "192.0.2.10/24") || !strings.Contains(kept, "default via 192.0.2.1") {
		t.Fatalf("the uplink is not as the intent says:\n%s", kept)
	}

	res := e.mustRun(0, "plan", noWAN)
	for _, w := range []string{"interface/wan0: orphaned: no longer in the intent; deleting it would delete interface wan0: wan0 is protected",
		"address/wan0/192.0.2.10/24: orphaned", "orphaned: no longer in the intent; deleting it would withdraw route 0.0.0.0/0 via 192.0.2.1 dev wan0"} {
		if !strings.Contains(res.stdout, w) {
			t.Errorf("plan does not say %q:\n%s", w, res)
		}
	}
	if strings.Contains(res.stdout, "delete interface/wan0") {
		t.Errorf("plan deletes the orphan:\n%s", res)
	}
	for range 2 { // the second apply knows the orphan from the state directory
		res = e.mustRun(0, "apply", noWAN)
		if !strings.Contains(res.stdout, "interface/wan0: orphaned") || !strings.Contains(res.stdout, "converged: 0 operations") {
			t.Errorf("apply does not report the orphan, or writes:\n%s", res)
		}
		if got := e.wanView(); got != kept {
			t.Fatalf("the orphaned uplink changed:\nbefore:\n%s\nafter:\n%s", kept, got)
		}
	}
	res = e.mustRun(0, "check", noWAN)
	if !strings.Contains(res.stdout, "note: interface/wan0: orphaned") || !strings.Contains(res.stdout, "ok: running matches intended") {
		t.Errorf("check:\n%s", res)
	}

	// Declared again: adopted, nothing written.
	w := e.watch()
	res = e.mustRun(0, "apply", full)
	if !strings.Contains(res.stdout, "converged: 0 operations") || strings.Contains(res.stdout, "orphaned") {
		t.Errorf("adopting the orphan ran operations:\n%s", res)
	}
	if events := w.collect(500 * time.Millisecond); len(events) > 0 {
		t.Errorf("adopting changed the kernel: %v", events)
	}

	// Left out again, then --force: deleted, and forgotten.
	e.mustRun(0, "apply", noWAN)
	res = e.mustRun(0, "apply", "--force", noWAN)
	if !strings.Contains(res.stdout, "interface/wan0: deleted (--force)") {
		t.Errorf("apply --force:\n%s", res)
	}
	if out := e.ip("-br", "link"); strings.Contains(out, "wan0") {
		t.Errorf("wan0 still there after apply --force:\n%s", out)
	}
}

// A protected physical NIC's settings left out of the intent stay as they
// are (an orphan) instead of going back to what the NIC had before
// netagent: the operator's lifeline is not touched; --force restores them.
func TestAgentCLIProtectPhysicalKeepsSettings(t *testing.T) {
	e := cliNewEnv(t)
	with := e.writeIntent("with.json", &intent.Intent{Version: 1, Interfaces: []intent.Interface{
		{Name: "uplink0", Type: intent.LinkPhysical, MTU: 1400, Protected: true}}})
	without := e.writeIntent("without.json", &intent.Intent{Version: 1})
	e.mustRun(0, "apply", with)
	if mtu := e.link("uplink0")["mtu"]; mtu != 1400.0 {
		t.Fatalf("mtu %v after apply", mtu)
	}
	res := e.mustRun(0, "apply", without)
	if !strings.Contains(res.stdout, "interface/uplink0: orphaned: no longer in the intent; deleting it would give uplink0 back the settings it had before netagent") {
		t.Errorf("apply:\n%s", res)
	}
	if mtu := e.link("uplink0")["mtu"]; mtu != 1400.0 {
		t.Errorf("mtu %v: the orphan's settings were not kept", mtu)
	}
	e.mustRun(0, "apply", "--force", without)
	if mtu := e.link("uplink0")["mtu"]; mtu != 1500.0 {
		t.Errorf("mtu %v after --force, want the original 1500", mtu)
	}
}

// A protected NIC whose settings netagent never changed (uplink0 found up
// with the intent's MTU) leaves the intent with its address and route: the
// apply succeeds and keeps the NIC, the address and the route as they are
// (an orphan, like other protected links), and neither plan nor diff
// shows a recreate (netagent cannot create a NIC).
func TestAgentCLIProtectUnchangedNICOrphaned(t *testing.T) {
	t.Parallel()
	e := cliNewEnv(t)
	with := e.writeIntent("with.json", &intent.Intent{Version: 1, Interfaces: []intent.Interface{
		{Name: "uplink0", Type: intent.LinkPhysical, MTU: 1500, Addresses: []string{"192.0.2.10/24"}, Protected: true},
		{Name: "lan1", Type: intent.LinkVeth, Veth: &intent.Veth{Peer: "lan1-peer"}, Addresses: []string{"198.51.100.1/24"}}},
		Routes: []intent.Route{{To: "default", Via: "192.0.2.1", Dev: "uplink0", Metric: 100}}})
	without := e.writeIntent("without.json", &intent.Intent{Version: 1, Interfaces: []intent.Interface{
		{Name: "lan1", Type: intent.LinkVeth, Veth: &intent.Veth{Peer: "lan1-peer"}, Addresses: []string{"198.51.100.1/24"}}}})
	e.mustRun(0, "apply", with)
	view := func() string {
		return e.ip("-br", "link", "show", "dev", "uplink0") + e.ip("-br", "addr", "show", "dev", "uplink0") + e.ip("route", "show", "dev", "uplink0")
	}
	kept := view()
	if !strings.Contains(kept, "192.0.2.10/24") || !strings.Contains(kept, "default via 192.0.2.1") {
		t.Fatalf("the uplink is not as the intent says:\n%s", kept)
	}
	res := e.mustRun(0, "plan", without)
	if strings.Contains(res.stdout+res.stderr, "recreate") {
		t.Errorf("plan shows a recreate:\n%s", res)
	}
	for _, w := range []string{"address/uplink0/192.0.2.10/24: orphaned", "route/main 0.0.0.0/0 metric 100: orphaned", "interface/uplink0: orphaned"} {
		if !strings.Contains(res.stdout, w) {
			t.Errorf("plan does not say %q:\n%s", w, res)
		}
	}
	for range 2 {
		res = e.mustRun(0, "apply", without)
		if strings.Contains(res.stdout, "uplink0 (recreate)") || strings.Contains(res.stdout, "delete address/uplink0") {
			t.Errorf("apply touches the uplink:\n%s", res)
		}
		if got := view(); got != kept {
			t.Fatalf("the orphaned uplink changed:\nbefore:\n%s\nafter:\n%s", kept, got)
		}
	}
	if res := e.mustRun(0, "apply", without); !strings.Contains(res.stdout, "converged: 0 operations") {
		t.Errorf("a further apply writes:\n%s", res)
	}
	// apply --json is one JSON document, the orphans in it.
	res = e.mustRun(0, "apply", "--json", without)
	var doc struct {
		Converged  bool
		Operations []any
		Orphans    []struct{ Item, Link, Reason string }
	}
	if err := json.Unmarshal([]byte(res.stdout), &doc); err != nil || !doc.Converged || len(doc.Orphans) != 3 || doc.Orphans[0].Link != "uplink0" {
		t.Errorf("apply --json: %+v (%v)\n%s", doc, err, res)
	}
	res = e.mustRun(0, "diff", "1", "2")
	if strings.Contains(res.stdout, "recreate") || strings.Contains(res.stdout, "delete address/uplink0") ||
		!strings.Contains(res.stdout, "address/uplink0/192.0.2.10/24: orphaned") {
		t.Errorf("diff does not show the uplink kept:\n%s", res)
	}
}

// A protected NIC that is a bridge's port leaves the intent with the
// bridge: the port and the bridge it needs are kept, the apply succeeds.
func TestAgentCLIProtectNICPortOrphaned(t *testing.T) {
	t.Parallel()
	e := cliNewEnv(t)
	with := e.writeIntent("with.json", &intent.Intent{Version: 1, Interfaces: []intent.Interface{
		{Name: "uplink0", Type: intent.LinkPhysical, Master: "br0", Protected: true},
		{Name: "br0", Type: intent.LinkBridge, Addresses: []string{"192.0.2.10/24"}}}})
	without := e.writeIntent("without.json", &intent.Intent{Version: 1})
	e.mustRun(0, "apply", with)
	res := e.wantPortKept(without, "uplink0", "br0")
	if !strings.Contains(res.stdout, "interface/br0: orphaned") {
		t.Errorf("apply:\n%s", res)
	}
}

// wantPortKept applies file and checks that port stays in master, as an
// orphan.
func (e *cliEnv) wantPortKept(file, port, master string) cliResult {
	e.t.Helper()
	res := e.mustRun(0, "apply", file)
	if !strings.Contains(res.stdout, "port/"+port+": orphaned") {
		e.t.Errorf("apply does not keep port/%s:\n%s", port, res)
	}
	if got := e.link(port)["master"]; got != master {
		e.t.Errorf("%s's master %v, want %s kept", port, got, master)
	}
	return res
}

// The last port leaving a protected bridge takes its carrier: plan and
// apply with --protect refuse it (exit 4); the bridge protected by the
// intent keeps the port as an orphan, and its carrier.
func TestAgentCLIProtectBridgeKeepsItsLastPort(t *testing.T) {
	t.Parallel()
	e := cliNewEnv(t)
	e.nicUp("p1", "")
	br := intent.Interface{Name: "br0", Type: intent.LinkBridge, Addresses: []string{"10.1.0.1/24"}, Protected: true}
	with := e.writeIntent("with.json", &intent.Intent{Version: 1, Interfaces: []intent.Interface{br,
		{Name: "p1", Type: intent.LinkPhysical, Master: "br0"}}})
	without := e.writeIntent("without.json", &intent.Intent{Version: 1, Interfaces: []intent.Interface{br}})
	e.mustRun(0, "apply", with)
	res := e.mustRun(4, "plan", "--protect", "br0", without)
	if !strings.Contains(res.stderr, "port p1 of br0, its last port, would leave br0: br0 is protected") {
		t.Errorf("plan --protect:\n%s", res)
	}
	e.mustRun(4, "apply", "--protect", "br0", without)
	e.wantPortKept(without, "p1", "br0")
}

// A protected bridge kept as an orphan is kept as it is, not pinned to
// what the kernel chose for it: when a port leaves, the bridge takes the
// MAC of the port that stays (the kernel's rule), and the apply runs what
// the plan said (no follow-up writing the departed port's MAC back).
func TestAgentCLIProtectOrphanBridgeNotPinned(t *testing.T) {
	t.Parallel()
	e := cliNewEnv(t)
	e.nicUp("p1", "02:00:00:00:00:01")
	e.nicUp("p2", "02:00:00:00:00:02")
	with := e.writeFile("with.json", `{"version": 1, "interfaces": [{"name": "br0", "type": "bridge", "protected": true, "bridge": {"stp": false}},
  {"name": "p1", "type": "physical", "master": "br0"}, {"name": "p2", "type": "physical", "master": "br0"}]}`)
	without := e.writeFile("without.json", `{"version": 1, "interfaces": [{"name": "p1", "type": "physical"}]}`)
	e.mustRun(0, "apply", with)
	if mac := e.link("br0")["address"]; mac != "02:00:00:00:00:01" {
		t.Fatalf("br0's MAC %v, want the lowest port's", mac)
	}
	plan := e.mustRun(0, "plan", without)
	res := e.mustRun(0, "apply", without)
	if !strings.Contains(plan.stdout, "plan: 1 operation") || !strings.Contains(res.stdout, "converged: 1 operation") ||
		strings.Contains(res.stdout, "modify interface/br0") {
		t.Errorf("plan:\n%s\napply:\n%s", plan, res)
	}
	if mac := e.link("br0")["address"]; mac != "02:00:00:00:00:02" {
		t.Errorf("br0's MAC %v: pinned to the port that left, want the one that stays", mac)
	}
}

// A veth's peer goes down with it: with the peer protected (--protect),
// setting the veth down is refused (exit 4) and the peer keeps its carrier.
func TestAgentCLIProtectVethPeer(t *testing.T) {
	t.Parallel()
	e := cliNewEnv(t)
	up := e.writeFile("up.json", `{"version": 1, "interfaces": [{"name": "v1", "type": "veth", "veth": {"peer": "v1p"}}]}`)
	down := e.writeFile("down.json", `{"version": 1, "interfaces": [{"name": "v1", "type": "veth", "veth": {"peer": "v1p"}, "state": "down"}]}`)
	e.mustRun(0, "apply", up)
	e.ip("link", "set", "v1p", "up")
	res := e.mustRun(4, "apply", "--protect", "v1p", down)
	if !strings.Contains(res.stderr, "interface v1 would be set down: v1p is protected (v1p goes down with v1)") {
		t.Errorf("apply:\n%s", res)
	}
	flags, _ := e.link("v1")["flags"].([]any)
	if !slices.Contains(flags, any("UP")) {
		t.Errorf("v1 was set down: %v", flags)
	}
}
