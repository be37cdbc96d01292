package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/netagent/netagent/agent/api"
	"github.com/netagent/netagent/agent/host"
	"github.com/netagent/netagent/agent/source"
	"github.com/netagent/netagent/agent/trial"
	"github.com/netagent/netagent/agent/versions"
)

// trialDirSource is an intent directory as a source, without a watcher
// (the tests load it through the confirm).
type trialDirSource struct{ dir string }

func (s trialDirSource) Name() string { return "dir:" + s.dir }

func (s trialDirSource) Load() (map[string][]byte, error) {
	out := map[string][]byte{}
	ents, err := os.ReadDir(s.dir)
	if err != nil {
		return nil, err
	}
	for _, e := range ents {
		if source.IsIntentFile(e.Name()) {
			data, err := os.ReadFile(filepath.Join(s.dir, e.Name()))
			if err != nil {
				return nil, err
			}
			out[e.Name()] = data
		}
	}
	return out, nil
}

func (s trialDirSource) Watch(ctx context.Context, _ chan<- string) { <-ctx.Done() }

// fakeTrials records what the agent asks of the target's trials.
type fakeTrials struct {
	begun   []host.Trial
	events  []string
	updates []map[string][]byte // the Previous of each Update
}

func (f *fakeTrials) Begin(t host.Trial) (trial.Handle, error) {
	f.begun = append(f.begun, t)
	f.events = append(f.events, "begin")
	return fakeHandle{f}, nil
}

type fakeHandle struct{ f *fakeTrials }

func (h fakeHandle) Confirm() error { h.f.events = append(h.f.events, "confirm"); return nil }
func (h fakeHandle) Confirming(string, []byte) error {
	h.f.events = append(h.f.events, "confirming")
	return nil
}
func (h fakeHandle) Update(files, previous map[string][]byte) error {
	h.f.events = append(h.f.events, "update")
	h.f.updates = append(h.f.updates, previous)
	return nil
}
func (h fakeHandle) Revert(context.Context, string) error {
	h.f.events = append(h.f.events, "revert")
	return nil
}

type trialRig struct {
	*rig
	intentDir, stateDir string
	trials              *fakeTrials
	probeErr            error
	// probes, when set, gets each probe round, which waits for its
	// result (or, unless deaf, for its context to end).
	probes chan probeCall
	deaf   bool
}

// probeCall is a probe round of the fake prober.
type probeCall struct {
	ctx    context.Context
	specs  []string
	result chan error
}

// gateProbes makes every probe round wait for the test (probeCall); deaf:
// it ignores its context ending, like a probe stuck in a syscall.
func (tr *trialRig) gateProbes(deaf bool) chan probeCall {
	tr.probes, tr.deaf = make(chan probeCall), deaf
	return tr.probes
}

