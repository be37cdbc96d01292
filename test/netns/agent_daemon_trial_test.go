//go:build !vmtest

package netns_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/netagent/netagent/agent/api"
	"github.com/netagent/netagent/agent/status"
)

// daemonTrialDoc is a trial through the daemon: objects the intent files
// do not hold, a NIC's MTU and a sysctl the previous intent did not own,
// and a firewall chain.
const daemonTrialDoc = `{"version": 1,
  "interfaces": [
    {"name": "phys1", "type": "physical", "mtu": 1400},
    {"name": "br1", "type": "bridge", "bridge": {"stp": false}, "addresses": ["10.9.0.1/24"]}
  ],
  "routes": [{"to": "203.0.113.0/24", "via": "192.0.2.1", "dev": "uplink0", "metric": 10}],
  "sysctls": {"net.ipv4.conf.all.rp_filter": "2"},
  "firewall": {"chains": [{"table": "filter", "name": "NETAGENT-TRY", "jumpFrom": "FORWARD", "rules": ["-i br1 -j DROP"]}]}
}`

// daemonTrialEnv is a daemon converged on the uplink and routes files,
// with phys1 beside the uplink, and the trial document in a file.
func daemonTrialEnv(t *testing.T) (e *daemonEnv, cli *cliEnv, doc string) {
	e = daemonNewEnv(t)
	e.ip("link", "add", "phys1", "type", "veth", "peer", "name", "phys1-peer")
	e.ip("link", "set", "phys1", "up")
	e.ip("link", "set", "phys1-peer", "up")
	e.converge()
	doc = filepath.Join(t.TempDir(), "trial.json")
	if err := os.WriteFile(doc, []byte(daemonTrialDoc), 0o600); err != nil {
		t.Fatal(err)
	}
	return e, &cliEnv{t: t, tgt: e.tgt, bin: e.bin, stateDir: e.stateDir}, doc
}

// netagent runs the CLI against the daemon's namespace and state.
func (e *daemonEnv) netagent(command string, args ...string) cliResult {
	e.t.Helper()
	c := &cliEnv{t: e.t, tgt: e.tgt, bin: e.bin, stateDir: e.stateDir}
	return c.run(nil, append([]string{"--netns", e.tgt.Name, "--state-dir", e.stateDir, command}, args...)...)
}

func (e *daemonEnv) intentFiles() []string {
	ents, _ := os.ReadDir(e.intentDir)
	var out []string
	for _, d := range ents {
		out = append(out, d.Name())
	}
	return out
}

// Try through the daemon (detached), then a plain `netagent confirm`: the
// document lands in the intent directory and is the new version; status
// showed the trial while it was pending.
func TestDaemonTrialConfirm(t *testing.T) {
	e, _, doc := daemonTrialEnv(t)
	files := strings.Join(e.intentFiles(), ",")
	v0 := e.mustStatus().Version
	res := e.netagent("try", "--via-daemon", "--detach", "--timeout", "5m", "--name", "30-trial.json", doc)
	if res.code != 0 || !strings.Contains(res.stdout, "30-trial.json") {
		t.Fatalf("try --via-daemon: %s", res)
	}
	if _, ok := e.route("203.0.113.0/24"); !ok {
		t.Fatal("the trial's route is not in the kernel")
	}
	st := e.mustStatus()
	if st.Trial == nil || st.Trial.Name != "30-trial.json" || st.Version != v0 || strings.Join(e.intentFiles(), ",") != files {
		t.Fatalf("while pending: trial %+v, version %d (was %d), files %v", st.Trial, st.Version, v0, e.intentFiles())
	}
	if out := e.netagent("status", "--socket", e.socket); !strings.Contains(out.stdout, "trial pending since") || !strings.Contains(out.stdout, "confirming writes 30-trial.json") {
		t.Errorf("status does not show the trial:\n%s", out)
	}
	if res := e.netagent("confirm"); res.code != 0 || !strings.Contains(res.stdout, "confirmed") {
		t.Fatalf("confirm: %s", res)
	}
	data, err := os.ReadFile(filepath.Join(e.intentDir, "30-trial.json"))
	var got, want bytes.Buffer
	if err != nil || json.Compact(&got, data) != nil || json.Compact(&want, []byte(daemonTrialDoc)) != nil || got.String() != want.String() {
		t.Fatalf("the confirmed file: %v\n%s", err, data)
	}
	st = e.mustStatus()
	if st.Trial != nil || st.LastTrial == nil || st.LastTrial.Result != "confirmed" || st.Version != v0+1 || !st.Ready {
		t.Fatalf("after confirm: %+v %+v version %d ready %v", st.Trial, st.LastTrial, st.Version, st.Ready)
	}
	if _, ok := e.route("203.0.113.0/24"); !ok {
		t.Fatal("the confirmed route went")
	}
	if _, err := os.Stat(filepath.Join(e.stateDir, "trial", "trial.json")); err == nil {
		t.Error("the trial is still pending on disk")
	}
	if h := e.netagent("history"); !strings.Contains(h.stdout, "30-trial.json") {
		t.Errorf("history:\n%s", h)
	}
}

