//go:build !vmtest

package netns_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/netagent/netagent/agent/metrics"
)

// daemonMetricsUplink is the uplink with an MTU, so that an MTU set by
// hand is drift.
const daemonMetricsUplink = `{"version": 1,
  "interfaces": [{"name": "uplink0", "type": "physical", "mtu": 1450, "addresses": ["192.0.2.2/24"]}]}`

// TestAgentDaemonMetrics runs the daemon inside the namespace it manages
// (ip netns exec NAME netagent --netns NAME run), so that its
// --metrics-listen listener, which lives in the namespace the process runs
// in, is on the test namespace's loopback, never the host's. It scrapes
// /metrics over HTTP from inside that namespace and `netagent metrics`
// over the socket, and checks that the values move as the kernel does:
// drift made by hand (a route deleted, an MTU changed) is found and
// repaired, by kind; the uplink losing its carrier is a "link" reconcile
// that blocks the route.
func TestAgentDaemonMetrics(t *testing.T) {
	e := daemonNewEnv(t)
	e.wrap = []string{"ip", "netns", "exec", e.tgt.Name}
	e.writeIntent("10-uplink.json", daemonMetricsUplink)
	e.writeIntent("20-routes.json", daemonRoutesFile)
	e.start("--drift-interval", "1s", "--metrics-listen", "127.0.0.1:0")
	addr := e.metricsAddr()
	if ap, err := net.ResolveTCPAddr("tcp", addr); err != nil || !ap.IP.IsLoopback() || ap.Port == 0 {
		t.Fatalf("metrics address %q (%v)", addr, err)
	}

	got := e.scrapeHTTP(addr)
	for name, min := range map[string]float64{
		`netagent_reconciles_total{reason="start"}`:                                                    1,
		`netagent_kernel_operations_total{kind="route",op="create",outcome="success"}`:                 1,
		`netagent_kernel_operation_duration_seconds_count{kind="route",op="create",outcome="success"}`: 1,
		`netagent_items{state="created"}`:                                                              3,
		`netagent_intent_version`:                                                                      1,
		`netagent_last_converged_reconcile_timestamp_seconds`:                                          1,
		`netagent_trial_state{state="none"}`:                                                           1,
		`go_goroutines`:                                                                                1,
	} {
		if got[name] < min {
			t.Errorf("%s = %v, want at least %v", name, got[name], min)
		}
	}
	for _, name := range []string{`netagent_items{state="failed"}`, `netagent_blocked_items`, `netagent_trial_state{state="pending"}`} {
		if v, ok := got[name]; !ok || v != 0 {
			t.Errorf("%s = %v (present %v), want 0", name, v, ok)
		}
	}
	overSocket := e.scrapeSocket()
	if v := overSocket[`netagent_reconciles_total{reason="start"}`]; v != 1 {
		t.Errorf("netagent metrics: reconciles by start %v, want 1", v)
	}

	// Drift by hand: both found and repaired, by kind.
	before := e.scrapeHTTP(addr)
	e.ip("route", "del", "198.51.100.0/24", "via", "192.0.2.1", "dev", "uplink0", "metric", "10")
	e.ip("link", "set", "uplink0", "mtu", "1400")
	e.waitFor("the drift found and repaired in the metrics", func() (bool, string) {
		got := e.scrapeHTTP(addr)
		var seen []string
		ok := true
		for _, name := range []string{`netagent_drift_found_total{kind="route"}`, `netagent_drift_repaired_total{kind="route"}`,
			`netagent_drift_found_total{kind="interface"}`, `netagent_drift_repaired_total{kind="interface"}`} {
			seen = append(seen, fmt.Sprintf("%s %v (before %v)", name, got[name], before[name]))
			ok = ok && got[name] >= before[name]+1
		}
		return ok && got[`netagent_reconciles_total{reason="drift"}`] > before[`netagent_reconciles_total{reason="drift"}`], strings.Join(seen, "; ")
	})
	if _, ok := e.route("198.51.100.0/24"); !ok || !strings.Contains(e.ip("link", "show", "uplink0"), "mtu 1450") {
		t.Errorf("drift not repaired:\n%s\n%s", e.ip("route"), e.ip("link", "show", "uplink0"))
	}

	// The uplink loses its carrier: a link reconcile, the route blocked.
	before = e.scrapeHTTP(addr)
	e.ip("link", "set", "uplink0-peer", "down")
	e.waitFor("a link reconcile and a blocked route in the metrics", func() (bool, string) {
		got := e.scrapeHTTP(addr)
		link := `netagent_reconciles_total{reason="link"}`
		return got[link] > before[link] && got[`netagent_blocked_items`] == 1 && got[`netagent_items{state="blocked"}`] == 1,
			fmt.Sprintf("link reconciles %v (before %v), blocked %v", got[link], before[link], got[`netagent_blocked_items`])
	})
	got = e.scrapeSocket()
	if got[`netagent_blocked_items`] != 1 || got[`netagent_last_converged_reconcile_timestamp_seconds`] >= got[`netagent_last_reconcile_timestamp_seconds`] {
		t.Errorf("netagent metrics with the route blocked: blocked %v, last converged %v, last reconcile %v",
			got[`netagent_blocked_items`], got[`netagent_last_converged_reconcile_timestamp_seconds`], got[`netagent_last_reconcile_timestamp_seconds`])
	}
	e.ip("link", "set", "uplink0-peer", "up")
	e.waitForRestoredRoute("the carrier's return")
}

// metricsAddr is the address the daemon's metrics server listens on, as
// it logs it (the port was 0: the kernel chose one).
func (e *daemonEnv) metricsAddr() string {
	e.t.Helper()
	var addr string
	e.waitFor("the metrics server", func() (bool, string) {
		for _, l := range e.logs.entries(map[string]string{"msg": "serving metrics"}) {
			addr, _ = l["metrics_listen"].(string)
		}
		return addr != "", "no log line"
	})
	return addr
}

// scrapeHTTP GETs /metrics from inside the test namespace, where the
// daemon (run in it) listens.
func (e *daemonEnv) scrapeHTTP(addr string) map[string]float64 {
	e.t.Helper()
	dial := func(ctx context.Context, network, address string) (net.Conn, error) {
		var c net.Conn
		err := e.tgt.Do(func() error { // the socket is made in the namespace and stays in it
			var err error
			c, err = (&net.Dialer{}).DialContext(ctx, network, address)
			return err
		})
		return c, err
	}
	client := &http.Client{Transport: &http.Transport{DialContext: dial, DisableKeepAlives: true}, Timeout: daemonWait}
	resp, err := client.Get("http://" + addr + "/metrics")
	if err != nil {
		e.t.Fatalf("scraping %s: %v\n%s", addr, err, e.logs.String())
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain") {
		e.t.Fatalf("scraping %s: %s, %s", addr, resp.Status, resp.Header.Get("Content-Type"))
	}
	got, err := metrics.ParseText(resp.Body)
	if err != nil {
		e.t.Fatal(err)
	}
	return got
}

// scrapeSocket runs `netagent metrics` against the daemon's socket.
func (e *daemonEnv) scrapeSocket() map[string]float64 {
	e.t.Helper()
	r := e.cli("metrics", "--socket", e.socket)
	if r.code != 0 {
		e.t.Fatalf("netagent metrics: exit %d\n%s", r.code, r.stderr)
	}
	got, err := metrics.ParseText(strings.NewReader(r.stdout))
	if err != nil {
		e.t.Fatalf("netagent metrics: %v\n%s", err, r.stdout)
	}
	return got
}
