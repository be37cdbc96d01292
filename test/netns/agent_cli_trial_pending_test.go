//go:build !vmtest

package netns_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vishvananda/netlink"

	"github.com/netagent/netagent/internal/statefile"
	"golang.org/x/sys/unix"
)

// pendingTrialEnv is trialEnv with 100 routes in the trial, and the trial
// left pending: `netagent try` killed (SIGKILL, at its last kill point
// of the apply) once the trial's changes are in the kernel. It returns
// the snapshot from before the trial and the trial's pid.
func pendingTrialEnv(t *testing.T) (e *cliEnv, trial, before string, pid int) {
	e, _, trial = trialEnvRoutes(t, 100)
	before = e.trialSnapshot()
	full := e.trialRun([]string{"NETAGENT_TEST_KILL_AFTER=100000000"}, "--timeout", "0s", trial)
	apply, _ := killPoints(t, full)
	if res := e.trialRun([]string{fmt.Sprintf("NETAGENT_TEST_KILL_AFTER=%d", apply)}, "--timeout", "0s", trial); res.code != -1 {
		t.Fatalf("not killed: %s", res)
	}
	data, err := statefile.LoadRecord(filepath.Join(e.stateDir, "trial", "trial.json"))
	if err != nil {
		t.Fatalf("no pending trial: %v", err)
	}
	var rec struct {
		PID int `json:"pid"`
	}
	if err := json.Unmarshal(data, &rec); err != nil {
		t.Fatal(err)
	}
	return e, trial, before, rec.PID
}

// A dry run writes nothing, also with a trial pending that a killed
// `netagent try` left: plan and check leave the kernel as the trial left
// it and the trial pending, exit non-zero, name the trial and say to run
// `netagent recover`; recover then reverts it exactly.
func TestTrialPendingDryRunsWriteNothing(t *testing.T) {
	e, trial, before, pid := pendingTrialEnv(t)
	during := e.trialSnapshot()
	if during == before {
		t.Fatal("the killed trial changed nothing")
	}
	for _, cmd := range []string{"plan", "check"} {
		res := e.netagent(cmd, trial)
		if res.code == 0 || !strings.Contains(res.stderr, fmt.Sprintf("trial of pid %d", pid)) || !strings.Contains(res.stderr, "`netagent recover`") {
			t.Errorf("%s with a pending trial: want exit non-zero naming the trial (pid %d) and `netagent recover`: %s", cmd, pid, res)
		}
		if strings.Contains(res.stderr, "reverted") {
			t.Errorf("%s says it reverted: %s", cmd, res)
		}
		if got := e.trialSnapshot(); got != during {
			t.Fatalf("%s changed the kernel:\n%s", cmd, lineDiff(during, got))
		}
		if _, err := os.Stat(filepath.Join(e.stateDir, "trial", "trial.json")); err != nil {
			t.Fatalf("%s: the trial is no longer pending: %v", cmd, err)
		}
	}
	if res := e.mustRun(0, "recover"); !strings.Contains(res.stderr, "reverted the pending trial") {
		t.Errorf("recover: %s", res)
	}
	if got := e.trialSnapshot(); got != before {
		t.Fatalf("recover is not exact:\n%s", lineDiff(before, got))
	}
}

// createTrialIntents are an intent with the uplink only, and a trial that
// creates bridges with addresses and routes through them.
func createTrialIntents(e *cliEnv, bridges, routes int) (before, trial string) {
	before = e.writeFile("before.json", `{"version": 1,
  "interfaces": [{"name": "uplink0", "type": "physical", "addresses": ["192.0.2.10/24"]}]}`)
	ifaces := []string{`{"name": "uplink0", "type": "physical", "addresses": ["192.0.2.10/24"]}`}
	var rs []string
	for i := range bridges {
		ifaces = append(ifaces, fmt.Sprintf(`{"name": "kb%d", "type": "bridge", "bridge": {"stp": false}, "addresses": ["10.%d.%d.1/24"]}`, i, 40+i/256, i%256))
	}
	for i := range routes {
		b := i % bridges
		rs = append(rs, fmt.Sprintf(`{"to": "10.%d.%d.0/24", "via": "10.%d.%d.254"}`, 100+i/256, i%256, 40+b/256, b%256))
	}
	trial = e.writeFile("trial.json", `{"version": 1, "interfaces": [`+strings.Join(ifaces, ",\n")+`],
  "routes": [`+strings.Join(rs, ",\n")+`]}`)
	return before, trial
}

// unmarked names the bridges kb* that lack netagent's mark.
func (e *cliEnv) unmarked() []string {
	var out []string
	for _, l := range e.ipJSON("link", "show", "type", "bridge") {
		if name := l["ifname"].(string); strings.HasPrefix(name, "kb") && l["ifalias"] != "netagent" {
			out = append(out, name)
		}
	}
	return out
}

