package agent

import (
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/netagent/netagent/agent/api"
	"github.com/netagent/netagent/agent/metrics"
	"github.com/netagent/netagent/agent/status"
	dg "github.com/netagent/netagent/depgraph"
)

// scrape reads the agent's metrics over HTTP (the handler of
// --metrics-listen) and over the socket API's metrics command, checks
// that both say the same, and returns them.
func (r *rig) scrape() map[string]float64 {
	r.t.Helper()
	rec := httptest.NewRecorder()
	r.a.Metrics().Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if rec.Code != 200 {
		r.t.Fatalf("GET /metrics: %d %s", rec.Code, rec.Body)
	}
	overHTTP, err := metrics.ParseText(rec.Body)
	if err != nil {
		r.t.Fatal(err)
	}
	resp := r.call(api.Request{Command: api.CmdMetrics})
	if resp.Error != "" {
		r.t.Fatalf("metrics: %s", resp.Error)
	}
	overSocket, err := metrics.ParseText(strings.NewReader(resp.Metrics))
	if err != nil {
		r.t.Fatal(err)
	}
	for k, v := range overHTTP {
		if overSocket[k] != v {
			r.t.Errorf("%s: %v over HTTP, %v over the socket", k, v, overSocket[k])
		}
	}
	return overHTTP
}

func wantMetric(t *testing.T, got map[string]float64, name string, want float64) {
	t.Helper()
	if v, ok := got[name]; !ok || v != want {
		t.Errorf("%s = %v (present %v), want %v", name, v, ok, want)
	}
}

// wantItemsAsStatus checks netagent_items against the states status lists.
func (r *rig) wantItemsAsStatus(got map[string]float64) {
	r.t.Helper()
	byState := status.ZeroStates()
	for _, it := range r.status().Items {
		byState[it.State]++
	}
	for state, n := range byState {
		wantMetric(r.t, got, `netagent_items{state="`+state+`"}`, float64(n))
	}
}

