//go:build vmtest

package netns_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"testing"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/netagent/netagent/agent/render"
	"github.com/netagent/netagent/configurators/l3"
	"github.com/netagent/netagent/configurators/link"
	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/internal/netnsx"
	"github.com/netagent/netagent/reconciler"
)

// vrfEnv reconciles rendered intents with the link and l3 configurators
// over one state directory, one pass per call, as the agent does.
type vrfEnv struct {
	t        *testing.T
	tgt      *netnsx.Target
	reg      *reconciler.TypeRegistry
	stateDir string
}

func newVRFEnv(t *testing.T, tgt *netnsx.Target) *vrfEnv {
	e := &vrfEnv{t: t, tgt: tgt, reg: &reconciler.TypeRegistry{}, stateDir: t.TempDir()}
	if err := link.Register(e.reg, tgt, e.stateDir); err != nil {
		t.Fatal(err)
	}
	if err := l3.Register(e.reg, tgt); err != nil {
		t.Fatal(err)
	}
	return e
}

// current reads the namespace back with intended as the hint.
func (e *vrfEnv) current(intended *dg.Graph) *dg.Graph {
	e.t.Helper()
	cur, err := link.ReadBack(e.tgt, e.stateDir, intended)
	if err != nil {
		e.t.Fatal(err)
	}
	l3cur, err := l3.ReadBack(e.tgt, "", intended)
	if err != nil {
		e.t.Fatal(err)
	}
	return dg.New("current", append(cur, l3cur...)...)
}

// pass renders the intent and runs one reconcile pass.
func (e *vrfEnv) pass(intent string) (reconciler.Status, *dg.Graph) {
	e.t.Helper()
	intended, err := render.Load(map[string][]byte{"vrf.json": []byte(`{"version": 1, ` + intent + `}`)})
	if err != nil {
		e.t.Fatal(err)
	}
	return reconciler.New(e.reg).Reconcile(context.Background(), e.current(intended), intended), intended
}

// applyTwice runs one pass, which must succeed, then a second, which must
// run no operation, and checks that every intended item reads back equal
// (what `netagent check` does).
func (e *vrfEnv) applyTwice(intent string) reconciler.OperationLog {
	e.t.Helper()
	st, intended := e.pass(intent)
	if st.Err != nil || len(st.Blocked) > 0 {
		e.t.Fatalf("first pass: %v, blocked %v\n%s", st.Err, st.Blocked, st.OperationLog)
	}
	if again, _ := e.pass(intent); again.Err != nil || len(again.OperationLog) != 0 {
		e.t.Errorf("second pass: %v\n%s", again.Err, again.OperationLog)
	}
	cur := e.current(intended)
	for it := range intended.Items() {
		if got, ok := cur.Get(dg.Ref(it)); !ok || !got.Equal(it) {
			e.t.Errorf("read back %v: %v, want %v", dg.Ref(it), got, it)
		}
	}
	return st.OperationLog
}

// showRoundTrip does what `netagent show --json` and an apply of its
// output do: read everything back without a hint, turn it into an intent,
// render that and reconcile towards it, which must run no operation.
func (e *vrfEnv) showRoundTrip() {
	e.t.Helper()
	var shown []dg.Item
	for it := range e.current(nil).Items() {
		shown = append(shown, it)
	}
	data, err := json.Marshal(render.ToIntent(shown))
	if err != nil {
		e.t.Fatal(err)
	}
	intended, err := render.Load(map[string][]byte{"shown.json": data})
	if err != nil {
		e.t.Fatalf("show --json does not load: %v\n%s", err, data)
	}
	if st := reconciler.New(e.reg).Reconcile(context.Background(), e.current(intended), intended); st.Err != nil || len(st.OperationLog) != 0 {
		e.t.Errorf("applying show --json: %v\n%s\n%s", st.Err, st.OperationLog, data)
	}
}

// addrsOf lists the addresses on dev, as "addr/len".
func (e *vrfEnv) addrsOf(dev string) []string {
	e.t.Helper()
	list, err := e.tgt.NL.AddrList(linkNL(e.t, e.tgt, dev), netlink.FAMILY_ALL)
	if err != nil {
		e.t.Fatal(err)
	}
	var out []string
	for _, a := range list {
		if !a.IP.IsLinkLocalUnicast() {
			out = append(out, a.IPNet.String())
		}
	}
	return out
}

