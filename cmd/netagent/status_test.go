package main

import (
	"bytes"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/netagent/netagent/agent/api"
	"github.com/netagent/netagent/agent/host"
	"github.com/netagent/netagent/agent/status"
	"github.com/netagent/netagent/agent/trial"
)

// fakeDaemon answers cmd on a unix socket with resp, and any other
// command with an error, as a daemon would; it returns the socket's path.
func fakeDaemon(t *testing.T, cmd string, resp api.Response) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "d.sock")
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			var req api.Request
			json.NewDecoder(c).Decode(&req)
			if req.Command != cmd {
				json.NewEncoder(c).Encode(api.Response{Error: "want " + cmd})
			} else {
				json.NewEncoder(c).Encode(resp)
			}
			c.Close()
		}
	}()
	return path
}

// statusFakeDaemon answers the status command with resp.
func statusFakeDaemon(t *testing.T, resp api.Response) string {
	return fakeDaemon(t, api.CmdStatus, resp)
}

func statusSample(ready bool) *status.Status {
	at := time.Now().Add(-time.Minute)
	cond := func(typ string, ok bool, msg string) status.Condition {
		return status.Condition{Type: typ, Status: ok, Reason: "R", Message: msg, Since: at}
	}
	return &status.Status{
		Ready: ready, Reconciles: 7, LastReconcile: at, LastReasons: []string{"link"},
		Files: []status.FileStatus{{
			Name: "20-routes.json", Items: 2,
			Conditions: []status.Condition{cond("Valid", true, ""), cond("Converged", ready, "1 blocked"),
				cond("Degraded", !ready, "route/x: blocked: waiting for link/uplink0 (carrier up)"), cond("Ready", ready, "")},
		}},
		Items: []status.ItemStatus{
			{Item: "route/main 198.51.100.0/24 metric 0", File: "20-routes.json", State: "blocked",
				BlockedOn: "blocked: waiting for link/uplink0 (carrier up)", Since: at},
			{Item: "address/uplink0/192.0.2.2/24", File: "20-routes.json", State: "created", LastOp: "create", Since: at},
		},
	}
}

func TestStatusPrintsTables(t *testing.T) {
	path := statusFakeDaemon(t, api.Response{Status: statusSample(false)})
	var out, errb bytes.Buffer
	code := run([]string{"status", "--socket", path}, &out, &errb)
	if code != exitFailed {
		t.Errorf("exit %d for a daemon that is not ready, want %d; stderr %s", code, exitFailed, errb.String())
	}
	text := out.String()
	for _, want := range []string{"NOT READY", "7 reconciles", "(link)", "FILE", "20-routes.json", "False",
		"waiting for link/uplink0 (carrier up)", "route/main 198.51.100.0/24 metric 0", "blocked",
		"1 item created (--all lists them)"} {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "address/uplink0") {
		t.Errorf("a created item listed without --all:\n%s", text)
	}
	out.Reset()
	run([]string{"status", "--socket", path, "--all"}, &out, &errb)
	if !strings.Contains(out.String(), "address/uplink0/192.0.2.2/24") {
		t.Errorf("--all does not list created items:\n%s", out.String())
	}
}

func TestStatusJSON(t *testing.T) {
	path := statusFakeDaemon(t, api.Response{Status: statusSample(true)})
	var out, errb bytes.Buffer
	if code := run([]string{"status", "--socket", path, "--json"}, &out, &errb); code != exitOK {
		t.Fatalf("exit %d; stderr %s", code, errb.String())
	}
	var st status.Status
	if err := json.Unmarshal(out.Bytes(), &st); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out.String())
	}
	if !st.Ready || len(st.Files) != 1 || st.Files[0].Conditions[3].Type != "Ready" || len(st.Items) != 2 {
		t.Errorf("decoded %+v", st)
	}
}

func TestStatusWithoutDaemon(t *testing.T) {
	var out, errb bytes.Buffer
	code := run([]string{"--state-dir", t.TempDir(), "status", "--socket", filepath.Join(t.TempDir(), "none.sock"), "--timeout", "2s"}, &out, &errb)
	if code != exitInternal || !strings.Contains(errb.String(), "connecting to the agent") {
		t.Errorf("exit %d, stderr %q", code, errb.String())
	}
}

func TestRunRejectsBadCommandLines(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		args []string
		want int
	}{
		{[]string{"run", "--intent-dir", filepath.Join(dir, "missing")}, exitInternal},
		{[]string{"run", "--intent-dir", dir, "extra"}, exitUsage},
		{[]string{"run", "--intent-dir", dir, "--drift-interval", "-1s"}, exitUsage},
		{[]string{"run", "--drift-interval", "soon"}, exitUsage},
	}
	for _, tt := range tests {
		var out, errb bytes.Buffer
		if code := run(tt.args, &out, &errb); code != tt.want {
			t.Errorf("%v: exit %d, want %d; stderr %s", tt.args, code, tt.want, errb.String())
		}
	}
}