// TestMetricsFollowTheKernel scrapes the agent while the fake kernel
// changes under it: reconciles count by reason, operations by kind, op
// and outcome; a failing address (the route needs it) raises the failure
// counter, the failed and blocked gauges and, retried, the retry counter;
// a link losing its carrier is a "link" reconcile that blocks the route;
// drift made by hand is found and repaired; the last converged reconcile
// moves only when everything is in place.
func TestMetricsFollowTheKernel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, baseDocs(), func(c *Config) { c.DriftInterval = time.Minute; c.StateDir = t.TempDir() }).start()
		got := r.scrape()
		wantMetric(t, got, `netagent_reconciles_total{reason="start"}`, 1)
		wantMetric(t, got, `netagent_reconcile_duration_seconds_count`, 1)
		wantMetric(t, got, `netagent_kernel_operations_total{kind="route",op="create",outcome="success"}`, 1)
		wantMetric(t, got, `netagent_kernel_operations_total{kind="address",op="create",outcome="success"}`, 1)
		wantMetric(t, got, `netagent_kernel_operation_duration_seconds_count{kind="route",op="create",outcome="success"}`, 1)
		wantMetric(t, got, `netagent_blocked_items`, 0)
		wantMetric(t, got, `netagent_items{state="failed"}`, 0)
		wantMetric(t, got, `netagent_intent_version`, float64(r.status().Version))
		wantMetric(t, got, `netagent_trial_state{state="none"}`, 1)
		r.wantItemsAsStatus(got)
		if got[`netagent_intent_version`] < 1 {
			t.Errorf("intent version %v", got[`netagent_intent_version`])
		}
		converged := got[`netagent_last_converged_reconcile_timestamp_seconds`]
		if converged == 0 || converged != got[`netagent_last_reconcile_timestamp_seconds`] {
			t.Errorf("last converged %v, last reconcile %v", converged, got[`netagent_last_reconcile_timestamp_seconds`])
		}

		// The address fails, twice: the route that needs it is blocked.
		time.Sleep(2 * time.Second) // past the check that verifies the first reconcile
		synctest.Wait()
		r.k.failNext(addrRef, 2)
		r.k.tamper(func(objs map[dg.ItemRef]dg.Item) { delete(objs, addrRef) })
		time.Sleep(59*time.Second + 10*time.Millisecond) // just after the check at 61 s, before the first retry (75 ms)
		synctest.Wait()
		got = r.scrape()
		wantMetric(t, got, `netagent_drift_found_total{kind="address"}`, 1)
		wantMetric(t, got, `netagent_reconciles_total{reason="drift"}`, 1)
		wantMetric(t, got, `netagent_kernel_operations_total{kind="address",op="create",outcome="failure"}`, 1)
		wantMetric(t, got, `netagent_items{state="failed"}`, 1)
		wantMetric(t, got, `netagent_blocked_items`, 1)
		wantMetric(t, got, `netagent_items{state="blocked"}`, 1)
		r.wantItemsAsStatus(got)
		if _, ok := got[`netagent_drift_repaired_total{kind="address"}`]; ok {
			t.Error("a failed repair counted as repaired")
		}
		if got[`netagent_last_converged_reconcile_timestamp_seconds`] != converged {
			t.Error("a reconcile that left a failed item counted as converged")
		}
		time.Sleep(time.Second) // two retries: one fails, the other repairs
		synctest.Wait()
		got = r.scrape()
		wantMetric(t, got, `netagent_reconciles_total{reason="retry"}`, 2)
		wantMetric(t, got, `netagent_kernel_operations_total{kind="address",op="create",outcome="failure"}`, 2)
		wantMetric(t, got, `netagent_kernel_operations_total{kind="address",op="create",outcome="success"}`, 2)
		wantMetric(t, got, `netagent_item_retries_total{kind="address"}`, 2)
		wantMetric(t, got, `netagent_drift_repaired_total{kind="address"}`, 1)
		wantMetric(t, got, `netagent_items{state="failed"}`, 0)
		wantMetric(t, got, `netagent_blocked_items`, 0)
		r.wantItemsAsStatus(got)
		if c := got[`netagent_last_converged_reconcile_timestamp_seconds`]; c <= converged {
			t.Errorf("converged again, but the last converged reconcile is still %v", c)
		}

		// The uplink loses its carrier: a link reconcile withdraws the route.
		deletes := got[`netagent_kernel_operations_total{kind="route",op="delete",outcome="success"}`]
		r.k.setLink(uplink(2, false))
		r.linkEvent("uplink0")
		time.Sleep(DefaultLinkDebounce + time.Millisecond)
		synctest.Wait()
		got = r.scrape()
		wantMetric(t, got, `netagent_reconciles_total{reason="link"}`, 1)
		wantMetric(t, got, `netagent_kernel_operations_total{kind="route",op="delete",outcome="success"}`, deletes+1)
		wantMetric(t, got, `netagent_blocked_items`, 1)
		r.wantItemsAsStatus(got)
	})
}

// TestMetricsTrialState: a pending trial shows with its deadline; its
// end counts by result.
func TestMetricsTrialState(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newTrialRig(t)
		resp := r.call(api.Request{Command: api.CmdTry, Intent: json.RawMessage(twoRoutesDoc), Timeout: "30s"})
		if resp.Error != "" {
			t.Fatalf("try: %+v", resp)
		}
		got := r.scrape()
		wantMetric(t, got, `netagent_trial_state{state="pending"}`, 1)
		wantMetric(t, got, `netagent_trial_state{state="none"}`, 0)
		wantMetric(t, got, `netagent_trial_deadline_timestamp_seconds`, float64(resp.Status.Trial.Deadline.UnixNano())/1e9)
		wantMetric(t, got, `netagent_reconciles_total{reason="try"}`, 1)
		time.Sleep(31 * time.Second) // not confirmed: reverts
		synctest.Wait()
		got = r.scrape()
		wantMetric(t, got, `netagent_trial_state{state="none"}`, 1)
		wantMetric(t, got, `netagent_trial_deadline_timestamp_seconds`, 0)
		wantMetric(t, got, `netagent_trials_total{result="reverted"}`, 1)
		wantMetric(t, got, `netagent_trials_total{result="confirmed"}`, 0)
		wantMetric(t, got, `netagent_reconciles_total{reason="try"}`, 2)
	})
}
