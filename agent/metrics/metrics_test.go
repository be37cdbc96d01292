package metrics

import (
	"bytes"
	"errors"
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/reconciler"
)

var t0 = time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)

func scrape(t *testing.T, m *Metrics) map[string]float64 {
	t.Helper()
	var b bytes.Buffer
	if err := m.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	v, err := ParseText(&b)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func want(t *testing.T, got map[string]float64, name string, v float64) {
	t.Helper()
	g, ok := got[name]
	if !ok {
		t.Errorf("%s: missing", name)
		return
	}
	if g != v {
		t.Errorf("%s = %v, want %v", name, g, v)
	}
}

func entry(typ, name string, op reconciler.Operation, d time.Duration, err, prev error) reconciler.OpLogEntry {
	return reconciler.OpLogEntry{Ref: dg.ItemRef{Type: typ, Name: name}, Op: op, Start: t0, End: t0.Add(d), Err: err, PrevErr: prev}
}

// TestOperationLog feeds a fake operation log: operations count by kind,
// op and outcome, with their durations in the histogram; a background
// operation counts only when a later log has it finished; an operation
// on a failed item is a retry; reconciles count under each reason.
func TestOperationLog(t *testing.T) {
	m := New()
	boom := errors.New("boom")
	m.ObserveReconcile([]string{"start"}, t0, t0.Add(30*time.Millisecond), reconciler.OperationLog{
		entry("route", "a", reconciler.OpCreate, 200*time.Microsecond, nil, nil),
		entry("route", "b", reconciler.OpCreate, 3*time.Millisecond, nil, nil),
		entry("address", "x", reconciler.OpModify, time.Millisecond, boom, nil),
		{Ref: dg.ItemRef{Type: "dhcp", Name: "eth0"}, Op: reconciler.OpCreate, Start: t0, InProgress: true},
	})
	m.ObserveReconcile([]string{"retry", "link"}, t0, t0.Add(2*time.Millisecond), reconciler.OperationLog{
		entry("address", "x", reconciler.OpModify, time.Millisecond, nil, boom),
		entry("dhcp", "eth0", reconciler.OpCreate, 4*time.Second, nil, nil),
	})
	got := scrape(t, m)
	want(t, got, `netagent_reconciles_total{reason="start"}`, 1)
	want(t, got, `netagent_reconciles_total{reason="retry"}`, 1)
	want(t, got, `netagent_reconciles_total{reason="link"}`, 1)
	want(t, got, `netagent_reconcile_duration_seconds_count`, 2)
	want(t, got, `netagent_reconcile_duration_seconds_bucket{le="0.0025"}`, 1)
	want(t, got, `netagent_kernel_operations_total{kind="route",op="create",outcome="success"}`, 2)
	want(t, got, `netagent_kernel_operations_total{kind="address",op="modify",outcome="failure"}`, 1)
	want(t, got, `netagent_kernel_operations_total{kind="address",op="modify",outcome="success"}`, 1)
	want(t, got, `netagent_kernel_operations_total{kind="dhcp",op="create",outcome="success"}`, 1)
	want(t, got, `netagent_kernel_operation_duration_seconds_bucket{kind="route",op="create",outcome="success",le="0.00025"}`, 1)
	want(t, got, `netagent_kernel_operation_duration_seconds_bucket{kind="route",op="create",outcome="success",le="0.005"}`, 2)
	want(t, got, `netagent_kernel_operation_duration_seconds_count{kind="dhcp",op="create",outcome="success"}`, 1)
	want(t, got, `netagent_kernel_operation_duration_seconds_sum{kind="dhcp",op="create",outcome="success"}`, 4)
	want(t, got, `netagent_item_retries_total{kind="address"}`, 1)
	if _, ok := got[`netagent_item_retries_total{kind="route"}`]; ok {
		t.Error("a first create counted as a retry")
	}
}

// TestDrift: what a check found counts by kind; what it repairs counts as
// repaired when an operation on the item succeeds, once; what it holds,
// or what fails, does not; the next check starts again.
func TestDrift(t *testing.T) {
	m := New()
	a, b, c := dg.ItemRef{Type: "link", Name: "a"}, dg.ItemRef{Type: "route", Name: "b"}, dg.ItemRef{Type: "sysctl", Name: "c"}
	m.ObserveDrift([]Finding{{Ref: a, Repair: true}, {Ref: b, Repair: true}, {Ref: c}})
	m.ObserveReconcile([]string{"drift"}, t0, t0, reconciler.OperationLog{
		entry("link", "a", reconciler.OpModify, time.Millisecond, nil, nil),
		entry("route", "b", reconciler.OpCreate, time.Millisecond, errors.New("no"), nil),
		entry("sysctl", "c", reconciler.OpModify, time.Millisecond, nil, nil),
	})
	m.ObserveReconcile([]string{"retry"}, t0, t0, reconciler.OperationLog{
		entry("link", "a", reconciler.OpModify, time.Millisecond, nil, nil), // not drift any more
	})
	got := scrape(t, m)
	want(t, got, `netagent_drift_found_total{kind="link"}`, 1)
	want(t, got, `netagent_drift_found_total{kind="route"}`, 1)
	want(t, got, `netagent_drift_found_total{kind="sysctl"}`, 1)
	want(t, got, `netagent_drift_repaired_total{kind="link"}`, 1)
	if _, ok := got[`netagent_drift_repaired_total{kind="route"}`]; ok {
		t.Error("a failed repair counted")
	}
	if _, ok := got[`netagent_drift_repaired_total{kind="sysctl"}`]; ok {
		t.Error("a held difference counted as repaired")
	}
	m.ObserveReconcile([]string{"retry"}, t0, t0, reconciler.OperationLog{
		entry("route", "b", reconciler.OpCreate, time.Millisecond, nil, errors.New("no")),
	})
	want(t, scrape(t, m), `netagent_drift_repaired_total{kind="route"}`, 1)

	m.ObserveDrift(nil) // the next check: b was repaired, a is not pending
	m.ObserveReconcile([]string{"api"}, t0, t0, reconciler.OperationLog{entry("route", "b", reconciler.OpDelete, 0, nil, nil)})
	want(t, scrape(t, m), `netagent_drift_repaired_total{kind="route"}`, 1)
}

// TestSnapshot: the gauges show the last snapshot, every trial state
// always present; a trial's end counts once, not the one before the start.
func TestSnapshot(t *testing.T) {
	m := New()
	before := &TrialEnd{Result: "reverted", At: t0.Add(-time.Hour)}
	m.Publish(Snapshot{Items: map[string]int{"created": 3, "failed": 1, "blocked": 2}, Blocked: 2, Version: 7,
		LastReconcile: t0, LastTrial: before})
	got := scrape(t, m)
	want(t, got, `netagent_items{state="created"}`, 3)
	want(t, got, `netagent_items{state="failed"}`, 1)
	want(t, got, `netagent_blocked_items`, 2)
	want(t, got, `netagent_intent_version`, 7)
	want(t, got, `netagent_last_reconcile_timestamp_seconds`, float64(t0.Unix()))
	want(t, got, `netagent_last_converged_reconcile_timestamp_seconds`, 0)
	want(t, got, `netagent_trial_state{state="none"}`, 1)
	want(t, got, `netagent_trial_state{state="pending"}`, 0)
	want(t, got, `netagent_trials_total{result="reverted"}`, 0)
	want(t, got, `netagent_trials_total{result="confirmed"}`, 0)

	dl := t0.Add(time.Minute)
	m.Publish(Snapshot{Items: map[string]int{"created": 4, "failed": 0}, LastConverged: t0, Trial: TrialPending, TrialDeadline: dl, LastTrial: before})
	got = scrape(t, m)
	want(t, got, `netagent_items{state="failed"}`, 0)
	want(t, got, `netagent_blocked_items`, 0)
	want(t, got, `netagent_last_converged_reconcile_timestamp_seconds`, float64(t0.Unix()))
	want(t, got, `netagent_trial_state{state="none"}`, 0)
	want(t, got, `netagent_trial_state{state="pending"}`, 1)
	want(t, got, `netagent_trial_deadline_timestamp_seconds`, float64(dl.Unix()))
	want(t, got, `netagent_trials_total{result="reverted"}`, 0)

	end := &TrialEnd{Result: "confirmed", At: t0.Add(time.Second)}
	m.Publish(Snapshot{LastTrial: end})
	m.Publish(Snapshot{LastTrial: end})
	got = scrape(t, m)
	want(t, got, `netagent_trials_total{result="confirmed"}`, 1)
	want(t, got, `netagent_trial_state{state="none"}`, 1)
}

// TestHandler: the HTTP handler serves the text format; two Metrics in
// one process do not share values.
func TestHandler(t *testing.T) {
	m, other := New(), New()
	m.ObserveReconcile([]string{"start"}, t0, t0, nil)
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if rec.Code != 200 || !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/plain") {
		t.Fatalf("code %d, content type %q", rec.Code, rec.Header().Get("Content-Type"))
	}
	body, _ := io.ReadAll(rec.Body)
	got, err := ParseText(bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	want(t, got, `netagent_reconciles_total{reason="start"}`, 1)
	for _, line := range []string{"# TYPE netagent_reconcile_duration_seconds histogram", "# HELP netagent_reconciles_total "} {
		if !strings.Contains(string(body), line) {
			t.Errorf("no %q in:\n%s", line, body)
		}
	}
	if _, ok := scrape(t, other)[`netagent_reconciles_total{reason="start"}`]; ok {
		t.Error("a second Metrics sees the first one's counts")
	}
}