// A trial killed between a link's add and its mark (the create journal's
// window, links.json) is reverted exactly: recover deletes the unmarked
// link too. `netagent try` is killed at every kill point of its apply,
// those between each bridge's add and its mark included, and recover
// must restore the snapshot from before the trial each time.
func TestTrialKilledBetweenAddAndMarkReverts(t *testing.T) {
	e := cliNewEnv(t)
	before, trial := createTrialIntents(e, 3, 12)
	e.mustRun(0, "apply", before)
	want := e.trialSnapshot()
	full := e.trialRun([]string{"NETAGENT_TEST_KILL_AFTER=100000000"}, "--timeout", "0s", trial)
	if full.code != 6 {
		t.Fatalf("the whole trial: want exit 6, got %s", full)
	}
	apply, _ := killPoints(t, full)
	window := 0
	for k := 1; k <= apply; k++ {
		res := e.trialRun([]string{fmt.Sprintf("NETAGENT_TEST_KILL_AFTER=%d", k)}, "--timeout", "0s", trial)
		if res.code != -1 {
			t.Fatalf("kill point %d: the trial was not killed: %s", k, res)
		}
		if len(e.unmarked()) > 0 {
			window++
		}
		if rec := e.netagent("recover"); rec.code != 0 || !strings.Contains(rec.stderr, "reverted the pending trial") {
			t.Fatalf("recover after kill point %d: %s", k, rec)
		}
		if got := e.trialSnapshot(); got != want {
			t.Fatalf("after kill point %d of the apply's %d, recover is not exact:\n%s", k, apply, lineDiff(want, got))
		}
	}
	if window == 0 {
		t.Fatalf("no kill point of the %d fell between a bridge's add and its mark", apply)
	}
	t.Logf("%d kill points, %d between an add and its mark", apply, window)
}

// The case with a real SIGKILL from outside: `netagent try` of 100
// bridges and 3,000 routes killed as the kernel reports the k-th bridge's
// add (counted in the namespace's own link notifications, often before
// its mark), then `netagent recover`: the namespace equals the snapshot
// from before the trial.
func TestTrialSIGKILLDuringCreatesReverts(t *testing.T) {
	e := cliNewEnv(t)
	before, trial := createTrialIntents(e, 100, 3000)
	e.mustRun(0, "apply", before)
	want := e.trialSnapshot()
	for _, k := range []int{1, 37, 99} {
		adds, stop := e.bridgeAdds()
		cmd := exec.Command(e.bin, "--state-dir", e.stateDir, "try", "--netns", e.tgt.Name, "--timeout", "60s", trial)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		for adds() < k {
			select {
			case err := <-exited:
				t.Fatalf("try ended before the kill at bridge %d (%d adds seen; subscription: %v): %v", k, adds(), stop(), err)
			case <-time.After(time.Millisecond):
			}
		}
		_ = cmd.Process.Kill()
		<-exited
		if err := stop(); err != nil {
			t.Fatalf("counting the bridges' adds: %v", err)
		}
		unmarked := len(e.unmarked()) > 0
		if rec := e.netagent("recover"); rec.code != 0 || !strings.Contains(rec.stderr, "reverted the pending trial") {
			t.Fatalf("recover after the kill at bridge %d: %s", k, rec)
		}
		if got := e.trialSnapshot(); got != want {
			t.Fatalf("after the kill at bridge %d (an unmarked bridge: %v), recover is not exact:\n%s", k, unmarked, lineDiff(want, got))
		}
		t.Logf("killed at bridge %d: an unmarked bridge left by the kill: %v", k, unmarked)
	}
}

// bridgeAdds counts the RTM_NEWLINKs of links kb* (their adds, marks,
// settings) in the namespace from now on, from a subscription to links
// only, read without ever blocking (so that the kernel never drops
// notifications); stop ends it and says whether the subscription failed.
func (e *cliEnv) bridgeAdds() (count func() int, stop func() error) {
	e.t.Helper()
	updates := make(chan netlink.LinkUpdate, 1024)
	done := make(chan struct{})
	var n atomic.Int64
	var failed atomic.Value
	ns := e.tgt.NsHandle()
	err := netlink.LinkSubscribeWithOptions(updates, done, netlink.LinkSubscribeOptions{Namespace: &ns,
		ReceiveBufferSize: 32 << 20, ReceiveBufferForceSize: true, // room for every notification of the burst
		ErrorCallback: func(err error) { failed.CompareAndSwap(nil, err) }})
	if err != nil {
		e.t.Fatalf("subscribing to links: %v", err)
	}
	go func() {
		for u := range updates {
			if u.Header.Type == unix.RTM_NEWLINK && strings.HasPrefix(u.Attrs().Name, "kb") {
				n.Add(1)
			}
		}
	}()
	return func() int { return int(n.Load()) }, func() error {
		err, _ := failed.Load().(error)
		close(done)
		return err
	}
}

