package main

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/netagent/netagent/agent/api"
	"github.com/netagent/netagent/agent/host"
	"github.com/netagent/netagent/agent/status"
	dg "github.com/netagent/netagent/depgraph"
)

// Names from outside that a terminal would act on: a newline that starts
// a line of its own, a screen clear, a carriage return that rewrites the
// line, a bidi override, a C1 CSI.
const (
	evilFile   = "20-x.json\nnetagent: READY, 0 reconciles"
	evilItem   = "route/\x1b[2Jmain"
	evilReason = "blocked\rREADY \u202etxt \u009b2J"
)

// wantEscaped checks that out has none of the raw bytes and each name in
// its escaped form.
func wantEscaped(t *testing.T, what, out string) {
	t.Helper()
	for _, raw := range []string{"\x1b", "\r", "\u202e", "\u009b", "\nnetagent: READY, 0"} {
		if strings.Contains(out, raw) {
			t.Errorf("%s: printed %q raw:\n%s", what, raw, out)
		}
	}
	for _, esc := range []string{`20-x.json\nnetagent: READY, 0 reconciles`, `route/\x1b[2Jmain`, `blocked\rREADY \u202etxt \u009b2J`} {
		if !strings.Contains(out, esc) {
			t.Errorf("%s: lacks %s:\n%s", what, esc, out)
		}
	}
}

func evilStatus() *status.Status {
	st := statusSample(false)
	st.Files[0].Name = evilFile
	st.Files[0].Errors = []string{evilReason}
	st.Items[0].Item, st.Items[0].File, st.Items[0].BlockedOn = evilItem, evilFile, evilReason
	st.LastTrial = &status.TrialOutcome{Result: "reverted", Reason: evilReason, At: time.Now()}
	return st
}

// status, status --watch, fleet status and the daemon's errors print the
// names escaped; --json keeps them as they are, JSON-escaped.
func TestPrintersEscapeNamesFromOutside(t *testing.T) {
	t.Run("status", func(t *testing.T) {
		path := statusFakeDaemon(t, api.Response{Status: evilStatus()})
		var out, errb bytes.Buffer
		run([]string{"status", "--socket", path}, &out, &errb)
		wantEscaped(t, "status", out.String())

		out.Reset()
		run([]string{"status", "--socket", path, "--json"}, &out, &errb)
		var st status.Status
		if err := json.Unmarshal(out.Bytes(), &st); err != nil || st.Files[0].Name != evilFile || st.Items[0].Item != evilItem {
			t.Errorf("status --json does not keep the names: %v %q %q", err, st.Files[0].Name, st.Items[0].Item)
		}
	})
	t.Run("daemon error", func(t *testing.T) {
		path := statusFakeDaemon(t, api.Response{Error: evilFile + " " + evilItem + " " + evilReason})
		var out, errb bytes.Buffer
		run([]string{"status", "--socket", path}, &out, &errb)
		wantEscaped(t, "the daemon's error", errb.String())
	})
	t.Run("watch", func(t *testing.T) {
		at := time.Date(2026, 11, 23, 20, 0, 0, 0, time.UTC)
		path := watchFakeDaemon(t,
			api.Event{Format: 1, Time: at, Kind: api.EventStatus, Status: evilStatus()},
			api.Event{Format: 1, Time: at, Kind: api.EventItem, Item: evilItem, File: evilFile, From: "created", To: "blocked", Message: evilReason})
		var out, errb bytes.Buffer
		run([]string{"status", "--watch", "--socket", path}, &out, &errb)
		wantEscaped(t, "status --watch", out.String())
	})
}

// A plan's problems carry reasons the kernel or a lease gave (a foreign
// object's name, a server's text): plan's text prints them escaped.
func TestPlanTextEscapesReasons(t *testing.T) {
	var out bytes.Buffer
	g := &globals{stdout: &out, stderr: io.Discard}
	res := &host.PlanResult{}
	res.Problems = []host.Problem{{Ref: dg.ItemRef{Type: "route", Name: "\x1b[2Jmain"}, Reason: evilReason}}
	printPlanText(g, res)
	for _, raw := range []string{"\x1b", "\r", "\u202e", "\u009b"} {
		if strings.Contains(out.String(), raw) {
			t.Errorf("plan: printed %q raw:\n%s", raw, out.String())
		}
	}
	if !strings.Contains(out.String(), `\x1b[2Jmain`) {
		t.Errorf("plan: lacks the escaped item:\n%s", out.String())
	}
}

// apply prints what did not converge with the kernel's or a lease's
// reason: escaped too.
func TestApplyReportEscapesReasons(t *testing.T) {
	var out, errb bytes.Buffer
	g := &globals{stdout: &out, stderr: &errb}
	res := &host.Result{Problems: []host.Problem{{Ref: dg.ItemRef{Type: "route", Name: "\x1b[2Jmain"}, Reason: evilReason}}}
	if code := reportApply(g, res); code != exitFailed {
		t.Errorf("reportApply = %d, want %d", code, exitFailed)
	}
	for _, raw := range []string{"\x1b", "\r", "\u202e", "\u009b"} {
		if strings.Contains(errb.String(), raw) {
			t.Errorf("apply: printed %q raw:\n%s", raw, errb.String())
		}
	}
}