// routeIn reports whether table holds a route to dst over dev.
func (e *vrfEnv) routeIn(table int, dst, dev string) bool {
	e.t.Helper()
	_, n, _ := net.ParseCIDR(dst)
	list, err := e.tgt.NL.RouteListFiltered(netlink.FAMILY_ALL, &netlink.Route{Table: table, Dst: n},
		netlink.RT_FILTER_TABLE|netlink.RT_FILTER_DST)
	if err != nil {
		e.t.Fatal(err)
	}
	idx := linkNL(e.t, e.tgt, dev).Attrs().Index
	return slices.ContainsFunc(list, func(r netlink.Route) bool { return r.LinkIndex == idx })
}

// l3mdevRules counts the kernel's l3mdev rules (pref 1000).
func (e *vrfEnv) l3mdevRules() int {
	e.t.Helper()
	list, err := e.tgt.NL.RuleList(netlink.FAMILY_ALL)
	if err != nil {
		e.t.Fatal(err)
	}
	n := 0
	for _, r := range list {
		if r.Priority == 1000 && r.Table == 0 && r.Protocol == unix.RTPROT_KERNEL {
			n++
		}
	}
	return n
}

func vrfIntent(table int, eth1Master string) string {
	master := ""
	if eth1Master != "" {
		master = fmt.Sprintf(`, "master": %q`, eth1Master)
	}
	return fmt.Sprintf(`"interfaces": [
		{"name": "blue", "type": "vrf", "vrf": {"table": %d}},
		{"name": "eth0", "type": "physical", "master": "blue", "addresses": ["192.0.2.1/24", "2001:db8::1/64"]},
		{"name": "eth1", "type": "physical"%s, "addresses": ["198.51.100.1/24", "2001:db8:1::1/64"]}],
	"routes": [{"to": "10.9.0.0/16", "via": "192.0.2.2", "dev": "eth0", "table": %d},
		{"to": "2001:db8:9::/48", "via": "2001:db8::2", "dev": "eth0", "table": %d}],
	"rules": [{"priority": 1000, "from": "192.0.2.0/24", "table": %d}],
	"neighbors": [{"dev": "eth0", "ip": "192.0.2.3", "mac": "02:00:00:00:00:03"},
		{"dev": "eth1", "ip": "198.51.100.3", "mac": "02:00:00:00:00:13"}]`, table, master, table, table, table)
}

