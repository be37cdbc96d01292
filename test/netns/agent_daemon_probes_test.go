//go:build !vmtest

package netns_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/netagent/netagent/agent/member"
	"github.com/netagent/netagent/agent/status"
	"github.com/netagent/netagent/internal/etcdtest"
	"github.com/netagent/netagent/internal/testns"
)

// Probes judging the daemon's trials and a fleet member's, against real
// servers: dnsmasq and a Go HTTP server (probeServices) in an upstream
// namespace behind the uplink, reached through the route
// 198.51.100.0/24 via 192.0.2.1 (daemonRoutesFile).

// probeUpstream moves the uplink's peer into an upstream namespace
// (192.0.2.1 on the link, upstreamIP behind it) and starts its servers:
// the HTTP server's port and a func that stops dnsmasq.
func probeUpstream(e *daemonEnv) (httpPort string, stopDNS func()) {
	t := e.t
	up := testns.New(t)
	e.ip("link", "set", "uplink0-peer", "netns", up.Name)
	for _, args := range [][]string{
		{"addr", "add", "192.0.2.1/24", "dev", "uplink0-peer"}, {"link", "set", "uplink0-peer", "up"},
		{"link", "set", "lo", "up"}, {"addr", "add", upstreamIP + "/32", "dev", "lo"},
	} {
		testns.Exec(t, up, "ip", args...)
	}
	return probeServices(t, up)
}

// dnsOK is the DNS probe that passes while dnsmasq is reachable;
// dnsGone one that fails before any change (NXDOMAIN).
var (
	dnsOK   = "dns:ok.test@" + upstreamIP + ",addr=" + probedAddr + ",timeout=500ms"
	dnsGone = "dns:gone.test@" + upstreamIP
)

// canonical is a probe spec as the daemon names it (port added).
func canonical(spec string) string {
	return strings.Replace(spec, "@"+upstreamIP, "@"+upstreamIP+":53", 1)
}

