//go:build !vmtest

package netns_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/netagent/netagent/agent/host"
)

// A daemon killed (SIGKILL) in the middle of a confirm, at each of its
// steps (NETAGENT_TEST_KILL_AT), and started again on the same state
// directory: its status says what is in force, and the kernel matches
// the intent directory. Killed after the confirm was recorded but before
// the file was written: reverted, the kernel the pre-trial one, no file.
// Killed after the file was written but before the trial ended: the
// confirm is completed (lastTrial confirmed, the file named), the trial's
// content in force, nothing reverted; before, the trial was reverted and
// then applied again from the file while status said "reverted".
func TestDaemonTrialKilledWhileConfirming(t *testing.T) {
	for _, tc := range []struct {
		at     string
		result string
	}{{"confirm-recorded", "reverted"}, {"confirm-written", "confirmed"}} {
		t.Run(tc.at, func(t *testing.T) {
			t.Parallel()
			e, cli, doc := daemonTrialEnv(t)
			want := cli.trialSnapshot()
			e.stop()
			e.wrap = []string{"env", "NETAGENT_TEST_KILL_AT=" + tc.at}
			e.start()
			if res := e.netagent("try", "--via-daemon", "--detach", "--timeout", "5m", "--name", "30-trial.json", doc); res.code != 0 {
				t.Fatalf("try: %s", res)
			}
			tried := cli.trialSnapshot()
			if tried == want {
				t.Fatal("the trial changed nothing")
			}
			pending, err := host.PendingTrial(e.stateDir)
			if err != nil || pending == nil {
				t.Fatalf("no pending trial: %v", err)
			}
			if res := e.netagent("confirm"); res.code == 0 {
				t.Fatalf("confirm succeeded, the daemon was to be killed: %s", res)
			}
			<-e.exited
			e.cmd, e.wrap = nil, nil
			e.start()
			st := e.mustStatus()
			o := st.LastTrial
			if o == nil || o.Result != tc.result || st.Trial != nil {
				t.Fatalf("after the restart: lastTrial %+v, trial %+v", o, st.Trial)
			}
			if p, err := host.PendingTrial(e.stateDir); err != nil || p != nil {
				t.Errorf("the trial is still pending: %+v %v", p, err)
			}
			file := filepath.Join(e.intentDir, "30-trial.json")
			_, statErr := os.Stat(file)
			switch tc.result {
			case "reverted":
				if statErr == nil {
					t.Errorf("%s written, the trial reverted", file)
				}
				if got := cli.trialSnapshot(); got != want {
					t.Fatalf("the kernel is not the pre-trial one:\n%s", lineDiff(want, got))
				}
			case "confirmed":
				if statErr != nil || o.File != file || !strings.Contains(o.Reason, "started again") {
					t.Errorf("the confirmed file %s: %v; outcome %+v", file, statErr, o)
				}
				if got := cli.trialSnapshot(); got != tried {
					t.Fatalf("the kernel is not the trial's:\n%s", lineDiff(tried, got))
				}
				if !strings.Contains(e.logs.String(), "confirmed the pending trial") {
					t.Errorf("the restart does not say it confirmed the trial:\n%s", e.logs)
				}
				if strings.Contains(e.logs.String(), "reverted the pending trial") {
					t.Errorf("the restart reverted the trial:\n%s", e.logs)
				}
			}
		})
	}
}