// TestInVMVRF drives a vrf and its ports through the link and l3
// configurators on the real kernel (the host's has no vrf module): one
// pass enslaves a NIC and leaves its IPv4 and IPv6 addresses, its routes
// in the vrf's table and its neighbour in place (the enslave cycles the
// NIC and flushes them: they wait for the Port), a second pass does
// nothing, and everything reads back equal; a NIC with addresses that
// joins the vrf later keeps them after one pass; mtu and alias change in
// place; a new table recreates the vrf; the kernel's l3mdev rules are
// never touched, nor is a foreign vrf or its port; delete releases the
// ports.
func TestInVMVRF(t *testing.T) {
	tgt := linkVMNamespace(t)
	e := newVRFEnv(t, tgt)
	linkDummies(t, tgt, "eth0", "eth1", "eth9")
	for _, n := range []string{"eth0", "eth1", "eth9"} { // NICs with carrier
		if err := tgt.NL.LinkSetUp(linkNL(t, tgt, n)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tgt.NL.LinkAdd(&netlink.Vrf{LinkAttrs: netlink.LinkAttrs{Name: "red"}, Table: 30}); err != nil {
		t.Fatal(err)
	}
	if err := tgt.NL.LinkSetMaster(linkNL(t, tgt, "eth9"), linkNL(t, tgt, "red")); err != nil {
		t.Fatal(err)
	}
	if e.l3mdevRules() == 0 {
		t.Fatal("the foreign vrf made no l3mdev rule")
	}
	rules := e.l3mdevRules()

	e.applyTwice(vrfIntent(10, ""))
	blue := linkNL(t, tgt, "blue").(*netlink.Vrf)
	if blue.Table != 10 || blue.Attrs().Alias != "netagent" || linkNL(t, tgt, "eth0").Attrs().MasterIndex != blue.Attrs().Index {
		t.Errorf("blue: table %d alias %q; eth0 master %d", blue.Table, blue.Attrs().Alias, linkNL(t, tgt, "eth0").Attrs().MasterIndex)
	}
	if got := e.addrsOf("eth0"); !slices.Contains(got, "192.0.2.1/24") || !slices.Contains(got, "2001:db8::1/64") {
		t.Errorf("eth0 addresses after one pass: %v", got)
	}
	if !e.routeIn(10, "10.9.0.0/16", "eth0") || !e.routeIn(10, "2001:db8:9::/48", "eth0") || !e.routeIn(10, "192.0.2.0/24", "eth0") {
		t.Error("blue's table 10 lacks the routes over eth0")
	}
	if e.routeIn(254, "192.0.2.0/24", "eth0") {
		t.Error("eth0's prefix route stayed in main")
	}
	if n := e.l3mdevRules(); n != rules {
		t.Errorf("l3mdev rules: %d, were %d", n, rules)
	}

	// eth1, with its addresses, joins blue: one pass, addresses kept.
	e.applyTwice(vrfIntent(10, "blue"))
	if got := e.addrsOf("eth1"); !slices.Contains(got, "198.51.100.1/24") || !slices.Contains(got, "2001:db8:1::1/64") {
		t.Errorf("eth1 addresses after joining blue in one pass: %v", got)
	}
	if !e.routeIn(10, "198.51.100.0/24", "eth1") {
		t.Error("eth1's prefix route not in table 10")
	}

	// eth1 moves to green in one pass (a Modify of its Port, which cycles
	// it): its addresses and neighbour are there after it (the second pass
	// has nothing to do), and back again to blue.
	green := strings.Replace(vrfIntent(10, "green"), `{"name": "blue",`, `{"name": "green", "type": "vrf", "vrf": {"table": 40}}, {"name": "blue",`, 1)
	if log := e.applyTwice(green); !slices.ContainsFunc(linkOps(log), func(s string) bool { return strings.HasPrefix(s, "modify port/eth1") }) {
		t.Errorf("moving eth1 to green is no port modify:\n%s", log)
	}
	if got := e.addrsOf("eth1"); !slices.Contains(got, "2001:db8:1::1/64") || !e.routeIn(40, "198.51.100.0/24", "eth1") {
		t.Errorf("eth1 after moving to green in one pass: addresses %v, prefix route in 40 %v", got, e.routeIn(40, "198.51.100.0/24", "eth1"))
	}
	e.applyTwice(vrfIntent(10, "blue"))
	e.showRoundTrip()

	// In place: mtu and alias of the vrf.
	index := linkNL(t, tgt, "blue").Attrs().Index
	e.applyTwice(strings.Replace(vrfIntent(10, "blue"), `"vrf": {"table": 10}`, `"mtu": 9000, "alias": "tenant", "vrf": {"table": 10}`, 1))
	if a := linkNL(t, tgt, "blue").Attrs(); a.Index != index || a.MTU != 9000 || a.Alias != "netagent:tenant" {
		t.Errorf("blue after modify: index %d (was %d) mtu %d alias %q", a.Index, index, a.MTU, a.Alias)
	}

	// Recreate: table 20.
	e.applyTwice(vrfIntent(20, "blue"))
	blue = linkNL(t, tgt, "blue").(*netlink.Vrf)
	if blue.Table != 20 || blue.Attrs().Index == index || linkNL(t, tgt, "eth0").Attrs().MasterIndex != blue.Attrs().Index {
		t.Errorf("blue after the new table: table %d index %d (was %d)", blue.Table, blue.Attrs().Index, index)
	}
	if got := e.addrsOf("eth0"); !slices.Contains(got, "2001:db8::1/64") || !e.routeIn(20, "10.9.0.0/16", "eth0") {
		t.Errorf("after the new table: eth0 addresses %v, route in 20 %v", got, e.routeIn(20, "10.9.0.0/16", "eth0"))
	}

	// The foreign red is refused, untouched.
	st, _ := e.pass(strings.Replace(vrfIntent(20, "blue"), `{"name": "blue", "type": "vrf", "vrf": {"table": 20}},`,
		`{"name": "blue", "type": "vrf", "vrf": {"table": 20}}, {"name": "red", "type": "vrf", "vrf": {"table": 30}},`, 1))
	if !errors.Is(st.Err, link.ErrNotOwned) {
		t.Errorf("intent naming the foreign red: %v, want ErrNotOwned\n%s", st.Err, st.OperationLog)
	}

	// Delete: blue goes, its ports are released; red, eth9 and the
	// kernel's l3mdev rules stay.
	e.applyTwice(`"interfaces": [{"name": "eth0", "type": "physical"}, {"name": "eth1", "type": "physical"}]`)
	if !linkGone(t, tgt, "blue") || linkNL(t, tgt, "eth0").Attrs().MasterIndex != 0 {
		t.Error("blue survives, or eth0 is still enslaved")
	}
	red := linkNL(t, tgt, "red").(*netlink.Vrf)
	if red.Table != 30 || red.Attrs().Alias != "" || linkNL(t, tgt, "eth9").Attrs().MasterIndex != red.Attrs().Index {
		t.Errorf("foreign red touched: table %d alias %q, eth9 master %d", red.Table, red.Attrs().Alias, linkNL(t, tgt, "eth9").Attrs().MasterIndex)
	}
	if n := e.l3mdevRules(); n != rules {
		t.Errorf("l3mdev rules after the delete: %d, were %d", n, rules)
	}
}
