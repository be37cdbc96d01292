package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/netagent/netagent/agent/api"
	"github.com/netagent/netagent/agent/host"
	"github.com/netagent/netagent/agent/oneshot"
	"github.com/netagent/netagent/agent/render"
	"github.com/netagent/netagent/agent/status"
	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/internal/disrupt"
	"github.com/netagent/netagent/reconciler"
)

// apply prints the operations it ran as plan does, with what each does to
// traffic, and a summary with the counts and the time it took.
func TestApplyPrintsItsOperations(t *testing.T) {
	var out, errb bytes.Buffer
	g := &globals{stdout: &out, stderr: &errb}
	sample := planSample()
	res := &sample.Result
	res.Problems = nil
	printAppliedOps(g, res.Ops, host.PredictOps(sample.Ops, nil), nil, false)
	code := reportApplyTook(g, res, 1500*time.Millisecond)
	text := out.String()
	for _, want := range []string{
		"  1. delete interface/br0 (recreate)", "  2. create interface/br0 (recreate)", "  3. create route/",
		"       traffic: ", "converged: 3 operations: 3 done, 0 failed, 0 blocked in 1.5s",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q:\n%s", want, text)
		}
	}
	if code != exitOK || strings.Count(text, "traffic: ") != 3 {
		t.Errorf("exit %d, want one traffic line per operation:\n%s", code, text)
	}
}

// apply --json: the format, the counts, each operation with its
// disruption, the problems.
func TestApplyJSON(t *testing.T) {
	var out, errb bytes.Buffer
	g := &globals{stdout: &out, stderr: &errb}
	sample := planSample()
	res := &host.Applied{Result: sample.Result, Disruptions: host.PredictOps(sample.Ops, nil)}
	res.Ops[2].Err = errors.New("boom")
	if code := reportApplyJSON(g, res, time.Second); code != exitFailed {
		t.Errorf("exit %d, want %d", code, exitFailed)
	}
	var doc map[string]any
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out.String())
	}
	if doc["format"] != float64(1) || doc["converged"] != false || doc["done"] != float64(2) || doc["failed"] != float64(1) ||
		doc["blocked"] != float64(1) || doc["duration"] != "1s" {
		t.Errorf("document %v", doc)
	}
	ops := doc["operations"].([]any)
	if len(ops) != 3 || ops[2].(map[string]any)["error"] != "boom" || ops[0].(map[string]any)["disruption"] == nil {
		t.Errorf("operations %v", ops)
	}
	if p := doc["problems"].([]any); len(p) != 1 || p[0].(map[string]any)["state"] != "blocked" {
		t.Errorf("problems %v", p)
	}
}

// check --all lists every item with ok / differs / missing / extra /
// foreign; --json the same with each attribute's values.
func TestCheckAllListsPassingItems(t *testing.T) {
	s := planSample()
	intended := dg.New("intended")
	for _, e := range s.Ops[1:] {
		intended.Put(e.Item)
	}
	br, route := s.Ops[1].Ref, s.Ops[2].Ref
	extra := dg.ItemRef{Type: "route", Name: "main 192.0.2.0/24 metric 0"}
	rep := &host.Report{Diffs: []host.Difference{
		{Ref: route, Kind: host.Missing},
		{Ref: extra, Kind: host.Extra},
	}}
	var out, errb bytes.Buffer
	g := &globals{stdout: &out, stderr: &errb}
	if code := printCheckItems(g, status.CheckItems(intended, rep, render.DriftPolicies{}), nil, false); code != exitFailed {
		t.Errorf("exit %d", code)
	}
	for _, want := range []string{br.String() + "  ", "ok", route.String(), "missing", extra.String(), "extra",
		"3 items: 1 ok, 1 missing, 1 extra"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	out.Reset()
	rep.Diffs = []host.Difference{{Ref: br, Kind: host.Differs, Fields: []host.FieldDiff{{Field: "MTU", Want: "9000", Have: "1500"}}}}
	if code := printCheckItems(g, status.CheckItems(intended, rep, nil), nil, true); code != exitFailed {
		t.Errorf("exit %d", code)
	}
	var doc oneshot.CheckDoc
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out.String())
	}
	if doc.Format != 1 || doc.Converged || doc.Counts["ok"] != 1 || doc.Counts["differs"] != 1 || len(doc.Items) != 2 {
		t.Errorf("document %+v", doc)
	}
	for _, it := range doc.Items {
		if it.Item == br.String() && (it.State != "differs" || len(it.Fields) != 1 || it.Fields[0].Intended != "9000" || it.Fields[0].Running != "1500") {
			t.Errorf("differing item %+v", it)
		}
	}
}

