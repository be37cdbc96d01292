//go:build !vmtest

package netns_test

import (
	"strings"
	"testing"
)

// plan --detailed-exitcode answers CI as terraform's does (issue 29,
// point 9): 2 while an apply would change something, 0 once the kernel
// matches, 1 for an intent that is invalid; the plan's text is the same.
func TestAgentCLIPlanDetailedExitcode(t *testing.T) {
	e := cliNewEnv(t)
	file := e.writeFile("br.json", `{"version": 1, "interfaces": [{"name": "br7", "type": "bridge"}]}`)
	if res := e.netagent("plan", "--detailed-exitcode", file); res.code != 2 || !strings.Contains(res.stdout, "plan: 1 operation\n") {
		t.Errorf("before apply: want exit 2 and the plan, got %s", res)
	}
	if res := e.netagent("plan", file); res.code != 0 {
		t.Errorf("without the flag: want exit 0, got %s", res)
	}
	e.mustRun(0, "apply", file)
	if res := e.netagent("plan", "--detailed-exitcode", file); res.code != 0 || !strings.Contains(res.stdout, "no changes") {
		t.Errorf("after apply: want exit 0, got %s", res)
	}
	bad := e.writeFile("bad.json", `{"version": 1, "interfaces": [{"name": "br7", "type": "brigde"}]}`)
	if res := e.netagent("plan", "--detailed-exitcode", bad); res.code != 1 {
		t.Errorf("an invalid intent: want exit 1, got %s", res)
	}
}
