//go:build !vmtest

package netns_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// cli runs a one-shot netagent command against the daemon's namespace and
// state directory: exit code, stdout, stderr.
func (e *daemonEnv) cli(command string, args ...string) cliResult {
	e.t.Helper()
	argv := append([]string{"--state-dir", e.stateDir, command, "--netns", e.tgt.Name}, args...)
	cmd := exec.Command(e.bin, argv...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	res := cliResult{stdout: out.String(), stderr: errOut.String()}
	if ee, ok := err.(*exec.ExitError); ok {
		res.code = ee.ExitCode()
	} else if err != nil {
		e.t.Fatal(err)
	}
	return res
}

// TestAgentDaemonOneWriter: while the daemon serves a namespace, a one-shot
// apply, plan or check never acts behind its back: each refuses, naming
// the daemon's pid and socket, and the daemon's objects stay. With
// --via-daemon they go through the daemon's socket API, the intent beside
// the daemon's files. A second daemon on the same target refuses to start.
func TestAgentDaemonOneWriter(t *testing.T) {
	e := daemonNewEnv(t)
	e.converge()
	// An intent that refers to the daemon's uplink (in its intent
	// directory), as one sent to its API would.
	other := filepath.Join(t.TempDir(), "other.json")
	if err := os.WriteFile(other, []byte(`{"version": 1,
	  "routes": [{"to": "203.0.113.0/24", "via": "192.0.2.1", "dev": "uplink0", "metric": 10}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	// A whole intent of its own, as a one-shot apply takes: alone, it
	// would delete the daemon's route.
	standalone := filepath.Join(t.TempDir(), "standalone.json")
	if err := os.WriteFile(standalone, []byte(`{"version": 1,
	  "interfaces": [{"name": "uplink0", "type": "physical", "addresses": ["192.0.2.10/24"]}],
	  "routes": [{"to": "203.0.113.0/24", "via": "192.0.2.1", "dev": "uplink0", "metric": 10}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	daemon := fmt.Sprintf("netagent run (pid %d, socket %s", e.cmd.Process.Pid, e.socket)
	for _, command := range []string{"apply", "plan", "check"} {
		res := e.cli(command, standalone)
		if res.code != 3 || !strings.Contains(res.stderr, daemon) || !strings.Contains(res.stderr, "--via-daemon") {
			t.Errorf("%s while the daemon runs: want exit 3 naming %q, got %s", command, daemon, res)
		}
	}
	if _, ok := e.route("198.51.100.0/24"); !ok {
		t.Fatal("a one-shot command deleted the daemon's route")
	}
	if _, ok := e.route("203.0.113.0/24"); ok {
		t.Fatal("a refused apply added its route")
	}

	plan := e.cli("plan", "--via-daemon", other)
	if plan.code != 0 || !strings.Contains(plan.stdout, "create route/main 203.0.113.0/24 metric 10") ||
		strings.Contains(plan.stdout, "delete") {
		t.Errorf("plan --via-daemon: %s", plan)
	}
	if res := e.cli("apply", "--via-daemon", other); res.code != 0 || !strings.Contains(res.stdout, "converged") {
		t.Errorf("apply --via-daemon: %s", res)
	}
	for _, dst := range []string{"198.51.100.0/24", "203.0.113.0/24"} {
		if _, ok := e.route(dst); !ok {
			t.Errorf("after apply --via-daemon: route %s missing", dst)
		}
	}
	// A check takes its file as the whole intent, as a one-shot check
	// does: the daemon's own route is extra to it.
	if res := e.cli("check", "--via-daemon", standalone); res.code != 1 ||
		!strings.Contains(res.stdout, "\nroute/main 198.51.100.0/24 metric 10: extra (have ") {
		t.Errorf("check --via-daemon: %s", res)
	}
	// Without a file: the kernel against the daemon's own intent, as the
	// demo asks it; a plain check without a file is still a usage error.
	if res := e.cli("check", "--via-daemon"); res.code != 0 || !strings.Contains(res.stdout, "running matches the daemon's intent") {
		t.Errorf("check --via-daemon without a file: %s", res)
	}
	if res := e.cli("plan", "--via-daemon"); res.code != 0 {
		t.Errorf("plan --via-daemon without a file: %s", res)
	}
	if res := e.cli("check"); res.code != 2 {
		t.Errorf("check without a file: want exit 2, got %s", res)
	}

	second := exec.Command(e.bin, "--netns", e.tgt.Name, "--state-dir", e.stateDir, "run",
		"--intent-dir", e.intentDir, "--socket", filepath.Join(t.TempDir(), "second.sock"))
	out, err := second.CombinedOutput()
	if code := second.ProcessState.ExitCode(); code != 3 || !strings.Contains(string(out), "already served by the daemon "+daemon) {
		t.Errorf("a second daemon: exit %d (%v)\n%s", code, err, out)
	}
	if st, err := e.status(); err != nil || !st.Ready {
		t.Errorf("the daemon after all this: %+v %v", st, err)
	}
}
