package agent

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/netagent/netagent/agent/api"
	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/items"
)

// extraDoc is an intent file that an operator adds while a trial is
// pending; extraRef its route.
const extraDoc = `{"version": 1,
	"routes": [{"to": "100.64.0.0/24", "via": "192.0.2.1", "dev": "uplink0"}]}`

var extraRef = dg.ItemRef{Type: items.TypeRoute, Name: "main 100.64.0.0/24 metric 0"}

// tryAsync sends a trial request in the background; its answer comes on
// the channel returned.
func (tr *trialRig) tryAsync(req api.Request) <-chan api.Response {
	req.Command = api.CmdTry
	out := make(chan api.Response, 1)
	go func() {
		resp, err := tr.a.Call(context.Background(), req)
		if err != nil {
			resp.Error = err.Error()
		}
		out <- resp
	}()
	return out
}

// While a trial's probes run, the loop goes on: status answers (and shows
// the probing), a link event and a file change are handled, a confirm is
// refused; the try call is answered when the probes pass.
func TestTrialProbesRunOutsideTheLoop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newTrialRig(t)
		probes := r.gateProbes(false)
		answer := r.tryAsync(api.Request{Intent: json.RawMessage(twoRoutesDoc), Timeout: "5m", Probes: []string{"ping:192.0.2.1"}})
		pc := <-probes
		if !slices.Equal(pc.specs, []string{"ping:192.0.2.1"}) {
			t.Fatalf("probe specs %v", pc.specs)
		}
		st := r.status()
		if st.Trial == nil || !st.Trial.Probing || !r.k.has(route2Ref) {
			t.Fatalf("status while probing: %+v", st.Trial)
		}
		r.k.setLink(&items.Link{IfName: "eth9", Index: 9, Kind: "veth", AdminUp: true})
		r.linkEvent("eth9")
		r.src.set("20-extra.json", extraDoc)
		time.Sleep(3 * time.Second) // both bursts end
		synctest.Wait()
		if !slices.Contains(r.reasons(), reasonLink) || !r.k.has(extraRef) {
			t.Fatalf("while probing: reconciles %v, the new file's route applied %v", r.reasons(), r.k.has(extraRef))
		}
		if got := r.call(api.Request{Command: api.CmdConfirm}); !strings.Contains(got.Error, "still being checked") {
			t.Fatalf("confirm while probing: %+v", got)
		}
		select {
		case resp := <-answer:
			t.Fatalf("try answered before its probes passed: %+v", resp)
		default:
		}
		pc.result <- nil
		resp := <-answer
		if resp.Error != "" || resp.Status == nil || resp.Status.Trial == nil || resp.Status.Trial.Probing || len(resp.Operations) == 0 {
			t.Fatalf("try after the probes passed: %+v", resp)
		}
		if got := r.call(api.Request{Command: api.CmdConfirm}); got.Error != "" {
			t.Fatalf("confirm: %+v", got)
		}
	})
}

