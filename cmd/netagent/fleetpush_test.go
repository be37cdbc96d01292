//go:build !nofleet

package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/netagent/netagent/agent/member"
	"github.com/netagent/netagent/internal/etcdtest"
	"github.com/netagent/netagent/store"
)

// A changed group document pushed under another file name conflicts with
// the one it was meant to replace: the refusal names that document and
// the --name that replaces it, and the push under that name succeeds.
func TestBinaryFleetPushReplaceHint(t *testing.T) {
	e := newFleetEnv(t, etcdtest.Options{})
	base := writeIntent(t, "base.json", fleetBase)
	if code, _, errOut := runBinary(t, append([]string{"fleet", "push", "--group", "edge", base}, e.args...)...); code != exitOK {
		t.Fatalf("push: exit %d\n%s", code, errOut)
	}
	changed := writeIntent(t, "base-v2.json", `{"version": 1, "interfaces": [{"name": "eth0", "type": "physical", "mtu": 9000}]}`)
	code, out, errOut := runBinary(t, append([]string{"fleet", "push", "--group", "edge", changed}, e.args...)...)
	want := changed + `: interfaces[0]: interface "eth0" is also defined at interfaces[0] in groups/edge/base.json` + "\n" +
		`groups/edge/base.json: interfaces[0]: interface "eth0" is also defined at interfaces[0] in ` + changed + "\n" +
		"netagent: invalid intent: 2 problems; nothing was changed\n" +
		"netagent: hint: to replace groups/edge/base.json with " + changed + ", push it under that name: netagent fleet push --group edge --name base.json " + changed + "\n"
	if code != exitFailed || out != "" || errOut != want {
		t.Errorf("push of a changed document under another name: exit %d\nstdout:\n%s\nstderr:\n%s\nwant stderr:\n%s", code, out, errOut, want)
	}
	if code, _, errOut := runBinary(t, append([]string{"fleet", "push", "--group", "edge", "--name", "base.json", changed}, e.args...)...); code != exitOK {
		t.Errorf("push --name base.json: exit %d\n%s", code, errOut)
	}
}

// fleet push, get and delete --json (issue 29, point 15): one document on
// stdout each (member.Pushed, member.StoredDoc), the text on stderr, the
// exit codes as without --json.
func TestBinaryFleetDocsJSON(t *testing.T) {
	e := newFleetEnv(t, etcdtest.Options{})
	base := writeIntent(t, "base.json", fleetBase)
	run := func(want int, args ...string) string {
		t.Helper()
		code, out, errOut := runBinary(t, append(args, e.args...)...)
		if code != want {
			t.Fatalf("%v: exit %d, want %d\n%s%s", args, code, want, out, errOut)
		}
		return out
	}
	decode := func(out string, v any) {
		t.Helper()
		dec := json.NewDecoder(strings.NewReader(out))
		dec.DisallowUnknownFields()
		if err := dec.Decode(v); err != nil || dec.More() {
			t.Fatalf("not one JSON document (%v):\n%s", err, out)
		}
	}
	var p member.Pushed
	decode(run(exitOK, "fleet", "push", "--json", "--group", "edge", base), &p)
	if p.Source != "groups/edge/base.json" || p.Version <= 0 || p.Replaced != store.NoVersion || p.Unchanged {
		t.Errorf("push --json of a new document: %+v", p)
	}
	var again member.Pushed
	decode(run(exitOK, "fleet", "push", "--json", "--group", "edge", base), &again)
	if !again.Unchanged || again.Version != p.Version {
		t.Errorf("push --json of the same document again: %+v (first %+v)", again, p)
	}
	var got member.StoredDoc
	decode(run(exitOK, "fleet", "get", "--json", "--group", "edge", "--name", "base.json"), &got)
	var doc map[string]any
	if got.Source != p.Source || got.Version != int64(p.Version) || !strings.HasSuffix(got.Key, "/groups/edge/base.json") ||
		json.Unmarshal(got.Document, &doc) != nil || doc["version"] != 1.0 || got.Bytes != nil {
		t.Errorf("get --json: %+v", got)
	}
	var del member.StoredDoc
	decode(run(exitOK, "fleet", "delete", "--json", "--group", "edge", "--name", "base.json"), &del)
	if del.Source != p.Source || del.Key != got.Key || del.Version != int64(p.Version) || del.Document != nil {
		t.Errorf("delete --json: %+v", del)
	}
	if out := run(exitFailed, "fleet", "get", "--json", "--group", "edge", "--name", "base.json"); out != "" {
		t.Errorf("get --json of a deleted document printed %q", out)
	}
}