// writeDoc writes a trial document to a file of its own.
func writeDoc(t *testing.T, name, doc string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// revertedByProbe checks, from the outcome the daemon recorded, that a
// trial reverted because probe failed, the failure after the trial
// began, the revert after the failure and well before the deadline.
func revertedByProbe(t *testing.T, o *status.TrialOutcome, probe string) {
	t.Helper()
	if o == nil || o.Result != "reverted" || o.Probe != probe || !strings.Contains(o.Reason, "probe "+probe) {
		t.Fatalf("last trial %+v: want reverted by %s", o, probe)
	}
	placedBeforeDeadline(t, o.Since, o.ProbeFailedAt, o.At, o.Deadline)
}

// placedBeforeDeadline checks a trial's recorded times: the probe failed
// after the trial began, the revert came after the failure and well
// before the deadline.
func placedBeforeDeadline(t *testing.T, began, failed, reverted, deadline time.Time) {
	t.Helper()
	if !began.Before(failed) || reverted.Before(failed) || !reverted.Before(deadline) {
		t.Fatalf("began %v, probe failed %v, reverted %v, deadline %v: want began < failed <= reverted < deadline",
			began, failed, reverted, deadline)
	}
	if took, limit := reverted.Sub(began), deadline.Sub(began); took > limit/2 {
		t.Errorf("reverted %v after the trial began: not well before its deadline (%v)", took, limit)
	}
	t.Logf("reverted %v after the trial began, %v after the probe failed, %v before the deadline",
		reverted.Sub(began).Round(time.Millisecond), reverted.Sub(failed).Round(time.Millisecond), deadline.Sub(reverted).Round(time.Millisecond))
}

// TestDaemonTrialProbesJudged: trials through the daemon (try
// --via-daemon), judged by DNS and HTTP probes against real servers.
//
//   - A trial that breaks DNS (a more specific route to the DNS server
//     through a gateway nobody answers for) reverts once its probe round
//     is over (--probe-timeout 3s), not at its 60s deadline.
//   - A probe failing before the change (NXDOMAIN) refuses the trial with
//     --probe-must-pass-before (exit 4, nothing changed); without it the
//     trial stands, the status names the probe among failingBefore and it
//     judges nothing.
//   - DNS lost while that trial waits for its confirmation (dnsmasq
//     stopped) reverts it after trial.FailuresToRevert rounds at the 1s
//     probe interval, not at the deadline; the HTTP probe still passes.
func TestDaemonTrialProbesJudged(t *testing.T) {
	e := daemonNewEnv(t)
	port, stopDNS := probeUpstream(e)
	e.converge()
	awaitDNSIn(t, e.tgt)
	cli := &cliEnv{t: t, tgt: e.tgt, bin: e.bin, stateDir: e.stateDir}
	want := cli.trialSnapshot()
	httpOK := "http://" + upstreamIP + ":" + port + "/ok,body=healthy"

	bad := writeDoc(t, "bad.json", `{"version": 1,
  "routes": [{"to": "`+upstreamIP+`/32", "via": "192.0.2.99", "dev": "uplink0", "metric": 5}]}`)
	res := e.netagent("try", "--via-daemon", "--timeout", "60s", "--probe-timeout", "3s", "--probe", dnsOK, bad)
	if res.code != 9 || !strings.Contains(res.stderr, "probe "+canonical(dnsOK)+" did not pass") {
		t.Fatalf("the trial that breaks DNS: want exit 9 naming the probe: %s", res)
	}
	revertedByProbe(t, e.mustStatus().LastTrial, canonical(dnsOK))
	if got := cli.trialSnapshot(); got != want {
		t.Fatalf("the revert is not exact:\n%s", lineDiff(want, got))
	}

	next := writeDoc(t, "next.json", `{"version": 1,
  "routes": [{"to": "203.0.113.0/24", "via": "192.0.2.1", "dev": "uplink0", "metric": 10}]}`)
	probes := []string{"--probe", dnsOK, "--probe", httpOK, "--probe", dnsGone}
	res = e.netagent("try", append([]string{"--via-daemon", "--detach", "--timeout", "60s", "--probe-must-pass-before"}, append(probes, next)...)...)
	if res.code != 4 || !strings.Contains(res.stderr, "probe "+canonical(dnsGone)+": probe failed: no such name (NXDOMAIN)") {
		t.Fatalf("with --probe-must-pass-before: want exit 4 naming the failing probe: %s", res)
	}
	if got := cli.trialSnapshot(); got != want {
		t.Fatalf("the refused trial changed the namespace:\n%s", lineDiff(want, got))
	}
	res = e.netagent("try", append([]string{"--via-daemon", "--detach", "--timeout", "60s"}, append(probes, next)...)...)
	if res.code != 0 {
		t.Fatalf("the trial with a probe failing before: want it standing: %s", res)
	}
	st := e.mustStatus()
	if tr := st.Trial; tr == nil || len(tr.FailingBefore) != 1 || !strings.Contains(tr.FailingBefore[0], canonical(dnsGone)) ||
		strings.Contains(strings.Join(tr.Probes, " "), "gone.test") || tr.Probing {
		t.Fatalf("the standing trial %+v: want %s failing before, not among its probes", st.Trial, dnsGone)
	}
	if _, ok := e.route("203.0.113.0/24"); !ok {
		t.Fatalf("the trial's route is not there:\n%s", e.ip("route"))
	}
	stopDNS()
	e.waitFor("the trial reverted by the watch", func() (bool, string) {
		st, err := e.status()
		return err == nil && st.Trial == nil && st.LastTrial != nil, fmt.Sprintf("%+v %v", st.LastTrial, err)
	})
	o := e.mustStatus().LastTrial
	revertedByProbe(t, o, canonical(dnsOK))
	if !strings.Contains(o.Reason, "failed 3 times in a row after the change") || len(o.FailingBefore) != 1 {
		t.Errorf("the watch's revert %+v: want 3 failures in a row, the probe failing before recorded", o)
	}
	if got := cli.trialSnapshot(); got != want {
		t.Fatalf("the watch's revert is not exact:\n%s", lineDiff(want, got))
	}
	out := e.netagent("status", "--socket", e.socket).stdout
	for _, say := range []string{"; " + canonical(dnsOK) + " failed at ", " before the deadline; failing before the change, not counted: probe " + canonical(dnsGone)} {
		if !strings.Contains(out, say) {
			t.Errorf("status does not say %q:\n%s", say, out)
		}
	}
}

// TestAgentDaemonFleetTrialProbes: a fleet trial (a trial envelope in
// the group's key of a real etcd) whose document drops the route the
// DNS server is reached through: its probes run once before the change
// (the NXDOMAIN one is named in the host's fleet status and not counted),
// the DNS probe then fails and the host reverts at the end of the probe
// round (probeTimeout 3s), not at its 60s deadline, as its fleet status
// records; the previous document's route is back.
func TestAgentDaemonFleetTrialProbes(t *testing.T) {
	f := newFleetEnv(t, etcdtest.Options{})
	probeUpstream(f.daemonEnv)
	f.startWithGroupRoutes()
	awaitDNSIn(t, f.tgt)

	env, err := json.Marshal(member.TrialEnvelope{
		Trial: member.TrialSpec{Timeout: "60s", ProbeTimeout: "3s", Probes: []string{dnsOK, dnsGone}},
		Intent: json.RawMessage(`{"version": 1,
  "routes": [{"to": "203.0.113.0/24", "via": "192.0.2.1", "dev": "uplink0", "metric": 10}]}`)})
	if err != nil {
		t.Fatal(err)
	}
	rev := f.push(fleetLayout.GroupDoc("edge", "20-routes.json"), string(env))
	f.waitFor("the trial reverted, in etcd", func() (bool, string) {
		st, err := f.fleetStatus()
		return err == nil && st.Trial != nil && st.Trial.Revision == int64(rev) && st.Trial.State == member.FleetTrialReverted,
			fmt.Sprintf("%+v %v", st.Trial, err)
	})
	st, _ := f.fleetStatus()
	tr := st.Trial
	if tr.Probe != canonical(dnsOK) || len(tr.FailingBefore) != 1 || !strings.Contains(tr.FailingBefore[0], canonical(dnsGone)+": probe failed: no such name") {
		t.Fatalf("the fleet status' trial %+v: want %s failed, %s failing before", tr, dnsOK, dnsGone)
	}
	placedBeforeDeadline(t, tr.Started, tr.ProbeFailedAt, tr.Ended, tr.Deadline)
	f.waitFor("the previous document's route back", func() (bool, string) {
		_, ok := f.route("198.51.100.0/24")
		_, trialRoute := f.route("203.0.113.0/24")
		return ok && !trialRoute, f.ip("route")
	})
	awaitDNSIn(t, f.tgt)
}