// A damaged trial journal is never reverted as if it were whole: with the
// journal of a pending trial emptied, cut short in a record, deleted,
// overwritten with garbage, or its first record's checksum broken,
// `netagent recover` changes nothing, exits non-zero, says
// RevertIncomplete naming what is missing, and the trial stays pending
// (status says so too); `recover --accept-incomplete` then reverts what
// the journal still holds and drops the trial, saying it did so in part.
func TestTrialRecoverDamagedJournal(t *testing.T) {
	for _, tc := range []struct {
		name, why string
		damage    func(t *testing.T, path string)
	}{
		{"empty", "the journal is empty", func(t *testing.T, path string) { writeOrFail(t, path, nil) }},
		{"truncated", "is cut short", func(t *testing.T, path string) {
			data := readOrFail(t, path)
			cut := len(data) / 2
			for data[cut-1] == '\n' {
				cut++ // in a record, not between two
			}
			writeOrFail(t, path, data[:cut])
		}},
		{"deleted", "the journal is missing", func(t *testing.T, path string) {
			if err := os.Remove(path); err != nil {
				t.Fatal(err)
			}
		}},
		{"garbage", "line 1: not a record, and more follows", func(t *testing.T, path string) {
			writeOrFail(t, path, []byte("\x00\xffgarbage\nmore garbage\n"))
		}},
		{"first line CRC", "line 1: its checksum does not match", func(t *testing.T, path string) {
			data := readOrFail(t, path)
			data[0] = map[bool]byte{true: '1', false: '0'}[data[0] == '0']
			writeOrFail(t, path, data)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, _, before, pid := pendingTrialEnv(t)
			during := e.trialSnapshot()
			if during == before {
				t.Fatal("the killed trial changed nothing")
			}
			tc.damage(t, filepath.Join(e.stateDir, "trial", "journal"))
			res := e.netagent("recover")
			if res.code == 0 || !strings.Contains(res.stderr, "RevertIncomplete") || !strings.Contains(res.stderr, tc.why) ||
				!strings.Contains(res.stderr, "the trial journaled") || !strings.Contains(res.stderr, fmt.Sprintf("pid %d", pid)) {
				t.Errorf("recover of a damaged journal: want exit non-zero, RevertIncomplete naming what is missing (%q): %s", tc.why, res)
			}
			if strings.Contains(res.stderr, "reverted the pending trial") {
				t.Errorf("recover claims a revert: %s", res)
			}
			t.Logf("recover: %s", res.stderr)
			if got := e.trialSnapshot(); got != during {
				t.Errorf("recover changed the kernel:\n%s", lineDiff(during, got))
			}
			if _, err := os.Stat(filepath.Join(e.stateDir, "trial", "trial.json")); err != nil {
				t.Errorf("the trial is no longer pending: %v", err)
			}
			if st := e.run(nil, "--state-dir", e.stateDir, "status"); !strings.Contains(st.stdout, "RevertIncomplete") || !strings.Contains(st.stdout, tc.why) {
				t.Errorf("status does not say the revert is incomplete: %s", st)
			}
			if res := e.netagent("apply", e.writeFile("any.json", `{"version": 1}`)); res.code == 0 || !strings.Contains(res.stderr, "RevertIncomplete") {
				t.Errorf("apply over a trial whose revert is incomplete: %s", res)
			}
			res = e.netagent("recover", "--accept-incomplete")
			if res.code != 0 || !strings.Contains(res.stderr, "only in part") || !strings.Contains(res.stderr, tc.why) {
				t.Errorf("recover --accept-incomplete: %s", res)
			}
			if _, err := os.Stat(filepath.Join(e.stateDir, "trial", "trial.json")); err == nil {
				t.Errorf("the trial is still pending after recover --accept-incomplete")
			}
		})
	}
}

func readOrFail(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func writeOrFail(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

// A damaged trial record (trial.json) is reported, never taken for "no
// trial": recover, apply and plan refuse naming the file and what to do,
// and change nothing; `recover --accept-incomplete` reverts the trial
// from its journal alone and drops it.
func TestTrialRecoverDamagedRecord(t *testing.T) {
	e, trial, before, _ := pendingTrialEnv(t)
	during := e.trialSnapshot()
	record := filepath.Join(e.stateDir, "trial", "trial.json")
	writeOrFail(t, record, []byte(`{"identity": {"boot_id": "`))
	for _, args := range [][]string{{"recover"}, {"apply", trial}, {"plan", trial}} {
		res := e.netagent(args[0], args[1:]...)
		if res.code == 0 || !strings.Contains(res.stderr, record) || !strings.Contains(res.stderr, "is damaged") || !strings.Contains(res.stderr, "--accept-incomplete") {
			t.Errorf("%s with a damaged trial record: want exit non-zero naming %s and what to do: %s", args[0], record, res)
		}
	}
	if got := e.trialSnapshot(); got != during {
		t.Fatalf("the kernel changed:\n%s", lineDiff(during, got))
	}
	res := e.netagent("recover", "--accept-incomplete")
	if res.code != 0 || !strings.Contains(res.stderr, "only in part") || !strings.Contains(res.stderr, "trial.json") {
		t.Fatalf("recover --accept-incomplete: %s", res)
	}
	if _, err := os.Stat(record); err == nil {
		t.Error("the damaged trial is still pending")
	}
	if got := e.trialSnapshot(); got != before {
		t.Errorf("the revert from the journal alone is not exact:\n%s", lineDiff(before, got))
	}
}