// A probe round's outcome that comes after its trial ended (rolled back,
// at the deadline) is ignored: it neither reverts nor confirms the next
// trial. The waiting try call gets the revert.
func TestTrialLateProbeOutcomeIgnored(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newTrialRig(t)
		probes := r.gateProbes(true)
		req := api.Request{Intent: json.RawMessage(twoRoutesDoc), Timeout: "10s", ProbeTimeout: "1m", Probes: []string{"ping:192.0.2.1"}}
		answerA := r.tryAsync(req)
		pcA := <-probes
		if got := r.rollbackTrial(); got.Error != "" || got.Status.Trial != nil {
			t.Fatalf("rollback while probing: %+v", got)
		}
		if resp := <-answerA; resp.Status == nil || resp.Status.LastTrial == nil || resp.Status.LastTrial.Reason != "rolled back on request" {
			t.Fatalf("the waiting try after the rollback: %+v", resp)
		}
		if pcA.ctx.Err() == nil {
			t.Error("the probes of the rolled back trial were not cancelled")
		}

		answerB := r.tryAsync(req)
		pcB := <-probes
		pcA.result <- errors.New("no reply") // late: trial A is over
		synctest.Wait()
		if st := r.status(); st.Trial == nil || !st.Trial.Probing || !r.k.has(route2Ref) {
			t.Fatalf("trial B after trial A's late failure: %+v %+v", st.Trial, st.LastTrial)
		}
		if dl, _ := pcB.ctx.Deadline(); !dl.Equal(r.status().Trial.Deadline) {
			t.Errorf("the probes may run past the trial's deadline: %v", dl)
		}
		time.Sleep(10*time.Second + time.Millisecond) // B's deadline, its probes still running
		synctest.Wait()
		resp := <-answerB
		if resp.Status == nil || resp.Status.Trial != nil || !strings.HasPrefix(resp.Status.LastTrial.Reason, "timeout") || r.k.has(route2Ref) {
			t.Fatalf("trial B at its deadline: %+v", resp)
		}
		pcB.result <- nil // late: passes, but B is over
		synctest.Wait()
		st := r.status()
		if st.Trial != nil || r.k.has(route2Ref) || !strings.HasPrefix(st.LastTrial.Reason, "timeout") {
			t.Fatalf("after trial B's late pass: %+v %+v", st.Trial, st.LastTrial)
		}
		if got := strings.Join(r.trials.events, ","); got != "begin,revert,begin,revert" {
			t.Errorf("target trials %s", got)
		}
	})
}

// KeepPartial keeps a trial whose item failed (it stands, and the failed
// item is retried); ProbeTimeout bounds the probe round, whose failure
// names it.
func TestTrialKeepPartialAndProbeTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newTrialRig(t)
		r.k.failNext(route2Ref, 1)
		resp := r.call(api.Request{Command: api.CmdTry, Intent: json.RawMessage(twoRoutesDoc), KeepPartial: true})
		if resp.Error != "" || resp.Status.Trial == nil || !resp.Status.Trial.KeepPartial || !r.k.has(routeRef) || r.k.has(route2Ref) {
			t.Fatalf("a partial trial with keep partial: %+v", resp)
		}
		time.Sleep(time.Second) // the retry of the failed item
		synctest.Wait()
		if !r.k.has(route2Ref) || r.status().Trial == nil {
			t.Fatal("the failed item of the kept trial was not retried")
		}
		r.rollbackTrial()

		probes := r.gateProbes(false)
		start := time.Now()
		answer := r.tryAsync(api.Request{Intent: json.RawMessage(twoRoutesDoc), Timeout: "1m", ProbeTimeout: "3s", Probes: []string{"tcp:192.0.2.1:22"}})
		pc := <-probes
		if dl, ok := pc.ctx.Deadline(); !ok || dl.Sub(start) != 3*time.Second {
			t.Fatalf("the probe round's deadline %v after the try (want 3s)", dl.Sub(start))
		}
		resp = <-answer // the fake gives up when its context ends
		if o := resp.Status.LastTrial; resp.Status.Trial != nil || o == nil || !strings.HasPrefix(o.Reason, "probe failed: not passed within 3s") {
			t.Fatalf("a probe round past its timeout: %+v", resp.Status.LastTrial)
		}
		for _, bad := range []api.Request{{ProbeTimeout: "0s"}, {ProbeTimeout: "x"}, {Probes: []string{"smoke:signals"}}} {
			bad.Command, bad.Intent = api.CmdTry, json.RawMessage(twoRoutesDoc)
			if resp := r.call(bad); resp.Error == "" || r.status().Trial != nil {
				t.Errorf("%+v: %+v", bad, resp)
			}
		}
	})
}

