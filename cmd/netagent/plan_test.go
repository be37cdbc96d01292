package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/netip"
	"strings"
	"testing"

	"github.com/netagent/netagent/agent/host"
	"github.com/netagent/netagent/agent/oneshot"
	"github.com/netagent/netagent/configurators"
	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/items"
	"github.com/netagent/netagent/reconciler"
)

func planSample() *host.PlanResult {
	route := &items.Route{Dst: netip.MustParsePrefix("10.0.0.0/8"), Dev: "br0", Scope: items.ScopeLink}
	br := &items.Interface{IfName: "br0", Kind: items.KindBridge, AdminUp: true}
	return &host.PlanResult{Result: host.Result{
		Ops: reconciler.OperationLog{
			{Ref: dg.Ref(br), Item: br, Op: reconciler.OpDelete, Recreate: true},
			{Ref: dg.Ref(br), Item: br, Op: reconciler.OpCreate, Recreate: true},
			{Ref: dg.Ref(route), Item: route, Op: reconciler.OpCreate},
		},
		Problems: []host.Problem{{Ref: items.InterfaceRef("eth0"), Blocked: true, WaitsOnLink: true, Reason: "waiting for link/eth0"}},
	}}
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
  ~  while items wait for a link, apply waits for link events (up to --wait) and converges again at each
plan: 3 operations; 1 item would not converge (predicted to fail or blocked)
`
	if out.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", out.String(), want)
	}
	out.Reset()
	printPlanText(&globals{stdout: &out}, &host.PlanResult{})
	if !strings.HasPrefix(out.String(), "no changes") {
		t.Errorf("empty plan: %q", out.String())
	}
}

// planClash is the plan of a bridge whose name a foreign link has: the
// create is predicted to fail, with the configurator's error, and the
// address on the bridge is blocked.
func planClash() *host.PlanResult {
	br := &items.Interface{IfName: "br1", Kind: items.KindBridge, AdminUp: true}
	errClash := errors.New("creating bridge br1: link exists and is not owned by netagent")
	return &host.PlanResult{Result: host.Result{
		Ops: reconciler.OperationLog{{Ref: dg.Ref(br), Item: br, Op: reconciler.OpCreate, Err: errClash}},
		Problems: []host.Problem{
			{Ref: items.AddressRef("br1", netip.MustParsePrefix("10.1.0.1/24")), Blocked: true, Reason: "waiting for interface/br1 (failed: ...)"},
			{Ref: dg.Ref(br), Reason: "create failed: " + errClash.Error()},
		},
		Err: errClash,
	}}
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
plan: 1 operation; 2 items would not converge (predicted to fail or blocked)
`
	if out.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", out.String(), want)
	}
	for _, res := range []*host.PlanResult{
		{Result: host.Result{Problems: planClash().Problems}},
		{Result: host.Result{Problems: planSample().Problems}},
		{Result: host.Result{Err: errors.New("cycle: interface/a")}},
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
	var doc oneshot.PlanDoc
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
	var doc oneshot.PlanDoc
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Operations) != 3 || doc.Operations[0] != (oneshot.OpDoc{Op: "delete", Item: "interface/br0", Recreate: true,
		Description: "interface br0 bridge up", Pass: 1}) || doc.Operations[2].Item != "route/main 10.0.0.0/8 metric 0" {
		t.Errorf("operations: %+v", doc.Operations)
	}
	if len(doc.Problems) != 1 || !doc.Problems[0].Blocked || doc.Problems[0].Item != "interface/eth0" {
		t.Errorf("problems: %+v", doc.Problems)
	}
	out.Reset()
	printPlanJSON(&globals{stdout: &out}, &host.PlanResult{})
	if !strings.Contains(out.String(), `"operations": []`) {
		t.Errorf("an empty plan is not an empty list: %s", out.String())
	}
}

