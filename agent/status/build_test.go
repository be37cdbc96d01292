package status

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/netagent/netagent/agent/host"
	"github.com/netagent/netagent/agent/intent"
	"github.com/netagent/netagent/agent/render"
	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/items"
	"github.com/netagent/netagent/reconciler"
)

func sysctl(key, value string) *items.Sysctl { return &items.Sysctl{Key: key, Value: value} }

var (
	okRef      = dg.Ref(sysctl("net.ok", ""))
	failedRef  = dg.Ref(sysctl("net.failed", ""))
	blockedRef = dg.Ref(sysctl("net.blocked", ""))
	t0         = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
)

// handMade is a snapshot of two documents after one reconcile: a.json
// holds a created item, a failed one (twice in a row) and a blocked one;
// b.json is rejected, keeping the version accepted at t0.
func handMade() *Snapshot {
	intended, current := dg.New("intended"), dg.New("current")
	a := intended.EditSubGraph(render.SubgraphName("a.json"))
	for _, it := range []dg.Item{sysctl("net.ok", "1"), sysctl("net.failed", "1"), sysctl("net.blocked", "1")} {
		a.Put(it)
	}
	current.PutWithState(sysctl("net.ok", "1"), dg.StateData{State: dg.StateCreated})
	current.PutWithState(sysctl("net.failed", "0"), dg.StateData{State: dg.StateFailed, LastOp: dg.OpModify,
		LastErr: errors.New("EPERM")})
	rec := reconciler.RestoreRecords(reconciler.SavedRecords{
		Failed:  []reconciler.SavedFailure{{Type: failedRef.Type, Name: failedRef.Name, Op: "modify", Count: 2, At: t0}},
		Blocked: []reconciler.SavedBlock{{Type: blockedRef.Type, Name: blockedRef.Name, Reason: "needs net.ok", Since: t0}},
	})
	return &Snapshot{
		Docs: map[string]Document{
			"a.json": {Source: "dir", AcceptedAt: t0},
			"b.json": {Source: "dir", Errors: []string{"bad", "worse"}, Kept: true, AcceptedAt: t0},
		},
		Intended: intended, Current: current,
		Records: Records{Reconciler: rec, Verifier: host.NewVerifier()},
		Runs:    1, LastReconcile: t0,
	}
}

func condOf(t *testing.T, cs []Condition, typ string) Condition {
	t.Helper()
	for _, c := range cs {
		if c.Type == typ {
			return c
		}
	}
	t.Fatalf("no condition %s in %+v", typ, cs)
	return Condition{}
}

// TestBuildOverAHandMadeSnapshot: the items' states, the documents'
// conditions and the agent's follow from the snapshot alone.
func TestBuildOverAHandMadeSnapshot(t *testing.T) {
	in := handMade()
	st, _ := Build(in, Memo{}, t0)
	states := map[string]string{}
	for _, is := range st.Items {
		states[is.Item] = is.State
		if is.Ref == failedRef && (is.Failures != 2 || is.LastError != "EPERM" || is.LastOp != "modify") {
			t.Errorf("failed item %+v", is)
		}
		if is.Ref == blockedRef && (is.BlockedOn != "needs net.ok" || !is.Since.Equal(t0)) {
			t.Errorf("blocked item %+v", is)
		}
	}
	want := map[string]string{okRef.String(): "created", failedRef.String(): "failed", blockedRef.String(): StateBlocked}
	if fmt.Sprint(states) != fmt.Sprint(want) {
		t.Errorf("states %v, want %v", states, want)
	}
	if len(st.Files) != 2 || st.Files[0].Name != "a.json" || st.Files[0].Items != 3 {
		t.Fatalf("files %+v", st.Files)
	}
	a, b := st.Files[0].Conditions, st.Files[1].Conditions
	if c := condOf(t, a, CondConverged); c.Status || c.Reason != "ItemsNotCreated" || c.Message != "1 blocked, 1 failed" {
		t.Errorf("a.json converged %+v", c)
	}
	if c := condOf(t, a, CondDegraded); !c.Status || c.Reason != "ItemsFailed" || !strings.HasPrefix(c.Message, blockedRef.String()) {
		t.Errorf("a.json degraded %+v (the first bad item in ref order)", c)
	}
	if c := condOf(t, b, CondValid); c.Status || c.Reason != "Rejected" ||
		c.Message != "2 problem(s): bad (and 1 more); keeping the version accepted at "+t0.Format(time.RFC3339) {
		t.Errorf("b.json valid %+v", c)
	}
	if c := condOf(t, st.Conditions, CondReady); st.Ready || c.Status || c.Reason != "DocumentNotReady" {
		t.Errorf("agent ready %v %+v", st.Ready, c)
	}
	if c := condOf(t, st.Conditions, CondDegraded); !c.Status || c.Reason != "ItemsFailed" || !strings.HasPrefix(c.Message, "a.json: ") {
		t.Errorf("agent degraded %+v", c)
	}
	if got, want := Line(in), "1 failed, 1 blocked (1 reconciles)"; got != want {
		t.Errorf("line %q, want %q", got, want)
	}
}