// An intent file changed while a trial is pending is a version of its own
// at once (the documents without the trial), saved as accepted, and in the
// target's trial record as the intent before the trial; the trial stays
// applied on top. A revert returns to the documents before the trial plus
// the file; a confirm keeps both.
func TestTrialFileChangeDuringTrial(t *testing.T) {
	for _, end := range []string{api.CmdRollback, api.CmdConfirm} {
		t.Run(end, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				r := newTrialRig(t)
				if resp := r.call(api.Request{Command: api.CmdTry, Intent: json.RawMessage(twoRoutesDoc), Timeout: "5m"}); resp.Status.Trial == nil {
					t.Fatalf("try: %+v", resp)
				}
				r.src.set("20-extra.json", extraDoc)
				time.Sleep(time.Second)
				synctest.Wait()
				st := r.status()
				if st.Trial == nil || !r.k.has(extraRef) || !r.k.has(route2Ref) {
					t.Fatalf("the file change during the trial: trial %+v, its route %v", st.Trial, r.k.has(extraRef))
				}
				if st.Version != 2 || r.versionCount() != 2 {
					t.Fatalf("the file change is no version: version %d, %d versions", st.Version, r.versionCount())
				}
				if _, err := os.Stat(filepath.Join(r.stateDir, "accepted", "20-extra.json")); err != nil {
					t.Errorf("the changed file is not saved as accepted: %v", err)
				}
				if _, err := os.Stat(filepath.Join(r.stateDir, "accepted", apiDocName)); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("the trial's document was saved as accepted: %v", err)
				}
				if u := r.trials.updates; len(u) != 1 || string(u[0]["20-extra.json"]) != extraDoc || u[0][apiDocName] != nil {
					t.Errorf("the trial's record was not told the intent before it: %q", u)
				}
				resp := r.call(api.Request{Command: end, Trial: st.Trial.ID})
				if resp.Error != "" {
					t.Fatalf("%s: %+v", end, resp)
				}
				st = *resp.Status
				if !r.k.has(extraRef) || r.k.has(routeRef) != (end == api.CmdConfirm) {
					t.Fatalf("after %s: the file's route %v, the trial's %v", end, r.k.has(extraRef), r.k.has(routeRef))
				}
				want := map[string]int{api.CmdRollback: 2, api.CmdConfirm: 3}[end]
				if st.Version != want || r.versionCount() != want {
					t.Fatalf("after %s: version %d, %d versions (want %d)", end, st.Version, r.versionCount(), want)
				}
				if f := fileNamed(t, st, "20-extra.json"); !f.Conditions[3].Status {
					t.Errorf("the file is not ready after %s: %+v", end, f)
				}
			})
		})
	}
}

// While a trial is pending, an apply over the socket is refused (the API
// document is the trial's), and confirm never overwrites a file of the
// trial's name written meanwhile: both leave the trial pending.
func TestTrialRefusesApplyAndOverwritingAFile(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newTrialRig(t)
		if resp := r.call(api.Request{Command: api.CmdTry, Intent: json.RawMessage(twoRoutesDoc), Timeout: "5m", Name: "30-try.json"}); resp.Status.Trial == nil {
			t.Fatalf("try: %+v", resp)
		}
		if resp := r.call(api.Request{Command: api.CmdApply, Intent: json.RawMessage(routeDoc)}); !strings.Contains(resp.Error, "a trial is pending") || !r.k.has(route2Ref) {
			t.Fatalf("apply during the trial: %+v", resp)
		}
		path := filepath.Join(r.intentDir, "30-try.json")
		if err := os.WriteFile(path, []byte(extraDoc), 0o600); err != nil {
			t.Fatal(err)
		}
		if resp := r.call(api.Request{Command: api.CmdConfirm}); !strings.Contains(resp.Error, "exists now") || r.status().Trial == nil {
			t.Fatalf("confirm over an operator's file: %+v", resp)
		}
		if data, _ := os.ReadFile(path); string(data) != extraDoc {
			t.Fatalf("the operator's file was overwritten: %s", data)
		}
		os.Remove(path)
		if resp := r.call(api.Request{Command: api.CmdConfirm}); resp.Error != "" {
			t.Fatalf("confirm: %+v", resp)
		}
	})
}