func (tr *trialRig) probe(ctx context.Context, specs []string) error {
	if tr.probes == nil {
		return tr.probeErr
	}
	pc := probeCall{ctx: ctx, specs: specs, result: make(chan error, 1)}
	tr.probes <- pc
	if tr.deaf {
		return <-pc.result
	}
	select {
	case err := <-pc.result:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

func newTrialRig(t *testing.T) *trialRig {
	tr := &trialRig{intentDir: t.TempDir(), stateDir: t.TempDir(), trials: &fakeTrials{}}
	tr.rig = newRig(t, map[string]string{"10-uplink.json": uplinkDoc}, func(c *Config) {
		c.StateDir = tr.stateDir
		c.TrialDir = tr.intentDir
		c.Sources = append(c.Sources, trialDirSource{tr.intentDir})
		c.Trials = tr.trials
		c.Probe = tr.probe
	}).start()
	return tr
}

// rollbackTrial rolls the pending trial back, naming it as `netagent
// rollback` does.
func (tr *trialRig) rollbackTrial() api.Response {
	tr.t.Helper()
	st := tr.status()
	if st.Trial == nil {
		tr.t.Fatal("rollback: no trial is pending")
	}
	return tr.call(api.Request{Command: api.CmdRollback, Trial: st.Trial.ID})
}

func (tr *trialRig) intentFiles() []string {
	ents, err := os.ReadDir(tr.intentDir)
	if err != nil {
		tr.t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out
}

func (tr *trialRig) versionCount() int {
	list, err := versions.Open(tr.stateDir, 0).List()
	if err != nil {
		tr.t.Fatal(err)
	}
	return len(list)
}

// A trial applies at once and changes nothing on disk; confirm writes the
// document into the intent directory, records the version, and the
// deadline then passes without a revert.
func TestTrialConfirmWritesTheFileAndRecordsTheVersion(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newTrialRig(t)
		resp := r.call(api.Request{Command: api.CmdTry, Intent: json.RawMessage(twoRoutesDoc), Timeout: "30s", Probes: []string{"ping:192.0.2.1"}})
		if resp.Error != "" || !r.k.has(routeRef) || !r.k.has(route2Ref) {
			t.Fatalf("try: %+v", resp)
		}
		st := resp.Status
		if st.Trial == nil || st.Trial.Name != "trial-2.json" || st.Trial.Deadline.Sub(st.Trial.Since) != 30*time.Second || len(st.Trial.Probes) != 1 {
			t.Fatalf("trial status %+v", st.Trial)
		}
		if st.Version != 1 || r.versionCount() != 1 || len(r.intentFiles()) != 0 {
			t.Fatalf("a pending trial changed the disk: version %d, %d versions, files %v", st.Version, r.versionCount(), r.intentFiles())
		}
		if got := r.call(api.Request{Command: api.CmdTry, Intent: json.RawMessage(routeDoc)}); !strings.Contains(got.Error, "a trial is pending") {
			t.Fatalf("a second trial: %+v", got)
		}
		resp = r.call(api.Request{Command: api.CmdConfirm})
		if resp.Error != "" || resp.Status.Trial != nil || resp.Status.LastTrial == nil || resp.Status.LastTrial.Result != "confirmed" {
			t.Fatalf("confirm: %+v", resp)
		}
		data, err := os.ReadFile(filepath.Join(r.intentDir, "trial-2.json"))
		if err != nil || !sameJSON(data, []byte(twoRoutesDoc)) {
			t.Fatalf("the confirmed file: %q, %v", data, err)
		}
		if resp.Status.Version != 2 || r.versionCount() != 2 {
			t.Fatalf("after confirm: version %d, %d versions", resp.Status.Version, r.versionCount())
		}
		f := fileNamed(t, *resp.Status, "trial-2.json")
		if !f.Conditions[3].Status {
			t.Errorf("the confirmed file is not ready: %+v", f)
		}
		time.Sleep(time.Minute)
		synctest.Wait()
		if !r.k.has(route2Ref) || r.status().Version != 2 {
			t.Fatal("the confirmed trial reverted at its deadline")
		}
		if strings.Join(r.trials.events, ",") != "begin,confirming,confirm" {
			t.Errorf("target trial %v", r.trials.events)
		}
		if p := r.trials.begun[0].Previous; string(p["10-uplink.json"]) != uplinkDoc || len(p) != 1 {
			t.Errorf("the trial's Previous %v", p)
		}
		if got := r.call(api.Request{Command: api.CmdConfirm}); got.Error != host.ErrNoTrial.Error() {
			t.Errorf("confirm without a trial: %+v", got)
		}
	})
}

// At the deadline the trial reverts: the kernel, the versions and the
// intent directory are as before it.
func TestTrialTimeoutReverts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newTrialRig(t)
		resp := r.call(api.Request{Command: api.CmdTry, Intent: json.RawMessage(twoRoutesDoc), Timeout: "10s"})
		if resp.Error != "" || !r.k.has(route2Ref) {
			t.Fatalf("try: %+v", resp)
		}
		time.Sleep(10*time.Second + time.Millisecond)
		synctest.Wait()
		st := r.status()
		if r.k.has(routeRef) || r.k.has(route2Ref) {
			t.Fatal("the trial's routes stayed after the deadline")
		}
		if st.Trial != nil || st.LastTrial == nil || st.LastTrial.Result != "reverted" || !strings.HasPrefix(st.LastTrial.Reason, "timeout") {
			t.Fatalf("status %+v %+v", st.Trial, st.LastTrial)
		}
		if st.Version != 1 || r.versionCount() != 1 || len(r.intentFiles()) != 0 {
			t.Fatalf("after the revert: version %d, %d versions, files %v", st.Version, r.versionCount(), r.intentFiles())
		}
		if _, err := os.Stat(filepath.Join(r.stateDir, "accepted", apiDocName)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("the trial's document was saved as accepted: %v", err)
		}
		if strings.Join(r.trials.events, ",") != "begin,revert" {
			t.Errorf("target trial %v", r.trials.events)
		}
	})
}

