package main

import (
	"bytes"
	"encoding/json"
	"net/netip"
	"strings"
	"testing"

	"github.com/netagent/netagent/agent/runtime"
	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/items"
	"github.com/netagent/netagent/reconciler"
)

func planSample() *runtime.Result {
	route := &items.Route{Dst: netip.MustParsePrefix("10.0.0.0/8"), Dev: "br0", Scope: items.ScopeLink}
	br := &items.Interface{IfName: "br0", Kind: items.KindBridge, AdminUp: true}
	return &runtime.Result{
		Ops: reconciler.OperationLog{
			{Ref: dg.Ref(br), Item: br, Op: reconciler.OpDelete, Recreate: true},
			{Ref: dg.Ref(br), Item: br, Op: reconciler.OpCreate, Recreate: true},
			{Ref: dg.Ref(route), Item: route, Op: reconciler.OpCreate},
		},
		Problems: []runtime.Problem{{Ref: items.InterfaceRef("eth0"), Blocked: true, Reason: "waiting for link/eth0"}},
	}
}

// plan prints one numbered operation per line with the item under it, and
// the items that cannot be created now.
func TestPrintPlanText(t *testing.T) {
	var out bytes.Buffer
	printPlanText(&globals{stdout: &out}, planSample())
	want := `  1. delete interface/br0 (recreate)
       interface br0 bridge up
  2. create interface/br0 (recreate)
       interface br0 bridge up
  3. create route/main 10.0.0.0/8 metric 0
       route 10.0.0.0/8 dev br0 table main metric 0 scope link
  !  interface/eth0: blocked: waiting for link/eth0
`
	if out.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", out.String(), want)
	}
	out.Reset()
	printPlanText(&globals{stdout: &out}, &runtime.Result{})
	if !strings.HasPrefix(out.String(), "no changes") {
		t.Errorf("empty plan: %q", out.String())
	}
}

// plan --json lists the same operations, in order, as JSON.
func TestPrintPlanJSON(t *testing.T) {
	var out bytes.Buffer
	if code := printPlanJSON(&globals{stdout: &out}, planSample()); code != exitOK {
		t.Fatalf("exit %d", code)
	}
	var doc planJSON
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Operations) != 3 || doc.Operations[0] != (opJSON{Op: "delete", Item: "interface/br0", Recreate: true,
		Description: "interface br0 bridge up"}) || doc.Operations[2].Item != "route/main 10.0.0.0/8 metric 0" {
		t.Errorf("operations: %+v", doc.Operations)
	}
	if len(doc.Problems) != 1 || !doc.Problems[0].Blocked || doc.Problems[0].Item != "interface/eth0" {
		t.Errorf("problems: %+v", doc.Problems)
	}
	out.Reset()
	printPlanJSON(&globals{stdout: &out}, &runtime.Result{})
	if !strings.Contains(out.String(), `"operations": []`) {
		t.Errorf("an empty plan is not an empty list: %s", out.String())
	}
}