// nicDoc is a trial that gives an address to the NIC name, which may not
// be there: its address is blocked until it is.
func nicDoc(name string) string {
	return `{"version": 1, "interfaces": [{"name": "` + name + `", "type": "physical", "addresses": ["10.9.9.1/24"]}]}`
}

func nicLink(name string, index int) *items.Link {
	return &items.Link{IfName: name, Index: index, Kind: "veth", AdminUp: true, OperUp: true, Carrier: true,
		MAC: []byte{2, 0, 0, 0, 1, byte(index)}}
}

// A trial whose items are blocked waits, up to its Wait, for the link
// events that unblock them (the loop going on meanwhile, confirm refused):
// unblocked, it stands; still blocked at the end, it reverts as a failed
// item does (unless KeepPartial).
func TestTrialWaitsForItsBlockedItems(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newTrialRig(t)
		answer := r.tryAsync(api.Request{Intent: json.RawMessage(nicDoc("eth9")), Timeout: "5m", Wait: "5s"})
		synctest.Wait()
		if st := r.status(); st.Trial == nil || !st.Trial.Settling {
			t.Fatalf("a trial with blocked items: %+v", st.Trial)
		}
		if got := r.call(api.Request{Command: api.CmdConfirm}); !strings.Contains(got.Error, "still being checked") {
			t.Fatalf("confirm while settling: %+v", got)
		}
		r.k.setLink(nicLink("eth9", 9))
		r.linkEvent("eth9")
		resp := <-answer
		if resp.Error != "" || resp.Status.Trial == nil || resp.Status.Trial.Settling || !r.k.has(dg.ItemRef{Type: items.TypeAddress, Name: "eth9/10.9.9.1/24"}) {
			t.Fatalf("the trial once its link came: %+v", resp.Status.Trial)
		}
		r.rollbackTrial()

		answer = r.tryAsync(api.Request{Intent: json.RawMessage(nicDoc("eth8")), Timeout: "5m", Wait: "5s"})
		resp = <-answer // 5 s later
		if o := resp.Status.LastTrial; resp.Status.Trial != nil || o == nil || !strings.Contains(o.Reason, "items failed or stayed blocked") {
			t.Fatalf("a trial still blocked at the end of its wait: %+v", resp.Status.LastTrial)
		}

		answer = r.tryAsync(api.Request{Intent: json.RawMessage(nicDoc("eth8")), Timeout: "5m", Wait: "0s", KeepPartial: true})
		if resp := <-answer; resp.Error != "" || resp.Status.Trial == nil || resp.Status.Trial.Settling {
			t.Fatalf("a blocked trial with keep partial: %+v", resp.Status.Trial)
		}
	})
}

// Items failed or blocked before a trial, in the files, are not the
// trial's doing: they neither revert it nor hold it up.
func TestTrialIgnoresProblemsFromBeforeIt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newTrialRig(t)
		r.k.failNext(extraRef, 1_000_000)
		r.src.set("20-extra.json", extraDoc)      // fails
		r.src.set("30-eth7.json", nicDoc("eth7")) // blocked: no eth7
		time.Sleep(time.Second)
		synctest.Wait()
		if st := r.status(); st.Ready {
			t.Fatal("the files' problems did not show")
		}
		resp := r.call(api.Request{Command: api.CmdTry, Intent: json.RawMessage(twoRoutesDoc), Timeout: "5m"})
		if resp.Error != "" || resp.Status.Trial == nil || resp.Status.Trial.Settling || !r.k.has(route2Ref) {
			t.Fatalf("a trial beside failed and blocked files' items: %+v %+v", resp.Status.Trial, resp.Status.LastTrial)
		}
	})
}