// A failing probe, a failed item and a rollback each revert the trial.
func TestTrialRevertsOnProbeFailureFailedItemAndRollback(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newTrialRig(t)
		r.probeErr = errors.New("ping:192.0.2.1: no reply")
		resp := r.call(api.Request{Command: api.CmdTry, Intent: json.RawMessage(twoRoutesDoc), Probes: []string{"ping:192.0.2.1"}})
		if r.k.has(route2Ref) || resp.Status.Trial != nil || !strings.Contains(resp.Status.LastTrial.Reason, "no reply") {
			t.Fatalf("a failing probe: %+v", resp.Status.LastTrial)
		}
		r.probeErr = nil

		r.k.failNext(route2Ref, 1)
		resp = r.call(api.Request{Command: api.CmdTry, Intent: json.RawMessage(twoRoutesDoc)})
		if r.k.has(routeRef) || resp.Status.Trial != nil || !strings.Contains(resp.Status.LastTrial.Reason, "failed") {
			t.Fatalf("a failed item: %+v", resp.Status.LastTrial)
		}

		resp = r.call(api.Request{Command: api.CmdTry, Intent: json.RawMessage(twoRoutesDoc)})
		if resp.Status.Trial == nil || !r.k.has(route2Ref) {
			t.Fatalf("try: %+v", resp)
		}
		resp = r.rollbackTrial()
		if r.k.has(route2Ref) || resp.Status.Trial != nil || resp.Status.LastTrial.Reason != "rolled back on request" {
			t.Fatalf("rollback: %+v", resp.Status.LastTrial)
		}
		if r.versionCount() != 1 || len(r.intentFiles()) != 0 {
			t.Fatalf("%d versions, files %v", r.versionCount(), r.intentFiles())
		}
	})
}

// A trial of a document that does not validate changes nothing.
func TestTrialRejectedChangesNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newTrialRig(t)
		resp := r.call(api.Request{Command: api.CmdTry, Intent: json.RawMessage(`{"version": 1, "routes": [{"to": "bad"}]}`)})
		if resp.Error != "intent rejected" || len(r.trials.events) != 0 || r.status().Trial != nil {
			t.Fatalf("try: %+v", resp)
		}
		for _, bad := range []api.Request{{Timeout: "-1s"}, {Name: "../x.json"}, {Name: "x.txt"}} {
			bad.Command, bad.Intent = api.CmdTry, json.RawMessage(twoRoutesDoc)
			if resp := r.call(bad); resp.Error == "" || r.status().Trial != nil {
				t.Errorf("%+v: %+v", bad, resp)
			}
		}
	})
}

// sameJSON: a and b are the same JSON value, spelled alike or not.
func sameJSON(a, b []byte) bool {
	var x, y bytes.Buffer
	return json.Compact(&x, a) == nil && json.Compact(&y, b) == nil && x.String() == y.String()
}
