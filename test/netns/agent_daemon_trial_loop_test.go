//go:build !vmtest

package netns_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/netagent/netagent/agent/host"
	"github.com/netagent/netagent/agent/status"
	"github.com/netagent/netagent/internal/statefile"
)

// daemonExtraFile is an intent file an operator writes while a trial is
// pending.
const daemonExtraFile = `{"version": 1,
  "routes": [{"to": "100.64.0.0/24", "via": "192.0.2.1", "dev": "uplink0", "metric": 10}]}`

// tryInBackground runs `netagent try --via-daemon ARGS` against the daemon
// and returns a wait for its result.
func (e *daemonEnv) tryInBackground(args ...string) (wait func() cliResult) {
	e.t.Helper()
	cmd := exec.Command(e.bin, append([]string{"--netns", e.tgt.Name, "--state-dir", e.stateDir, "try", "--via-daemon"}, args...)...)
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Start(); err != nil {
		e.t.Fatal(err)
	}
	done := false
	e.t.Cleanup(func() {
		if !done {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	return func() cliResult {
		err := cmd.Wait()
		done = true
		res := cliResult{stdout: out.String(), stderr: errOut.String()}
		if ee, ok := err.(*exec.ExitError); ok {
			res.code = ee.ExitCode()
		}
		return res
	}
}

// While a trial's probe cannot pass (an address nobody answers on the
// bridge the trial creates, with a minute to try; a probe that failed
// before the change would not count), the daemon goes on: status shows the trial probing, an
// intent file written meanwhile is applied and is a version; rollback
// then reverts the trial (the waiting try exits 6) and keeps the file's
// change.
func TestDaemonTrialProbesDoNotBlockTheDaemon(t *testing.T) {
	e, _, doc := daemonTrialEnv(t)
	v0 := e.mustStatus().Version
	wait := e.tryInBackground("--timeout", "5m", "--probe", "arping:192.0.2.1@br1", "--probe-timeout", "1m", doc)
	e.waitFor("the trial probing", func() (bool, string) {
		st, err := e.status()
		return err == nil && st.Trial != nil && st.Trial.Probing, fmt.Sprint(st.Trial, err)
	})
	e.writeIntent("30-extra.json", daemonExtraFile)
	e.waitFor("the file written during the probes applied", func() (bool, string) {
		_, ok := e.route("100.64.0.0/24")
		return ok, e.ip("route")
	})
	st := e.mustStatus()
	if st.Trial == nil || !st.Trial.Probing || st.Version != v0+1 {
		t.Fatalf("after the file change: trial %+v, version %d (was %d)", st.Trial, st.Version, v0)
	}
	if res := e.netagent("confirm"); res.code == 0 || !strings.Contains(res.stderr, "still being checked") {
		t.Fatalf("confirm while probing: %s", res)
	}
	if res := e.netagent("rollback"); res.code != 0 || !strings.Contains(res.stdout, "reverted") {
		t.Fatalf("rollback: %s", res)
	}
	if res := wait(); res.code != 6 || !strings.Contains(res.stderr, "rolled back on request") {
		t.Fatalf("the waiting try: %s", res)
	}
	if _, ok := e.route("203.0.113.0/24"); ok {
		t.Error("the trial's route stayed after the rollback")
	}
	if r, ok := e.route("100.64.0.0/24"); !ok || r.Gateway != "192.0.2.1" {
		t.Errorf("the file's route went with the trial: %+v %v", r, ok)
	}
	if st := e.mustStatus(); st.Trial != nil || st.Version != v0+1 || !st.Ready {
		t.Errorf("after the rollback: trial %+v, version %d, ready %v", st.Trial, st.Version, st.Ready)
	}
}

// daemonPartialDoc is a trial one item of which the kernel refuses (a
// gateway that is not on the link).
const daemonPartialDoc = `{"version": 1,
  "interfaces": [{"name": "br1", "type": "bridge", "bridge": {"stp": false}, "addresses": ["10.9.0.1/24"]}],
  "routes": [{"to": "203.0.113.0/24", "via": "10.200.0.1", "dev": "uplink0", "metric": 10}]
}`

// A trial through the daemon with a refused item reverts (exit 7), unless
// --keep-partial: then it stands with what converged until confirmed.
func TestDaemonTrialKeepPartial(t *testing.T) {
	e, cli, _ := daemonTrialEnv(t)
	want := cli.trialSnapshot()
	doc := filepath.Join(t.TempDir(), "partial.json")
	if err := os.WriteFile(doc, []byte(daemonPartialDoc), 0o600); err != nil {
		t.Fatal(err)
	}
	if res := e.netagent("try", "--via-daemon", "--timeout", "5m", doc); res.code != 7 || !strings.Contains(res.stderr, "1 item failed") {
		t.Fatalf("without --keep-partial, want exit 7: %s", res)
	}
	if got := cli.trialSnapshot(); got != want {
		t.Fatalf("the revert is not exact:\n%s", lineDiff(want, got))
	}
	res := e.netagent("try", "--via-daemon", "--detach", "--keep-partial", "--timeout", "5m", doc)
	if res.code != 0 || !strings.Contains(res.stderr, "203.0.113.0/24") {
		t.Fatalf("with --keep-partial, want exit 0 and the failed item named: %s", res)
	}
	st := e.mustStatus()
	if st.Trial == nil || !st.Trial.KeepPartial || !strings.Contains(e.ip("addr", "show", "dev", "br1"), "10.9.0.1/24") {
		t.Fatalf("the partial trial: %+v", st.Trial)
	}
	if res := e.netagent("rollback"); res.code != 0 {
		t.Fatalf("rollback: %s", res)
	}
	if got := cli.trialSnapshot(); got != want {
		t.Fatalf("the revert of the partial trial is not exact:\n%s", lineDiff(want, got))
	}
}

// --probe-timeout reaches the daemon: a probe that cannot pass (on the
// bridge the trial creates: one failing before would not count) reverts
// the trial once it has run out (exit 9), and the reason names it.
func TestDaemonTrialProbeTimeout(t *testing.T) {
	e, cli, doc := daemonTrialEnv(t)
	want := cli.trialSnapshot()
	res := e.netagent("try", "--via-daemon", "--timeout", "5m", "--probe", "arping:192.0.2.1@br1", "--probe-timeout", "1s", doc)
	if res.code != 9 || !strings.Contains(res.stderr, "within 1s") {
		t.Fatalf("want exit 9 and the probe timeout named: %s", res)
	}
	if got := cli.trialSnapshot(); got != want {
		t.Fatalf("the revert is not exact:\n%s", lineDiff(want, got))
	}
}

// fakeReboot makes the pending trial's record look as if written before
// a reboot (another boot id), as TestTrialPendingRecoveredByNextCommand
// does; the kernel keeps the trial's changes.
func fakeReboot(t *testing.T, stateDir string) {
	t.Helper()
	path := filepath.Join(stateDir, "trial", "trial.json")
	data, err := statefile.LoadRecord(path)
	if err != nil {
		t.Fatal(err)
	}
	var rec map[string]any
	if err := json.Unmarshal(data, &rec); err != nil {
		t.Fatal(err)
	}
	rec["identity"].(map[string]any)["boot_id"] = "00000000-0000-0000-0000-000000000000"
	data, _ = json.Marshal(rec)
	if err := statefile.SaveRecord(path, data, true); err != nil {
		t.Fatal(err)
	}
}

// killDaemon kills the daemon (SIGKILL) and checks that its trial stays
// pending on disk.
func (e *daemonEnv) killDaemon() *host.Trial {
	e.t.Helper()
	e.cmd.Process.Kill()
	<-e.exited
	e.cmd = nil
	tr, err := host.PendingTrial(e.stateDir)
	if err != nil || tr == nil {
		e.t.Fatalf("no pending trial after the kill: %v", err)
	}
	return tr
}

// Reboot: a daemon trial pending on disk, recorded on another boot, and a
// kernel that still holds its changes. The daemon at start, or `netagent
// recover` before it (the unit's ExecStartPre), converges to the intent
// before the trial (its record's Previous) and says so.
func TestDaemonTrialRebootRecoversPrevious(t *testing.T) {
	for _, how := range []string{"daemon", "recover"} {
		t.Run(how, func(t *testing.T) {
			e, cli, doc := daemonTrialEnv(t)
			want := cli.trialSnapshot()
			if res := e.netagent("try", "--via-daemon", "--detach", "--timeout", "5m", doc); res.code != 0 {
				t.Fatalf("try: %s", res)
			}
			if cli.trialSnapshot() == want {
				t.Fatal("the trial changed nothing")
			}
			tr := e.killDaemon()
			if len(tr.Previous) != 2 || tr.Previous["10-uplink.json"] == nil || tr.Previous["20-routes.json"] == nil {
				t.Fatalf("the trial's Previous: %v", keys(tr.Previous))
			}
			fakeReboot(t, e.stateDir)
			if how == "recover" {
				res := e.netagent("recover")
				if res.code != 0 || !strings.Contains(res.stderr, "reverted the pending trial") || !strings.Contains(res.stderr, "reboot") {
					t.Fatalf("recover: %s", res)
				}
				if got := cli.trialSnapshot(); got != want {
					t.Fatalf("the kernel after recover is not the pre-trial one:\n%s", lineDiff(want, got))
				}
			}
			e.start()
			if got := cli.trialSnapshot(); got != want {
				t.Fatalf("the kernel after the restart is not the pre-trial one:\n%s", lineDiff(want, got))
			}
			if tr, err := host.PendingTrial(e.stateDir); err != nil || tr != nil {
				t.Errorf("the trial is still pending: %+v %v", tr, err)
			}
			st := e.mustStatus()
			// Previous, not the journal: the reason says so.
			if o := st.LastTrial; o == nil || o.Result != "reverted" || !strings.Contains(o.Reason, "converged to the intent before the trial") {
				t.Errorf("the daemon's status after the restart: %+v", o)
			}
			if !st.Ready || st.Trial != nil {
				t.Errorf("after the restart: ready %v, trial %+v", st.Ready, st.Trial)
			}
		})
	}
}

// An intent file written during a daemon trial is in the trial's record
// (Previous): after a reboot the daemon converges to the documents before
// the trial plus that file, never dropping it.
func TestDaemonTrialRebootKeepsFileWrittenDuringTrial(t *testing.T) {
	e, _, doc := daemonTrialEnv(t)
	v0 := e.mustStatus().Version
	if res := e.netagent("try", "--via-daemon", "--detach", "--timeout", "5m", doc); res.code != 0 {
		t.Fatalf("try: %s", res)
	}
	e.writeIntent("30-extra.json", daemonExtraFile)
	e.waitFor("the file written during the trial to be a version", func() (bool, string) {
		st, err := e.status()
		return err == nil && st.Version == v0+1, fmt.Sprint(st.Version, err)
	})
	if _, ok := e.route("100.64.0.0/24"); !ok {
		t.Fatal("the file's route is not applied")
	}
	tr := e.killDaemon()
	if string(tr.Previous["30-extra.json"]) != daemonExtraFile || tr.Previous["api"] != nil || tr.Files["api"] == nil {
		t.Fatalf("the trial's record: Previous %v, Files %v", keys(tr.Previous), keys(tr.Files))
	}
	fakeReboot(t, e.stateDir)
	if res := e.netagent("recover"); res.code != 0 || !strings.Contains(res.stderr, "reboot") {
		t.Fatalf("recover: %s", res)
	}
	if _, ok := e.route("100.64.0.0/24"); !ok {
		t.Errorf("recover dropped the file written during the trial:\n%s", e.ip("route"))
	}
	if _, ok := e.route("203.0.113.0/24"); ok {
		t.Error("recover kept the trial's route")
	}
	e.start()
	st := e.mustStatus()
	if _, ok := e.route("100.64.0.0/24"); !ok || !st.Ready || st.Version != v0+1 {
		t.Errorf("after the restart: the file's route %v, ready %v, version %d (want %d)", ok, st.Ready, st.Version, v0+1)
	}
	if strings.Contains(e.ip("link"), "br1") {
		t.Error("the trial's bridge stayed")
	}
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// A trial through the daemon whose items stay blocked (a NIC that is not
// there) reverts at the end of its --wait, as the one-shot's does (exit
// 7); items blocked before it, in the daemon's files, do not count.
func TestDaemonTrialBlockedReverts(t *testing.T) {
	e, cli, doc := daemonTrialEnv(t)
	e.writeIntent("40-usb.json", `{"version": 1, "interfaces": [{"name": "usb0", "type": "physical", "addresses": ["10.77.0.1/24"]}]}`)
	e.waitFor("the file's item blocked", func() (bool, string) {
		st, err := e.status()
		it, ok := daemonItem(st, "address/usb0/10.77.0.1/24")
		return err == nil && ok && it.State == status.StateBlocked, fmt.Sprint(it, err)
	})
	want := cli.trialSnapshot()
	bad := filepath.Join(t.TempDir(), "bad.json")
	if err := os.WriteFile(bad, []byte(`{"version": 1,
  "interfaces": [{"name": "br9", "type": "bridge", "addresses": ["10.99.0.1/24"]},
    {"name": "nosuch0", "type": "physical", "addresses": ["10.98.0.1/24"]}],
  "sysctls": {"net.ipv4.conf.all.rp_filter": "2"}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	res := e.netagent("try", "--via-daemon", "--timeout", "5m", "--wait", "1s", bad)
	if res.code != 7 || !strings.Contains(res.stderr, "stayed blocked") || !strings.Contains(res.stderr, "nosuch0") {
		t.Fatalf("want exit 7, the blocked item named: %s", res)
	}
	if got := cli.trialSnapshot(); got != want {
		t.Fatalf("the revert is not exact:\n%s", lineDiff(want, got))
	}
	if res := e.netagent("try", "--via-daemon", "--detach", "--timeout", "5m", "--wait", "1s", doc); res.code != 0 {
		t.Fatalf("a trial beside the file's blocked item: %s", res)
	}
}