// Try through the daemon in the foreground, unconfirmed: at the timeout the
// daemon reverts, the kernel is the pre-trial snapshot, the intent
// directory unchanged, and try exits 6.
func TestDaemonTrialTimeoutReverts(t *testing.T) {
	e, cli, doc := daemonTrialEnv(t)
	want := cli.trialSnapshot()
	files := strings.Join(e.intentFiles(), ",")
	res := e.netagent("try", "--via-daemon", "--timeout", "2s", doc)
	if res.code != 6 || !strings.Contains(res.stderr, "reverted: timeout") {
		t.Fatalf("want exit 6 and the reason: %s", res)
	}
	if got := cli.trialSnapshot(); got != want {
		t.Fatalf("the revert is not exact:\n%s", lineDiff(want, got))
	}
	if strings.Join(e.intentFiles(), ",") != files {
		t.Errorf("the intent directory changed: %v", e.intentFiles())
	}
	if st := e.mustStatus(); st.LastTrial == nil || st.LastTrial.Result != "reverted" || !st.Ready {
		t.Errorf("status: %+v ready %v", st.LastTrial, st.Ready)
	}
}

// A probe that fails reverts the trial at once (exit 9). (Of br1, which
// the trial creates: a probe that failed before the change would not
// count, and one that cannot run then, its link missing, does.)
func TestDaemonTrialProbeReverts(t *testing.T) {
	e, cli, doc := daemonTrialEnv(t)
	want := cli.trialSnapshot()
	res := e.netagent("try", "--via-daemon", "--timeout", "5m", "--probe", "arping:192.0.2.1@br1", doc)
	if res.code != 9 || !strings.Contains(res.stderr, "probe") {
		t.Fatalf("want exit 9: %s", res)
	}
	if got := cli.trialSnapshot(); got != want {
		t.Fatalf("the revert is not exact:\n%s", lineDiff(want, got))
	}
}

// A daemon killed (SIGKILL) during a trial reverts it when it starts
// again: the kernel is the pre-trial snapshot, the trial no longer
// pending, and the daemon's intent is the files' alone.
func TestDaemonTrialKilledRevertsAtStart(t *testing.T) {
	e, cli, doc := daemonTrialEnv(t)
	want := cli.trialSnapshot()
	if res := e.netagent("try", "--via-daemon", "--detach", "--timeout", "5m", doc); res.code != 0 {
		t.Fatalf("try: %s", res)
	}
	if _, ok := e.route("203.0.113.0/24"); !ok {
		t.Fatal("the trial's route is not in the kernel")
	}
	e.cmd.Process.Kill()
	<-e.exited
	e.cmd = nil
	if _, err := os.Stat(filepath.Join(e.stateDir, "trial", "trial.json")); err != nil {
		t.Fatalf("no pending trial after the kill: %v", err)
	}
	e.start()
	if got := cli.trialSnapshot(); got != want {
		t.Fatalf("the kernel after the restart is not the pre-trial one:\n%s", lineDiff(want, got))
	}
	if _, err := os.Stat(filepath.Join(e.stateDir, "trial", "trial.json")); err == nil {
		t.Error("the trial is still pending")
	}
	resp := e.call(api.Request{Command: api.CmdStatus})
	if o := resp.Status.LastTrial; o == nil || o.Result != "reverted" || !strings.Contains(o.Reason, "recovered") {
		t.Errorf("the daemon's status after the restart: %+v", o)
	}
}

func (e *daemonEnv) mustStatus() status.Status {
	e.t.Helper()
	st, err := e.status()
	if err != nil {
		e.t.Fatal(err)
	}
	return st
}

