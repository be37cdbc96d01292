//go:build !vmtest

package netns_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/netagent/netagent/internal/testns"
)

// The README's main command, ./scripts/demo.sh, runs through: validate,
// plan, apply twice, the daemon, status, check through the daemon, and a
// ping to the upstream router across the namespaces; and it leaves no
// namespace behind. It runs here in namespaces of its own name.
func TestDemoScript(t *testing.T) {
	testns.RequireRoot(t)
	ns := testns.Name("na-demo-")
	cmd := exec.Command("bash", "../../scripts/demo.sh")
	cmd.Env = append(os.Environ(), "DEMO_NS="+ns, "DEMO_BIN="+t.TempDir())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("demo.sh: %v\n%s", err, out)
	}
	for _, want := range []string{
		"converged: 18 operations", "converged: 0 operations", "netagent: READY",
		"ok: running matches the daemon's intent", "1 packets transmitted, 1 received",
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("demo.sh output lacks %q:\n%s", want, out)
		}
	}
	list, _ := exec.Command("ip", "netns", "list").Output()
	if strings.Contains(string(list), ns) {
		t.Errorf("demo.sh left its namespaces:\n%s", list)
	}
}
