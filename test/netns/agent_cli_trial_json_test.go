//go:build !vmtest

package netns_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/netagent/netagent/agent/oneshot"
)

// decodeDoc decodes res's stdout, the one JSON document of a --json run.
func decodeDoc[T any](t *testing.T, what string, res cliResult) T {
	t.Helper()
	var doc T
	dec := json.NewDecoder(strings.NewReader(res.stdout))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&doc); err != nil || dec.More() {
		t.Fatalf("%s: stdout is not one document (%v):\n%s", what, err, res)
	}
	return doc
}

// try, confirm and rollback --json (issue 29, point 15): each prints one
// JSON document on stdout, its text on stderr, and exits as it does
// without --json.
func TestTrialJSON(t *testing.T) {
	e, _, trial := trialEnvRoutes(t, 10)

	res := e.trialRun(nil, "--json", "--timeout", "0s", trial)
	if res.code != 6 || !strings.Contains(res.stderr, "reverted: not confirmed") {
		t.Fatalf("try --json, not confirmed: want exit 6 and the text on stderr, got %s", res)
	}
	td := decodeDoc[oneshot.TryDoc](t, "try --json", res)
	if td.Format != 1 || td.Confirmed || td.Refused || td.Reverted == nil || td.Reverted.Fault != "timeout" ||
		!strings.Contains(td.Reverted.Reason, "not confirmed") || len(td.Reverted.Operations) == 0 || td.Error != "" {
		t.Errorf("try --json, not confirmed: %+v", td)
	}

	wait := e.startTrial("--json", "--timeout", "5m", trial)
	res = e.mustRun(0, "confirm", "--json")
	ad := decodeDoc[oneshot.AnswerDoc](t, "confirm --json", res)
	if ad.Format != 1 || ad.Request != "confirm" || !ad.Answered || ad.Result != "confirmed" || ad.PID <= 0 || ad.Daemon != "" {
		t.Errorf("confirm --json: %+v", ad)
	}
	r := wait()
	td = decodeDoc[oneshot.TryDoc](t, "try --json, confirmed", r)
	if r.code != 0 || !td.Confirmed || !strings.Contains(td.How, "netagent confirm") || td.Reverted != nil {
		t.Errorf("try --json, confirmed: exit %d, %+v", r.code, td)
	}
	if res := e.netagent("confirm", "--json"); res.code != 1 || res.stdout != "" || !strings.Contains(res.stderr, "no trial is pending") {
		t.Errorf("confirm --json without a trial: want exit 1, nothing on stdout, got %s", res)
	}

	wait = e.startTrial("--json", "--timeout", "5m", trial)
	res = e.mustRun(0, "rollback", "--json")
	ad = decodeDoc[oneshot.AnswerDoc](t, "rollback --json of a trial", res)
	if ad.Request != "revert" || !ad.Answered || ad.Result != "reverted" {
		t.Errorf("rollback --json of a trial: %+v", ad)
	}
	if r := wait(); r.code != 6 || decodeDoc[oneshot.TryDoc](t, "try --json, reverted on request", r).Reverted == nil {
		t.Errorf("try --json reverted on request: %s", r)
	}
}

// recover --json: an object per namespace (a list with --all), the trial
// a killed try left pending in it, reverted, with its operations.
func TestRecoverJSON(t *testing.T) {
	e, _, _, pid := pendingTrialEnv(t)
	res := e.mustRun(0, "recover", "--json")
	rd := decodeDoc[oneshot.RecoverDoc](t, "recover --json", res)
	if rd.Format != 1 || rd.StateDir != e.stateDir || rd.Netns != e.tgt.Name || rd.Error != "" || rd.Recovered == nil {
		t.Fatalf("recover --json: %+v", rd)
	}
	if rec := rd.Recovered; rec.PID != pid || rec.Confirmed || len(rec.Operations) == 0 || !strings.Contains(rec.Note, "reverted the pending trial of pid") {
		t.Errorf("recover --json, the trial recovered: %+v", rec)
	}
	if !strings.Contains(res.stderr, "reverted the pending trial") {
		t.Errorf("recover --json: the text is not on stderr: %s", res)
	}
	res = e.mustRun(0, "recover", "--json")
	if rd := decodeDoc[oneshot.RecoverDoc](t, "recover --json, nothing pending", res); rd.Recovered != nil || rd.Error != "" {
		t.Errorf("recover --json with nothing pending: %+v", rd)
	}
}
