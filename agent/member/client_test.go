package member

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/netagent/netagent/agent/intent"
	"github.com/netagent/netagent/fleet"
	"github.com/netagent/netagent/store"
)

func testClient() *Client {
	return &Client{conn: Conn{Endpoints: []string{"http://a:2379", "http://b:2379"}, Timeout: time.Second}, layout: testLayout}
}

// Explain says what an operation's error means: a refused CAS names the
// document by its source and both versions; an unreachable store names
// the endpoints and the timeout.
func TestClientExplain(t *testing.T) {
	c := testClient()
	for _, tc := range []struct {
		err  error
		kind Failure
		want string
	}{
		{&store.CASError{Key: testLayout.HostDoc("h1", "base.json"), Expected: 3, Stored: 5}, FailConflict,
			"hosts/h1/base.json changed: expected it at version 3, but it is at version 5 (someone else wrote it); nothing was written"},
		{&store.CASError{Key: testLayout.GroupDoc("g", "x.json"), Expected: store.NoVersion, Stored: 2}, FailConflict,
			"groups/g/x.json changed: expected it not to exist, but it is at version 2"},
		{fmt.Errorf("reading: %w", store.ErrNotFound), FailInvalid, "reading: "},
		{fmt.Errorf("list: %w", store.ErrUnavailable), FailStore, "etcd at http://a:2379, http://b:2379 unreachable within 1s"},
		{errors.New("boom"), FailStore, "etcd at http://a:2379, http://b:2379: boom"},
	} {
		kind, msg := c.Explain(tc.err)
		if kind != tc.kind || !strings.Contains(msg, tc.want) {
			t.Errorf("Explain(%v) = %d %q, want %d %q", tc.err, kind, msg, tc.kind, tc.want)
		}
	}
}

// checkMerge merges the pushed document with the others of its place (a
// trial by its intent): an object two define is a *MergeError naming the
// other by its source; a stored document that does not parse is a
// warning.
func TestClientCheckMerge(t *testing.T) {
	c := testClient()
	pushed, err := intent.Parse([]byte(`{"version": 1, "interfaces": [{"name": "eth0", "type": "physical", "mtu": 9000}]}`))
	if err != nil {
		t.Fatal(err)
	}
	base := `{"version": 1, "interfaces": [{"name": "eth0", "type": "physical", "mtu": 1500}]}`
	trial, err := Envelope([]byte(base), time.Minute, nil)
	if err != nil {
		t.Fatal(err)
	}
	bad := store.Entry{Key: testLayout.GroupDoc("edge", "bad.json"), Value: []byte("{")}
	warnings, err := c.checkMerge("dup.json", pushed, []store.Entry{bad})
	if err != nil || len(warnings) != 1 || !strings.Contains(warnings[0], "groups/edge/bad.json in etcd is invalid itself") {
		t.Errorf("with an invalid stored document: %q %v", warnings, err)
	}
	other := store.Entry{Key: testLayout.GroupDoc("edge", "base.json"), Value: trial}
	_, err = c.checkMerge("dup.json", pushed, []store.Entry{other})
	var merge *MergeError
	if !errors.As(err, &merge) || !strings.Contains(err.Error(), "groups/edge/base.json") {
		t.Errorf("with a trial defining eth0 too: %v", err)
	}
}

// Envelope compacts the intent into a trial envelope that
// ParseTrialEnvelope reads back.
func TestEnvelope(t *testing.T) {
	raw, err := Envelope([]byte("{\n  \"version\": 1\n}\n"), 90*time.Second, []string{"ping:192.0.2.1"})
	if err != nil {
		t.Fatal(err)
	}
	env, timeout, err := ParseTrialEnvelope(raw)
	if err != nil || timeout != 90*time.Second || string(env.Intent) != `{"version":1}` || !slices.Equal(env.Trial.Probes, []string{"ping:192.0.2.1"}) {
		t.Errorf("%s: %+v %v %v", raw, env, timeout, err)
	}
	if _, err := Envelope([]byte("{"), time.Second, nil); err == nil {
		t.Error("an envelope of invalid JSON")
	}
}