// In the foreground, try --via-daemon waits: `netagent confirm` from
// another shell ends it with exit 0; a second trial, then `netagent
// rollback`, reverts it exactly and try exits 6.
func TestDaemonTrialForegroundConfirmAndRollback(t *testing.T) {
	e, cli, doc := daemonTrialEnv(t)
	want := cli.trialSnapshot()
	start := func() (wait func() cliResult) {
		cmd := exec.Command(e.bin, "--netns", e.tgt.Name, "--state-dir", e.stateDir, "try", "--via-daemon", "--timeout", "5m", doc)
		var out, errOut strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &errOut
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		e.waitFor("the trial", func() (bool, string) {
			st, err := e.status()
			return err == nil && st.Trial != nil, fmt.Sprint(st.Trial, err)
		})
		return func() cliResult {
			err := cmd.Wait()
			res := cliResult{stdout: out.String(), stderr: errOut.String()}
			if ee, ok := err.(*exec.ExitError); ok {
				res.code = ee.ExitCode()
			}
			return res
		}
	}
	wait := start()
	if res := e.netagent("rollback"); res.code != 0 || !strings.Contains(res.stdout, "reverted") {
		t.Fatalf("rollback: %s", res)
	}
	if res := wait(); res.code != 6 || !strings.Contains(res.stderr, "rolled back on request") {
		t.Fatalf("the waiting try: %s", res)
	}
	if got := cli.trialSnapshot(); got != want {
		t.Fatalf("the rollback is not exact:\n%s", lineDiff(want, got))
	}
	wait = start()
	if res := e.netagent("confirm"); res.code != 0 {
		t.Fatalf("confirm: %s", res)
	}
	if res := wait(); res.code != 0 || !strings.Contains(res.stdout, "confirmed") {
		t.Fatalf("the waiting try: %s", res)
	}
	if _, err := os.Stat(filepath.Join(e.intentDir, "trial-2.json")); err != nil {
		t.Errorf("the confirmed file: %v (files %v)", err, e.intentFiles())
	}
}

// oneShotStatus is `netagent status --json` without a daemon.
type oneShotStatus struct {
	Daemon    string               `json:"daemon"`
	Trial     *status.TrialStatus  `json:"trial"`
	LastTrial *status.TrialOutcome `json:"lastTrial"`
}

// A daemon killed (SIGKILL) during a trial and started again on the same
// state directory says in status how the trial ended: reverted when it
// started again, and why, naming the trial; a revert at start that cannot
// finish (the journal unreadable) leaves the daemon down and the trial
// pending, and status says the revert is incomplete and why.
func TestDaemonTrialKilledStatusSaysHowItEnded(t *testing.T) {
	e, _, doc := daemonTrialEnv(t)
	if res := e.netagent("try", "--via-daemon", "--detach", "--timeout", "5m", doc); res.code != 0 {
		t.Fatalf("try: %s", res)
	}
	tr := e.killDaemon()
	e.start()
	st := e.mustStatus()
	if o := st.LastTrial; o == nil || o.Result != "reverted" || o.ID != status.TrialID(tr.Started) ||
		!strings.Contains(o.Reason, "started again") || !strings.Contains(o.Reason, fmt.Sprintf("pid %d", tr.PID)) {
		t.Fatalf("the daemon's status after the restart: %+v", o)
	}

	if res := e.netagent("try", "--via-daemon", "--detach", "--timeout", "5m", doc); res.code != 0 {
		t.Fatalf("the second try: %s", res)
	}
	tr = e.killDaemon()
	journal := filepath.Join(e.stateDir, "trial", "journal")
	if err := os.Remove(journal); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(journal, 0o700); err != nil { // unreadable as a journal
		t.Fatal(err)
	}
	e.startAnyway()
	select {
	case <-e.exited:
	case <-time.After(daemonWait):
		t.Fatal("the daemon started with a trial it could not revert")
	}
	e.cmd = nil
	out, _ := exec.Command(e.bin, "--state-dir", e.stateDir, "status", "--socket", e.socket, "--json", "--timeout", "2s").Output()
	var os1 oneShotStatus
	if err := json.Unmarshal(out, &os1); err != nil {
		t.Fatalf("status --json without a daemon: %v\n%s", err, out)
	}
	if os1.Trial == nil || os1.Trial.PID != tr.PID || os1.LastTrial == nil || os1.LastTrial.Result != status.TrialRevertIncomplete ||
		!strings.Contains(os1.LastTrial.Reason, "journal") || !strings.Contains(os1.LastTrial.Reason, "stays pending") {
		t.Fatalf("status after a revert that could not finish: %s", out)
	}
	text, _ := exec.Command(e.bin, "--state-dir", e.stateDir, "status", "--socket", e.socket, "--timeout", "2s").Output()
	if !strings.Contains(string(text), "last trial "+status.TrialRevertIncomplete) {
		t.Errorf("status: %s", text)
	}
}