// A plan with a follow-up pass marks where it starts, in the text and in
// the JSON, and prints the side effects that cause it.
func TestPrintPlanFollowUpPass(t *testing.T) {
	all := &items.Sysctl{Key: "net.ipv4.conf.all.forwarding", Value: "0"}
	eth := &items.Sysctl{Key: "net.ipv4.conf.eth0.forwarding", Value: "1"}
	nb := &items.Neighbor{Dev: "br0", IP: netip.MustParseAddr("10.0.0.9"), MAC: []byte{2, 0, 0, 0, 0, 9}}
	res := &host.PlanResult{
		Result: host.Result{Ops: reconciler.OperationLog{
			{Ref: dg.Ref(all), Item: all, Op: reconciler.OpModify},
			{Ref: dg.Ref(eth), Item: eth, Op: reconciler.OpModify},
		}},
		FollowUps: []int{1},
		SideEffects: []configurators.SideEffect{
			{Ref: dg.Ref(eth), Cause: "modify sysctl/net.ipv4.conf.all.forwarding", Reason: "writing it sets every ipv4 interface's forwarding to 0", Certain: true},
			{Ref: dg.Ref(nb), Cause: "delete port/lan0", Reason: "br0 may change its MAC"},
		},
	}
	var out bytes.Buffer
	printPlanText(&globals{stdout: &out}, res)
	want := `  1. modify sysctl/net.ipv4.conf.all.forwarding
       sysctl net.ipv4.conf.all.forwarding = 0
  -- pass 2: apply reads the kernel back and writes again what it changed by itself:
  2. modify sysctl/net.ipv4.conf.eth0.forwarding
       sysctl net.ipv4.conf.eth0.forwarding = 1
  ~  sysctl/net.ipv4.conf.eth0.forwarding: changed by the kernel after "modify sysctl/net.ipv4.conf.all.forwarding": writing it sets every ipv4 interface's forwarding to 0; a follow-up pass writes it again
  ~  neighbor/br0/10.0.0.9: may be changed by the kernel after "delete port/lan0": br0 may change its MAC; apply then runs a follow-up pass to write it again
plan: 2 operations in 2 passes
`
	if out.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", out.String(), want)
	}
	out.Reset()
	if err := printPlanJSON(&globals{stdout: &out}, res); err != nil {
		t.Fatal(err)
	}
	var doc oneshot.PlanDoc
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Operations) != 2 || doc.Operations[0].Pass != 1 || doc.Operations[1].Pass != 2 {
		t.Errorf("operations: %+v", doc.Operations)
	}
	if len(doc.SideEffects) != 2 || !doc.SideEffects[0].Certain || doc.SideEffects[1].Certain || doc.SideEffects[1].Cause != "delete port/lan0" {
		t.Errorf("side effects: %+v", doc.SideEffects)
	}
}

// plan --adopt prints each create that takes over someone else's object
// as "adopt (mark only)" or "adopt and modify", and --json says so in
// "adopt" (with the printed line in "text"); other operations as before.
func TestPrintPlanAdoptions(t *testing.T) {
	addr := &items.Address{Dev: "br0", Prefix: netip.MustParsePrefix("192.0.2.1/24")}
	route := &items.Route{Dst: netip.MustParsePrefix("10.0.0.0/8"), Dev: "br0", Scope: items.ScopeLink}
	other := &items.Route{Dst: netip.MustParsePrefix("10.9.0.0/16"), Dev: "br0", Scope: items.ScopeLink}
	res := &host.PlanResult{Result: host.Result{Ops: reconciler.OperationLog{
		{Ref: dg.Ref(addr), Item: addr, Op: reconciler.OpCreate},
		{Ref: dg.Ref(route), Item: route, Op: reconciler.OpCreate},
		{Ref: dg.Ref(other), Item: other, Op: reconciler.OpCreate},
	}}, Adoptions: map[dg.ItemRef]host.Adoption{
		dg.Ref(addr):  {Found: addr, MarkOnly: true},
		dg.Ref(route): {Found: &items.Route{Dst: route.Dst, Dev: "eth0"}},
	}}
	var out bytes.Buffer
	printPlanText(&globals{stdout: &out}, res)
	for _, want := range []string{"  1. adopt (mark only) address/br0/192.0.2.1/24\n", "  2. adopt and modify route/main 10.0.0.0/8 metric 0\n",
		"  3. create route/main 10.9.0.0/16 metric 0\n"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("plan text lacks %q:\n%s", want, out.String())
		}
	}
	out.Reset()
	if err := printPlanJSON(&globals{stdout: &out}, res); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Operations []struct{ Op, Adopt, Text string }
	}
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	got := []string{}
	for _, o := range doc.Operations {
		got = append(got, o.Op+"|"+o.Adopt+"|"+o.Text)
	}
	want := []string{"create|mark only|adopt (mark only) address/br0/192.0.2.1/24", "create|modify|adopt and modify route/main 10.0.0.0/8 metric 0", "create||"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("plan --json operations:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// plan prints each warning as a "~  warning:" line (escaped: a foreign
// table's name is another writer's bytes) before its summary, and plan
// --json lists them under "warnings" with their item.
func TestPrintPlanWarnings(t *testing.T) {
	tab := &items.NftTable{Family: "inet", Table: "netagent"}
	res := &host.PlanResult{Warnings: []configurators.Warning{{Ref: dg.Ref(tab), Text: "nftables: another owner's base chain ip/f\x1b[2J INPUT has policy drop"}}}
	var out bytes.Buffer
	printPlanText(&globals{stdout: &out}, res)
	want := "  ~  warning: nftables: another owner's base chain ip/f\\x1b[2J INPUT has policy drop\nno changes: the kernel already matches the intent\n"
	if out.String() != want {
		t.Errorf("got:\n%q\nwant:\n%q", out.String(), want)
	}
	out.Reset()
	if err := printPlanJSON(&globals{stdout: &out}, res); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Warnings []struct{ Item, Text string }
	}
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil || len(doc.Warnings) != 1 ||
		doc.Warnings[0].Item != "nft-table/inet/netagent" || !strings.Contains(doc.Warnings[0].Text, "policy drop") {
		t.Errorf("plan --json warnings: %v, %s", err, out.String())
	}
}