// TestMemoKeepsSinceAndIsNotChanged: a condition keeps its Since while
// its status stays and takes the build's time when it flips; the memo
// given is never written, a document gone is forgotten.
func TestMemoKeepsSinceAndIsNotChanged(t *testing.T) {
	in := handMade()
	_, m1 := Build(in, Memo{}, t0)
	n1 := len(m1)
	t1 := t0.Add(time.Minute)
	_, m2 := Build(in, m1, t1)
	if len(m1) != n1 {
		t.Errorf("the memo given changed: %d entries, had %d", len(m1), n1)
	}
	if c := m2[memoKey{"a.json", CondDegraded}]; !c.Since.Equal(t0) {
		t.Errorf("a steady condition's Since %v, want %v", c.Since, t0)
	}
	d := in.Docs["b.json"]
	d.Errors, d.Kept = nil, false
	in.Docs["b.json"] = d
	_, m3 := Build(in, m2, t1)
	if c := m3[memoKey{"b.json", CondValid}]; !c.Status || !c.Since.Equal(t1) {
		t.Errorf("a flipped condition %+v, want since %v", c, t1)
	}
	delete(in.Docs, "b.json")
	tallies, m4 := Observe(in, m3, t1)
	if _, ok := m4[memoKey{"b.json", CondValid}]; ok {
		t.Error("the memo keeps a document gone")
	}
	if _, ok := m4[memoKey{"", CondReady}]; !ok {
		t.Error("Observe forgot the agent's own conditions")
	}
	if n := tallies.ByState(); n["failed"] != 1 || n[StateBlocked] != 1 || n["created"] != 1 || n[StateOrphaned] != 0 || Converged(n) {
		t.Errorf("counts by state %v", n)
	}
}

// TestAgentConditionsOfNotes: a source that cannot be reached degrades
// the agent; none read yet, it is not started.
func TestAgentConditionsOfNotes(t *testing.T) {
	in := &Snapshot{Notes: Notes{Sources: map[string]string{"etcd": "intent source unreachable: down", "dir": "EACCES"},
		Unreachable: map[string]bool{"etcd": true}, Intent: "rendering: oops"},
		Current: dg.New("current"), Intended: dg.New("intended"),
		Records: Records{Reconciler: reconciler.NewRecords(), Verifier: host.NewVerifier()}}
	ready, degraded := AgentConditions(in, Memo{})
	if ready.Status || ready.Reason != "SourceNotRead" || ready.Message != "source dir: EACCES" {
		t.Errorf("ready %+v", ready)
	}
	if !degraded.Status || degraded.Reason != ReasonSourceUnreachable || degraded.Message != "source etcd: intent source unreachable: down" {
		t.Errorf("degraded %+v", degraded)
	}
	if got := in.Notes.List(); len(got) != 3 || got[0] != "source dir: EACCES" || got[2] != "rendering: oops" {
		t.Errorf("notes %q", got)
	}
	in.Notes = Notes{}
	if ready, _ := AgentConditions(in, Memo{}); ready.Reason != "NotStarted" {
		t.Errorf("ready %+v before any reconcile", ready)
	}
}

// TestDifferingLeavesIgnoreItemsOut: an ignore item's difference is left
// out of the answer and of the operations; a report item's says so.
func TestDifferingLeavesIgnoreItemsOut(t *testing.T) {
	intended := dg.New("intended", sysctl("net.a", "1"), sysctl("net.b", "1"))
	ra, rb := dg.Ref(sysctl("net.a", "")), dg.Ref(sysctl("net.b", ""))
	rep := &host.Report{Diffs: []host.Difference{
		{Ref: ra, Kind: host.Differs, Fields: []host.FieldDiff{{Field: "Value", Want: "1", Have: "0"}}},
		{Ref: rb, Kind: host.Differs},
	}}
	pol := render.DriftPolicies{ra: intent.DriftReport, rb: intent.DriftIgnore}
	out, ignored := Differing(rep, intended, pol)
	if len(out) != 1 || out[0].Item != ra.String() || out[0].Policy != intent.DriftReport || len(out[0].Fields) != 1 || !ignored[rb] {
		t.Errorf("differing %+v, ignored %v", out, ignored)
	}
	log := reconciler.OperationLog{{Ref: ra}, {Ref: rb}}
	if got := WithoutOps(log, ignored); len(got) != 1 || got[0].Ref != ra {
		t.Errorf("operations %+v", got)
	}
}
