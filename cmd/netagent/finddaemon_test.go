package main

import (
	"path/filepath"
	"testing"
)

// Without a daemon, status and metrics name the namespace and the state
// directory whose lock they read (as --via-daemon does), and status --json
// still prints its document: {"daemon": "not running"}, exit 3.
func TestBinaryNoDaemonFound(t *testing.T) {
	sd := filepath.Join(t.TempDir(), "state")
	want := "netagent: no daemon serves the host's namespace (none holds the lock of the state directory " + sd +
		"; --state-dir or --socket PATH names another daemon)\n"
	code, out, errOut := runBinary(t, "status", "--json", "--state-dir", sd)
	if code != exitInternal || out != "{\n  \"daemon\": \"not running\"\n}\n" || errOut != want {
		t.Errorf("status --json without a daemon: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	code, out, errOut = runBinary(t, "--state-dir", sd, "status")
	if code != exitInternal || out != "" || errOut != want {
		t.Errorf("status without a daemon: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	code, out, errOut = runBinary(t, "metrics", "--state-dir", sd)
	if code != exitInternal || out != "" || errOut != want {
		t.Errorf("metrics without a daemon: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
}
