package main

import (
	"bytes"
	"encoding/json"
	"errors"
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
plan: 3 operations; 1 items would not converge (predicted to fail or blocked)
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

// planClash is the plan of a bridge whose name a foreign link has: the
// create is predicted to fail, with the configurator's error, and the
// address on the bridge is blocked.
func planClash() *runtime.Result {
	br := &items.Interface{IfName: "br1", Kind: items.KindBridge, AdminUp: true}
	errClash := errors.New("creating bridge br1: link exists and is not owned by netagent")
	return &runtime.Result{
		Ops: reconciler.OperationLog{{Ref: dg.Ref(br), Item: br, Op: reconciler.OpCreate, Err: errClash}},
		Problems: []runtime.Problem{
			{Ref: items.AddressRef("br1", netip.MustParsePrefix("10.1.0.1/24")), Blocked: true, Reason: "waiting for interface/br1 (failed: ...)"},
			{Ref: dg.Ref(br), Reason: "create failed: " + errClash.Error()},
		},
		Err: errClash,
	}
}

// A plan with an operation predicted to fail shows the operation with its
// error and the item as predicted to fail; a plan with no operation but
// something blocked or failing is not "no changes".
func TestPrintPlanPredictedFailure(t *testing.T) {
	var out bytes.Buffer
	printPlanText(&globals{stdout: &out}, planClash())
	want := `  1. create interface/br1: creating bridge br1: link exists and is not owned by netagent
       interface br1 bridge up
  !  address/br1/10.1.0.1/24: blocked: waiting for interface/br1 (failed: ...)
  !  interface/br1: predicted to fail: create failed: creating bridge br1: link exists and is not owned by netagent
plan: 1 operations; 2 items would not converge (predicted to fail or blocked)
`
	if out.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", out.String(), want)
	}
	for _, res := range []*runtime.Result{
		{Problems: planClash().Problems},
		{Problems: planSample().Problems},
		{Err: errors.New("cycle: interface/a")},
	} {
		out.Reset()
		printPlanText(&globals{stdout: &out}, res)
		if strings.Contains(out.String(), "no changes") {
			t.Errorf("plan with problems %v says:\n%s", res.Problems, out.String())
		}
	}

	out.Reset()
	if err := printPlanJSON(&globals{stdout: &out}, planClash()); err != nil {
		t.Fatal(err)
	}
	var doc planJSON
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Operations) != 1 || !strings.Contains(doc.Operations[0].Error, "not owned by netagent") {
		t.Errorf("operations: %+v", doc.Operations)
	}
	if len(doc.Problems) != 2 || doc.Problems[1].State != "predicted to fail" || doc.Problems[1].Blocked ||
		!strings.Contains(doc.Problems[1].Reason, "not owned") || doc.Problems[0].State != "blocked" {
		t.Errorf("problems: %+v", doc.Problems)
	}
}

// plan --json lists the same operations, in order, as JSON.
func TestPrintPlanJSON(t *testing.T) {
	var out bytes.Buffer
	if err := printPlanJSON(&globals{stdout: &out}, planSample()); err != nil {
		t.Fatal(err)
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
