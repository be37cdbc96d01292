//go:build !vmtest

package netns_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/netagent/netagent/agent/oneshot"
)

// diff --json prints the versions, the changes (added, removed, changed,
// with the JSON path and the values) and the plan as plan --json does;
// the exit code is the text's.
func TestAgentCLIDiffJSON(t *testing.T) {
	e := cliNewEnv(t)
	a, b := e.writeFile("a.json", cliLockIntentA), e.writeFile("b.json", cliLockIntentB)
	e.mustRun(0, "apply", a)
	e.mustRun(0, "apply", b)
	res := e.mustRun(0, "diff", "--json")
	var doc oneshot.DiffDoc
	if err := json.Unmarshal([]byte(res.stdout), &doc); err != nil {
		t.Fatalf("diff --json: %v\n%s", err, res.stdout)
	}
	if doc.Format != 1 || doc.A.Number != 1 || doc.A.Source != "apply "+a || doc.B.Number != 2 || doc.Error != "" || doc.Plan == nil {
		t.Fatalf("diff --json: %+v", doc)
	}
	mtu := oneshot.ChangeDoc{Change: "changed", Path: "interfaces[lan0].mtu", Old: 1400.0, New: 1450.0}
	if !slices.ContainsFunc(doc.Changes, func(c oneshot.ChangeDoc) bool { return c == mtu }) {
		t.Errorf("diff --json lacks %+v: %+v", mtu, doc.Changes)
	}
	ops := []string{}
	for _, op := range doc.Plan.Operations {
		ops = append(ops, op.Op+" "+op.Item)
	}
	for _, want := range []string{"create interface/svc0", "delete route/main 10.11.0.0/16 metric 0"} {
		if !slices.Contains(ops, want) {
			t.Errorf("diff --json plan lacks %q: %v", want, ops)
		}
	}
	same := e.mustRun(0, "diff", "2", "2", "--json")
	var none oneshot.DiffDoc
	if err := json.Unmarshal([]byte(same.stdout), &none); err != nil || len(none.Changes) != 0 || none.Plan == nil || len(none.Plan.Operations) != 0 {
		t.Errorf("diff 2 2 --json: %v\n%s", err, same.stdout)
	}
	if bad := e.netagent("diff", "9", "--json"); bad.code != 1 || bad.stdout != "" {
		t.Errorf("diff of a version never made: %s", bad)
	}
}

// rollback --json prints apply's JSON document of the rollback (the new
// version on stderr), with apply's exit code.
func TestAgentCLIRollbackJSON(t *testing.T) {
	e := cliNewEnv(t)
	a, b := e.writeFile("a.json", cliLockIntentA), e.writeFile("b.json", cliLockIntentB)
	e.mustRun(0, "apply", a)
	e.mustRun(0, "apply", b)
	res := e.mustRun(0, "rollback", "--json")
	var doc oneshot.ApplyDoc
	if err := json.Unmarshal([]byte(res.stdout), &doc); err != nil || doc.Format != 1 || !doc.Converged || len(doc.Operations) == 0 {
		t.Fatalf("rollback --json: %v\n%s", err, res)
	}
	if !strings.Contains(res.stderr, "rollback to version 1: now version 3\n") {
		t.Errorf("rollback --json: the new version not on stderr: %s", res)
	}
}
