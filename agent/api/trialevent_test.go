package api

import (
	"testing"

	"github.com/netagent/netagent/agent/status"
)

// A trial's start event names the probes that failed before it (they do
// not judge it); its end the reason, which names the probe that reverted
// it.
func TestTrialEventFailingBefore(t *testing.T) {
	pending := &status.TrialStatus{FailingBefore: []string{"probe dns:gone.test@198.51.100.1:53: probe failed: no such name (NXDOMAIN)"}}
	e := trialEvent(false, true, pending, nil)
	if want := "trial none -> pending: not counted, failing before the change: probe dns:gone.test@198.51.100.1:53: probe failed: no such name (NXDOMAIN)"; e.String() != want {
		t.Errorf("start: %q, want %q", e.String(), want)
	}
	last := &status.TrialOutcome{Result: "reverted", Reason: "probe failed: probe dns:ok.test failed 3 times in a row after the change", Probe: "dns:ok.test"}
	if e := trialEvent(true, false, nil, last); e.To != "reverted" || e.Message != last.Reason {
		t.Errorf("end: %+v", e)
	}
}