// The rows of `fleet status`: a host behind its documents (changed,
// deleted, new in its own directory or a group it took one from), stale
// without a lease, not Ready, unreadable, or without a status while it
// has documents; a leased status is never stale.
func TestStatusRows(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	status := func(s fleet.Status) store.Entry {
		raw, _ := json.Marshal(s)
		return store.Entry{Key: testLayout.Status(s.Host), Value: raw, Version: 7}
	}
	current := map[string]int64{"groups/edge/base.json": 10, "groups/core/a.json": 4, "groups/core/b.json": 5}
	statuses := []store.Entry{
		status(fleet.Status{Host: "h1", Ready: true, Updated: now, Revisions: map[string]int64{"groups/edge/base.json": 10}}),
		status(fleet.Status{Host: "h2", Ready: true, Updated: now, Revisions: map[string]int64{"groups/edge/base.json": 9}}),
		status(fleet.Status{Host: "h3", Ready: true, Updated: now, Revisions: map[string]int64{"groups/core/a.json": 4, "hosts/h3/old.json": 2}}),
		status(fleet.Status{Host: "h4", Ready: true, Updated: now.Add(-10 * time.Minute)}),
		status(fleet.Status{Host: "h5", Ready: true, Updated: now.Add(-10 * time.Minute), Lease: "15s"}),
		status(fleet.Status{Host: "h6", Conditions: []fleet.Condition{{Type: "Degraded", Message: "intent source unreachable"}}}),
		{Key: testLayout.Status("h7"), Value: []byte("{"), Version: 3},
	}
	docs := []store.Entry{{Key: testLayout.HostDoc("h8", "base.json")}, {Key: testLayout.HostDoc("h1", "x.json")}}
	rows := testClient().rows(statuses, docs, current, now, DefaultStale)
	want := []struct{ host, bad, docs, seen, message string }{
		{"h1", "", "current", "0s ago", ""},
		{"h2", "behind: groups/edge/base.json 9 < 10", "1 behind", "0s ago", "behind: groups/edge/base.json 9 < 10"},
		{"h3", "behind: groups/core/b.json new, hosts/h3/old.json deleted", "2 behind", "0s ago", "behind: groups/core/b.json new, hosts/h3/old.json deleted"},
		{"h4", "stale: last written 10m0s ago", "-", "10m0s ago", "stale: last written 10m0s ago"},
		{"h5", "", "-", "< 15s ago", ""},
		{"h6", "not Ready", "-", "- ago", "Degraded: intent source unreachable"},
		{"h7", "unreadable status (version 3): ", "", "", ""},
		{"h8", "no status: its agent is not running, or not reaching etcd", "", "", ""},
	}
	if len(rows) != len(want) {
		t.Fatalf("%d rows, want %d: %+v", len(rows), len(want), rows)
	}
	for i, w := range want {
		r := rows[i]
		if r.Host != w.host || !strings.HasPrefix(r.Bad, w.bad) || (w.bad == "") != (r.Bad == "") {
			t.Errorf("row %d: %s %q, want %s %q", i, r.Host, r.Bad, w.host, w.bad)
			continue
		}
		if r.Status == nil {
			continue
		}
		if got := [3]string{r.Documents(), r.LastSeen(now), r.Message()}; got != [3]string{w.docs, w.seen, w.message} {
			t.Errorf("row %s: cells %q, want %q", r.Host, got, [3]string{w.docs, w.seen, w.message})
		}
	}
	if rows[3].Stale() != true || rows[4].Stale() {
		t.Error("Stale: h4 without a lease is, h5 with one is not")
	}
}

// The TRIAL cell: state, source@revision and the reason.
func TestHostRowTrial(t *testing.T) {
	r := HostRow{Status: &fleet.Status{}}
	if got := r.Trial(); got != "-" {
		t.Errorf("no trial: %q", got)
	}
	r.Status.Trial = &fleet.Trial{State: FleetTrialReverted, Source: "groups/g/x.json", Revision: 42, Reason: "probe failed"}
	if got := r.Trial(); got != "reverted groups/g/x.json@42 (probe failed)" {
		t.Errorf("a reverted trial: %q", got)
	}
}
