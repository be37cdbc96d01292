package main

import (
	"bytes"
	"encoding/json"
	"net/netip"
	"reflect"
	"strings"
	"testing"

	"github.com/netagent/netagent/agent/host"
	"github.com/netagent/netagent/agent/oneshot"
	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/items"
	"github.com/netagent/netagent/reconciler"
)

// disruptionSample is a plan that recreates a vxlan with a route on it,
// moves a gateway, and takes a bridge's last port away.
func disruptionSample() *host.PlanResult {
	vx := &items.Interface{IfName: "vx1", Kind: items.KindVxlan, AdminUp: true,
		Attrs: &items.VxlanAttrs{VNI: 200, Local: netip.MustParseAddr("192.0.2.10"), Remote: netip.MustParseAddr("192.0.2.20"), Port: 4789}}
	onVx := &items.Route{Dst: netip.MustParsePrefix("10.99.0.0/16"), Gw: netip.MustParseAddr("10.9.0.254")}
	def := &items.Route{Dst: netip.MustParsePrefix("0.0.0.0/0"), Gw: netip.MustParseAddr("192.0.2.2"), Dev: "uplink0", Metric: 100}
	port := &items.Port{IfName: "p2", Master: "br1", MasterKind: items.KindBridge}
	before := dg.New("current")
	before.Put(&items.Interface{IfName: "br2", Kind: items.KindBridge, AdminUp: true})
	before.Put(&items.Port{IfName: "p2", Master: "br2", MasterKind: items.KindBridge})
	before.Put(&items.Route{Dst: def.Dst, Gw: netip.MustParseAddr("192.0.2.1"), Dev: "uplink0", Metric: 100})
	ops := reconciler.OperationLog{
		{Ref: dg.Ref(onVx), Item: onVx, Op: reconciler.OpDelete, Recreate: true},
		{Ref: dg.Ref(vx), Item: vx, Op: reconciler.OpDelete, Recreate: true},
		{Ref: dg.Ref(vx), Item: vx, Op: reconciler.OpCreate, Recreate: true},
		{Ref: dg.Ref(onVx), Item: onVx, Op: reconciler.OpCreate, Recreate: true},
		{Ref: dg.Ref(def), Item: def, Op: reconciler.OpModify},
		{Ref: dg.Ref(port), Item: port, Op: reconciler.OpModify},
	}
	res := &host.PlanResult{Result: host.Result{Ops: ops}}
	res.Disruptions = host.PredictOps(ops, before)
	return res
}

// TestPlanDisruptionText: the summary heads the plan (links down and by
// which operations, routes withdrawn, protected links touched), and each
// operation says what it does to traffic.
func TestPlanDisruptionText(t *testing.T) {
	var out bytes.Buffer
	printPlanTextGuarded(&globals{stdout: &out}, disruptionSample(), []string{"uplink0"})
	got := out.String()
	for _, want := range []string{
		"disruption: link vx1 goes down (recreate): recreate interface/vx1\n" +
			"disruption: link br2 goes down (link down): modify port/p2\n" +
			"disruption: 1 route withdrawn: route/main 10.99.0.0/16 metric 0\n" +
			"disruption: protected links touched: uplink0\n" +
			"  1. delete route/main 10.99.0.0/16 metric 0 (recreate)\n",
		"  5. modify route/main 0.0.0.0/0 metric 100\n       route 0.0.0.0/0 via 192.0.2.2 dev uplink0 table main metric 100 scope global\n" +
			"       traffic: replaced atomically: replaced in place (NLM_F_REPLACE): no window\n",
		"traffic: recreate: the kernel cannot change the vxlan's settings in place",
		"traffic: link down: br2 loses its carrier: its last port leaves; moves from br2 to br1: released, then enslaved [down: br2]\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("plan text lacks\n%s\ngot:\n%s", want, got)
		}
	}
	out.Reset()
	printPlanText(&globals{stdout: &out}, &host.PlanResult{Result: host.Result{Ops: disruptionSample().Ops[4:5]}, Disruptions: disruptionSample().Disruptions[4:5]})
	if !strings.HasPrefix(out.String(), "disruption: none: no link goes down, no route or neighbour is withdrawn\n") {
		t.Errorf("a plan without disruption:\n%s", out.String())
	}
}

// TestPlanDisruptionJSON: plan --json has a "disruption" object naming the
// links that go down, the routes withdrawn and the protected links
// touched, and each operation its own "disruption".
func TestPlanDisruptionJSON(t *testing.T) {
	var out bytes.Buffer
	gd := &oneshot.Guarded{Guarded: &host.Guarded{Refused: []host.Refusal{{Link: "uplink0", Why: "x"}}}, Force: true}
	if err := printPlanJSONGuarded(&globals{stdout: &out}, disruptionSample(), gd); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Disruption struct {
			LinksDown []struct {
				Link, Effect string
				Certain      bool
				Operations   []string
			}
			RoutesWithdrawn  []struct{ Route, Effect, Cause string }
			ProtectedTouched []string
		}
		Operations []struct {
			Op, Item   string
			Disruption struct {
				Effect    string
				Certain   bool
				LinksDown []string
			}
		}
	}
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	d := doc.Disruption
	if len(d.LinksDown) != 2 || d.LinksDown[0].Link != "vx1" || d.LinksDown[0].Effect != "recreate" || !d.LinksDown[0].Certain ||
		!reflect.DeepEqual(d.LinksDown[0].Operations, []string{"recreate interface/vx1"}) || d.LinksDown[1].Link != "br2" || d.LinksDown[1].Effect != "down" {
		t.Errorf("linksDown: %+v", d.LinksDown)
	}
	if len(d.RoutesWithdrawn) != 1 || d.RoutesWithdrawn[0].Route != "route/main 10.99.0.0/16 metric 0" || d.RoutesWithdrawn[0].Effect != "withdrawn" {
		t.Errorf("routesWithdrawn: %+v", d.RoutesWithdrawn)
	}
	if !reflect.DeepEqual(d.ProtectedTouched, []string{"uplink0"}) {
		t.Errorf("protectedTouched: %v", d.ProtectedTouched)
	}
	effects := []string{"withdrawn", "recreate", "recreate", "withdrawn", "atomic", "down"}
	for i, o := range doc.Operations {
		if o.Disruption.Effect != effects[i] {
			t.Errorf("operation %d (%s %s): effect %q, want %q", i+1, o.Op, o.Item, o.Disruption.Effect, effects[i])
		}
	}
	// An empty plan still has the object, with empty lists: a stable shape.
	out.Reset()
	if err := printPlanJSON(&globals{stdout: &out}, &host.PlanResult{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), `"disruption": {
    "linksDown": [],
    "routesWithdrawn": [],
    "neighborsWithdrawn": [],
    "protectedTouched": []
  }`) {
		t.Errorf("empty plan:\n%s", out.String())
	}
}