// validate --json: valid with the counts, or every problem with its file
// and JSON path; a missing file is exit 3.
func TestValidateJSON(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.json")
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(good, []byte(`{"version": 1, "routes": [{"to": "198.51.100.0/24", "via": "192.0.2.1"}]}`), 0o600)
	os.WriteFile(bad, []byte(`{"version": 1, "routes": [{"to": "198.51.100.0/33", "via": "192.0.2.1"}]}`), 0o600)
	var out, errb bytes.Buffer
	decode := func() oneshot.ValidateDoc {
		var doc oneshot.ValidateDoc
		if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
			t.Fatalf("not JSON: %v\n%s", err, out.String())
		}
		out.Reset()
		return doc
	}
	if code := run([]string{"validate", good, "--json"}, &out, &errb); code != exitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if doc := decode(); !doc.Valid || doc.Format != 1 || doc.Files != 1 || doc.Items == 0 || len(doc.Problems) != 0 {
		t.Errorf("valid file: %+v", doc)
	}
	if code := run([]string{"validate", "--json", bad}, &out, &errb); code != exitFailed {
		t.Errorf("invalid file: exit %d", code)
	}
	if doc := decode(); doc.Valid || len(doc.Problems) != 1 || doc.Problems[0].Path != "routes[0].to" || doc.Problems[0].File != bad {
		t.Errorf("invalid file: %+v", doc)
	}
	if code := run([]string{"validate", "--json", filepath.Join(dir, "nope.json")}, &out, &errb); code != exitInternal {
		t.Errorf("missing file: exit %d", code)
	}
	if doc := decode(); doc.Valid || len(doc.Problems) != 1 || !strings.Contains(doc.Problems[0].Message, "no such file") {
		t.Errorf("missing file: %+v", doc)
	}
}

// status --json carries the format.
func TestStatusJSONHasFormat(t *testing.T) {
	path := statusFakeDaemon(t, api.Response{Status: statusSample(true)})
	var out, errb bytes.Buffer
	run([]string{"status", "--socket", path, "--json"}, &out, &errb)
	var doc struct {
		Format int  `json:"format"`
		Ready  bool `json:"ready"`
	}
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil || doc.Format != 1 || !doc.Ready {
		t.Errorf("status --json: %v %+v\n%s", err, doc, out.String())
	}
}

// watchFakeDaemon answers a watch with evs, then ends the stream.
func watchFakeDaemon(t *testing.T, evs ...api.Event) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "w.sock")
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		var req api.Request
		json.NewDecoder(c).Decode(&req)
		enc := json.NewEncoder(c)
		if req.Command != api.CmdWatch {
			enc.Encode(api.Response{Error: "want watch"})
			return
		}
		for _, e := range evs {
			enc.Encode(e)
		}
	}()
	return path
}

// status --watch prints a headline, then one line per change; --json one
// object per line.
func TestStatusWatch(t *testing.T) {
	at := time.Date(2026, 11, 23, 20, 0, 0, 0, time.UTC)
	evs := []api.Event{
		{Format: 1, Time: at, Kind: api.EventStatus, Status: statusSample(true)},
		{Format: 1, Time: at, Kind: api.EventCondition, File: "20-routes.json", Condition: "Converged", From: "True", To: "False", Reason: "ItemsBlocked"},
		{Format: 1, Time: at, Kind: api.EventItem, Item: "route/x", File: "20-routes.json", From: "created", To: "blocked", Message: "waiting for link/uplink0"},
		{Format: 1, Time: at, Kind: api.EventMissed, Missed: 3},
	}
	var out, errb bytes.Buffer
	if code := run([]string{"status", "--watch", "--socket", watchFakeDaemon(t, evs...)}, &out, &errb); code != exitInternal {
		t.Errorf("exit %d when the daemon ends the stream", code)
	}
	for _, want := range []string{"netagent: READY", "watching for changes",
		"2026-11-23T20:00:00Z condition 20-routes.json Converged: True -> False (ItemsBlocked)",
		"2026-11-23T20:00:00Z item route/x (20-routes.json): created -> blocked: waiting for link/uplink0",
		"missed: 3 events dropped"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	out.Reset()
	run([]string{"status", "--watch", "--json", "--socket", watchFakeDaemon(t, evs...)}, &out, &errb)
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != len(evs) {
		t.Fatalf("%d lines, want %d:\n%s", len(lines), len(evs), out.String())
	}
	for i, l := range lines {
		var e api.Event
		if err := json.Unmarshal([]byte(l), &e); err != nil || e.Kind != evs[i].Kind || e.Format != 1 {
			t.Errorf("line %d: %v %+v", i, err, e)
		}
	}
}

// The progress of an apply is nothing at all when stderr is not a
// terminal (the line itself: internal/progress).
func TestApplyProgress(t *testing.T) {
	var errb bytes.Buffer
	if progressFor(&globals{stderr: &errb}) != nil { // not a terminal: no progress at all
		t.Error("progress on a pipe")
	}
	if errb.Len() != 0 {
		t.Errorf("progress on a pipe: %q", errb.String())
	}
}

// An apply of many operations prints the first opsShown and how many more
// ran; --all-ops prints every one.
func TestApplyPrintsAtMostOpsShown(t *testing.T) {
	sample := planSample()
	one, pred := sample.Ops[2], host.PredictOps(sample.Ops, nil)[2]
	ops := make(reconciler.OperationLog, opsShown+5)
	preds := make([]disrupt.Prediction, len(ops))
	for i := range ops {
		ops[i], preds[i] = one, pred
	}
	var out bytes.Buffer
	g := &globals{stdout: &out, stderr: io.Discard}
	printAppliedOps(g, ops, preds, nil, false)
	text := out.String()
	if n := strings.Count(text, "traffic: "); n != opsShown {
		t.Errorf("printed %d operations, want %d", n, opsShown)
	}
	if !strings.Contains(text, "... and 5 more operations (--all-ops prints every one)") {
		t.Errorf("no line saying how many more:\n%s", text[len(text)-300:])
	}
	out.Reset()
	printAppliedOps(g, ops, preds, nil, true)
	if n := strings.Count(out.String(), "traffic: "); n != len(ops) || strings.Contains(out.String(), "more operations") {
		t.Errorf("--all-ops printed %d operations, want %d", n, len(ops))
	}
}
