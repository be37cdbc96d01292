package agent

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/netagent/netagent/agent/api"
	"github.com/netagent/netagent/agent/host"
	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/items"
)

// A confirm and a rollback of the same trial sent at once, round after
// round: exactly one wins each round. The loser gets a distinct error (the
// rollback: ErrTrialEnded with how the trial ended; the confirm: the same,
// or ErrNoTrial when it named no trial), never the other meaning of a
// rollback (going back a version, which would set the confirmed document
// aside). The kernel and the intent directory say the same as the winner.
func TestTrialConfirmAndRollbackAtOnce(t *testing.T) {
	r := newTrialRig(t)
	wins := map[string]int{}
	for round := range 40 {
		name := fmt.Sprintf("30-trial-%d.json", round)
		doc := fmt.Sprintf(`{"version": 1, "routes": [{"to": "10.%d.0.0/24", "via": "192.0.2.1", "dev": "uplink0"}]}`, round)
		ref := dg.ItemRef{Type: items.TypeRoute, Name: fmt.Sprintf("main 10.%d.0.0/24 metric 0", round)}
		resp := r.call(api.Request{Command: api.CmdTry, Intent: json.RawMessage(doc), Timeout: "5m", Name: name})
		if resp.Error != "" || resp.Status.Trial == nil || resp.Status.Trial.ID == "" {
			t.Fatalf("round %d: try: %+v", round, resp)
		}
		id := resp.Status.Trial.ID
		confirm := api.Request{Command: api.CmdConfirm, Trial: id}
		if round%2 == 1 {
			confirm.Trial = "" // a confirm of whichever trial is pending
		}
		var got [2]api.Response
		var wg sync.WaitGroup
		start := make(chan struct{})
		order := []int{0, 1}
		if round%4 >= 2 { // which one the scheduler sees first
			order = []int{1, 0}
		}
		reqs := []api.Request{confirm, {Command: api.CmdRollback, Trial: id}}
		for _, i := range order {
			wg.Go(func() {
				<-start
				got[i] = r.call(reqs[i])
			})
		}
		close(start)
		wg.Wait()
		c, rb := got[0], got[1]
		_, statErr := os.Stat(filepath.Join(r.intentDir, name))
		switch {
		case c.Error == "" && rb.Error == "":
			t.Fatalf("round %d: both won: confirm %+v, rollback %+v", round, c.Status.LastTrial, rb.Status)
		case c.Error != "" && rb.Error != "":
			t.Fatalf("round %d: neither won: confirm %q, rollback %q", round, c.Error, rb.Error)
		case c.Error == "":
			wins["confirm"]++
			if !strings.Contains(rb.Error, api.ErrTrialEnded.Error()) || rb.TrialEnded == nil || rb.TrialEnded.Result != "confirmed" || rb.Status != nil {
				t.Fatalf("round %d: the rollback after the confirm: %+v", round, rb)
			}
			if !r.k.has(ref) || statErr != nil {
				t.Fatalf("round %d: confirmed, but the route %v, the file %v", round, r.k.has(ref), statErr)
			}
		default:
			wins["rollback"]++
			wantErr := api.ErrTrialEnded.Error()
			if confirm.Trial == "" {
				wantErr = host.ErrNoTrial.Error()
			}
			if !strings.Contains(c.Error, wantErr) || (confirm.Trial != "" && (c.TrialEnded == nil || c.TrialEnded.Result != "reverted")) {
				t.Fatalf("round %d: the confirm after the rollback: %+v", round, c)
			}
			if r.k.has(ref) || !errors.Is(statErr, os.ErrNotExist) {
				t.Fatalf("round %d: rolled back, but the route %v, the file %v", round, r.k.has(ref), statErr)
			}
		}
		if st := r.status(); st.Trial != nil || st.Override != "" {
			t.Fatalf("round %d: after both: trial %+v, override %q", round, st.Trial, st.Override)
		}
	}
	t.Logf("wins: %v", wins)
}

// A rollback of versions (no trial named) while a trial is pending is
// refused and leaves the trial pending; a rollback naming a trial that is
// not the pending one is refused too.
func TestTrialRollbackMustNameTheTrial(t *testing.T) {
	r := newTrialRig(t)
	resp := r.call(api.Request{Command: api.CmdTry, Intent: json.RawMessage(twoRoutesDoc), Timeout: "5m"})
	if resp.Status.Trial == nil {
		t.Fatalf("try: %+v", resp)
	}
	if got := r.call(api.Request{Command: api.CmdRollback}); !strings.Contains(got.Error, "a trial is pending") || r.status().Trial == nil || !r.k.has(route2Ref) {
		t.Fatalf("a rollback of versions during a trial: %+v", got)
	}
	if got := r.call(api.Request{Command: api.CmdRollback, Trial: "2001-01-01T00:00:00Z"}); !strings.Contains(got.Error, api.ErrTrialEnded.Error()) ||
		!strings.Contains(got.Error, "the pending trial is "+resp.Status.Trial.ID) || r.status().Trial == nil {
		t.Fatalf("a rollback naming another trial: %+v", got)
	}
	if got := r.call(api.Request{Command: api.CmdConfirm, Trial: "2001-01-01T00:00:00Z"}); !strings.Contains(got.Error, api.ErrTrialEnded.Error()) || r.status().Trial == nil {
		t.Fatalf("a confirm naming another trial: %+v", got)
	}
	if got := r.rollbackTrial(); got.Error != "" || r.k.has(route2Ref) {
		t.Fatalf("the rollback naming the trial: %+v", got)
	}
}
