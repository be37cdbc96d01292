package host

import (
	"errors"
	"net"
	"net/netip"
	"slices"
	"testing"

	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/items"
	"github.com/netagent/netagent/reconciler"
)

// DiffFields names each differing field with both values, descending into
// the kind's attributes.
func TestDiffFields(t *testing.T) {
	want := &items.Interface{IfName: "vx0", Kind: items.KindVxlan, MTU: 1450, AdminUp: true,
		Attrs: &items.VxlanAttrs{VNI: 5, Port: 4789, Learning: true, Remote: netip.MustParseAddr("192.0.2.2")}}
	have := &items.Interface{IfName: "vx0", Kind: items.KindVxlan, MTU: 1500, AdminUp: true,
		MAC: net.HardwareAddr{2, 0, 0, 0, 0, 1}, Attrs: &items.VxlanAttrs{VNI: 5, Port: 4789, Remote: netip.MustParseAddr("192.0.2.3")}}
	got := DiffFields(want, have)
	wantDiffs := []FieldDiff{
		{Field: "MTU", Want: "1450", Have: "1500"},
		{Field: "MAC", Want: "none", Have: "02:00:00:00:00:01"},
		{Field: "Vxlan.Remote", Want: "192.0.2.2", Have: "192.0.2.3"},
		{Field: "Vxlan.Learning", Want: "true", Have: "false"},
	}
	if !slices.Equal(got, wantDiffs) {
		t.Errorf("got  %+v\nwant %+v", got, wantDiffs)
	}

	bridgeW := &items.Interface{IfName: "br0", Kind: items.KindBridge, Attrs: &items.BridgeAttrs{STP: true}}
	bridgeH := &items.Interface{IfName: "br0", Kind: items.KindBridge}
	if got := DiffFields(bridgeW, bridgeH); len(got) != 1 || got[0].Field != "Bridge" || got[0].Have != "none" {
		t.Errorf("nil attributes: %+v", got)
	}
	r1 := &items.Route{Dst: netip.MustParsePrefix("0.0.0.0/0"), Gw: netip.MustParseAddr("192.0.2.1"), Metric: 100}
	r2 := &items.Route{Dst: netip.MustParsePrefix("0.0.0.0/0"), Dev: "eth0", Metric: 100}
	if got := DiffFields(r1, r2); !slices.Equal(got, []FieldDiff{
		{Field: "Gw", Want: "192.0.2.1", Have: `""`}, {Field: "Dev", Want: `""`, Have: "eth0"}}) {
		t.Errorf("route: %+v", got)
	}
}

// Compare reports missing, extra and differing items, never external ones
// and never items that are Equal although spelled differently.
func TestCompare(t *testing.T) {
	intended := dg.New("intended",
		&items.Interface{IfName: "br0", Kind: items.KindBridge, AdminUp: true},
		&items.Route{Dst: netip.MustParsePrefix("10.0.0.0/8"), Dev: "br0", Table: 254, Scope: items.ScopeLink},
		&items.Sysctl{Key: "net.ipv4.ip_forward", Value: "1"},
	)
	current := dg.New("current",
		&items.Link{IfName: "eth0", Index: 2},
		&items.Interface{IfName: "br0", Kind: items.KindBridge, AdminUp: false},
		&items.Route{Dst: netip.MustParsePrefix("10.0.0.0/8"), Dev: "br0", Scope: items.ScopeLink},
		&items.Neighbor{Dev: "br0", IP: netip.MustParseAddr("10.0.0.5"), MAC: net.HardwareAddr{2, 0, 0, 0, 0, 5}},
	)
	rep := Compare(current, intended)
	var got []string
	for _, d := range rep.Diffs {
		got = append(got, d.String())
	}
	want := []string{
		"interface/br0: AdminUp: want true, have false",
		"neighbor/br0/10.0.0.5: extra (have neighbor 10.0.0.5 dev br0 lladdr 02:00:00:00:00:05 permanent)",
		"sysctl/net.ipv4.ip_forward: missing (want sysctl net.ipv4.ip_forward = 1)",
	}
	if !slices.Equal(got, want) {
		t.Errorf("got:\n%q\nwant:\n%q", got, want)
	}
	if rep.Converged() || !Compare(intended, intended).Converged() {
		t.Error("Converged is wrong")
	}
}

// Summarize lists blocked items with their reason, and failed, missing and
// undeleted items with their last error, sorted by ref.
func TestSummarize(t *testing.T) {
	bridge := &items.Interface{IfName: "br0", Kind: items.KindBridge, AdminUp: true}
	addr := &items.Address{Dev: "br0", Prefix: netip.MustParsePrefix("10.0.0.1/24")}
	phys := &items.Interface{IfName: "eth0", Kind: items.KindPhysical, AdminUp: true}
	stale := &items.Sysctl{Key: "net.ipv4.ip_forward", Value: "1"}
	intended := dg.New("intended", bridge, addr, phys)
	cur := dg.New("current")
	cur.Put(bridge)
	cur.PutWithState(addr, dg.StateData{State: dg.StateFailed, LastOp: dg.OpCreate, LastErr: errors.New("boom")})
	cur.Put(stale)
	st := reconciler.Status{NewCurrentState: cur, Err: errors.New("boom"),
		Blocked: map[dg.ItemRef]string{dg.Ref(phys): "blocked: waiting for link/eth0 (not in the intended state)"}}
	res := Summarize(st, intended)
	var got []string
	for _, p := range res.Problems {
		got = append(got, p.String())
	}
	want := []string{
		"address/br0/10.0.0.1/24: failed: create failed: boom",
		"interface/eth0: blocked: waiting for link/eth0 (not in the intended state)",
		"sysctl/net.ipv4.ip_forward: failed: not deleted",
	}
	if !slices.Equal(got, want) {
		t.Errorf("got:\n%q\nwant:\n%q", got, want)
	}
	if res.Converged() {
		t.Error("converged despite problems")
	}
}