// The headline names the intent's current version, and a rollback in
// force.
func TestStatusPrintsTheVersion(t *testing.T) {
	st := statusSample(true)
	st.Version, st.Digest = 12, "sha256:0123456789abcdef0123"
	st.Override = "rollback to version 9: the intent documents are set aside until one changes"
	var out bytes.Buffer
	statusPrint(&out, st, false, time.Now())
	for _, want := range []string{"intent version 12 (0123456789ab)", "rollback to version 9"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}

// The daemon's pending trial and the last trial's outcome are in the
// headline's block.
func TestStatusPrintsTheTrial(t *testing.T) {
	st := statusSample(true)
	now := time.Now()
	st.Trial = &status.TrialStatus{Since: now.Add(-10 * time.Second), Deadline: now.Add(50 * time.Second),
		Probes: []string{"ping:192.0.2.1"}, Name: "trial-3.json", Probing: true, KeepPartial: true}
	st.LastTrial = &status.TrialOutcome{Result: "reverted", Reason: "probe failed: no reply", At: now.Add(-time.Hour)}
	var out bytes.Buffer
	statusPrint(&out, st, false, now)
	for _, want := range []string{"trial pending since", "(10s ago)", "(in 50s)", "confirming writes trial-3.json",
		"probes ping:192.0.2.1 (running: confirm once they pass)", "keeps failed items", "last trial reverted at", "probe failed: no reply"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}

// Without a daemon, status shows the one-shot try's trial from the state
// directory, and its last outcome (also as JSON).
func TestStatusShowsTheOneShotTrial(t *testing.T) {
	state := t.TempDir()
	now := time.Now()
	if err := host.RecordOutcome(state, host.Outcome{PID: 7, Result: "confirmed", At: now}); err != nil {
		t.Fatal(err)
	}
	data, _ := json.Marshal(host.Trial{PID: 42, Started: now, Deadline: now.Add(time.Minute), Probes: []string{"tcp:192.0.2.1:22"}})
	if err := os.WriteFile(filepath.Join(state, host.TrialDir, "trial.json"), data, 0o600); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(t.TempDir(), "none.sock")
	var out, errb bytes.Buffer
	code := run([]string{"--state-dir", state, "status", "--socket", sock, "--timeout", "2s"}, &out, &errb)
	if code != exitFailed {
		t.Errorf("exit %d, want %d; stderr %s", code, exitFailed, errb.String())
	}
	for _, want := range []string{"no daemon", "trial pending since", "run by pid 42", "probes tcp:192.0.2.1:22", "last trial confirmed"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	out.Reset()
	run([]string{"--state-dir", state, "status", "--socket", sock, "--json"}, &out, &errb)
	var st trial.OneShot
	if err := json.Unmarshal(out.Bytes(), &st); err != nil || st.Trial == nil || st.Trial.PID != 42 || st.LastTrial.Result != "confirmed" {
		t.Errorf("JSON %s: %v", out.String(), err)
	}
}

// The items a report drift policy leaves drifted are listed after the
// items, one line per attribute with the intended and running value.
func TestStatusPrintsDrifted(t *testing.T) {
	st := statusSample(true)
	st.Drifted = []status.DriftStatus{
		{Item: "interface/eth1", File: "10-lan.json", What: "changed", Fields: []status.DriftField{{Field: "MTU", Intended: "1400", Running: "1300"}}},
		{Item: "route/main 10.0.0.0/8 metric 0", File: "20-routes.json", What: "gone"},
	}
	var out bytes.Buffer
	statusPrint(&out, st, false, time.Now())
	for _, want := range []string{"2 items drifted, left as they are (drift: report):",
		"interface/eth1 (10-lan.json): MTU: intended 1400, running 1300",
		"route/main 10.0.0.0/8 metric 0 (20-routes.json): gone"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}

// What of a lease was not used is listed under it, quoted: a domain with
// a newline from a server never starts a line of status's output.
func TestStatusPrintsDroppedQuoted(t *testing.T) {
	var b strings.Builder
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	statusPrintLeases(&b, []status.LeaseStatus{{Interface: "up0", Family: "ipv4", Address: "10.77.0.100/24", Held: true,
		Dropped: []string{`search domain "a.example\nnameserver 6.6.6.6": not a DNS name`}, LastError: "no answer\nnameserver 7.7.7.7",
		RenewAt: now.Add(time.Minute), Expires: now.Add(time.Hour)}}, now)
	out := b.String()
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "nameserver") {
			t.Errorf("a line of the server's: %q\n%s", l, out)
		}
	}
	if !strings.Contains(out, "up0: not used:") || !strings.Contains(out, "up0: last exchange failed:") {
		t.Errorf("the dropped values and the last error are not listed:\n%s", out)
	}
}

// A record of the last trial that cannot be read is an outcome "unknown"
// saying why, not no outcome (status would show none).
func TestLastTrialOutcomeUnreadable(t *testing.T) {
	sd := t.TempDir()
	if err := os.MkdirAll(filepath.Join(sd, host.TrialDir), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(sd, host.TrialDir, "last.json"), []byte("{garbage"), 0o600); err != nil {
		t.Fatal(err)
	}
	o := trial.LastOutcome(sd)
	if o == nil || o.Result != status.TrialUnknown || !strings.Contains(o.Reason, "cannot be read") {
		t.Fatalf("an unreadable record: %+v", o)
	}
	var out bytes.Buffer
	statusPrintTrial(&out, nil, o, time.Now())
	if !strings.Contains(out.String(), "last trial unknown: the record") || strings.Contains(out.String(), "0001") {
		t.Errorf("printed: %q", out.String())
	}
}
