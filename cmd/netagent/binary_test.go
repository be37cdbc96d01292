package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/netagent/netagent/internal/buildinfo"
	"github.com/netagent/netagent/internal/testbin"
	"github.com/netagent/netagent/internal/testtool"
)

// TestMain removes the binary testbin builds when the tests end.
func TestMain(m *testing.M) { testbin.Main(m) }

// runBinary runs the built netagent as a user would.
func runBinary(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	cmd := exec.Command(testbin.Netagent(t), args...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	if ee := (*exec.ExitError)(nil); errors.As(err, &ee) {
		return ee.ExitCode(), out.String(), errOut.String()
	} else if err != nil {
		t.Fatal(err)
	}
	return 0, out.String(), errOut.String()
}

// The command line of the built binary: options after the files, the
// global ones after the command, help, version from the build info, exit
// 3 for a missing file, and the completion script it prints.
func TestBinaryCommandLine(t *testing.T) {
	gateway, err := filepath.Abs("../../examples/gateway.json")
	if err != nil {
		t.Fatal(err)
	}
	sd := t.TempDir()
	code, _, errOut := runBinary(t, "plan", gateway, "--json", "--state-dir", sd, "--netns", "na-does-not-exist")
	if code != exitInternal || !strings.Contains(errOut, "na-does-not-exist") || strings.Contains(errOut, "open --json") {
		t.Errorf("plan f.json --json --state-dir D --netns X: exit %d, want %d naming the namespace\n%s", code, exitInternal, errOut)
	}
	if code, out, errOut := runBinary(t, "validate", gateway, "--log-level", "warn"); code != exitOK || !strings.HasPrefix(out, "valid: 1 file,") {
		t.Errorf("validate f.json --log-level warn: exit %d\n%s%s", code, out, errOut)
	}
	missing := filepath.Join(t.TempDir(), "missing.json")
	if code, _, errOut := runBinary(t, "--state-dir", sd, "apply", missing); code != exitInternal || !strings.Contains(errOut, "no such file") {
		t.Errorf("apply MISSING: exit %d, want %d\n%s", code, exitInternal, errOut)
	}
	if code, out, errOut := runBinary(t, "help", "apply"); code != exitOK || errOut != "" || !strings.Contains(out, "--lock-timeout DURATION") {
		t.Errorf("help apply: exit %d\n%s%s", code, out, errOut)
	}
	if code, _, errOut := runBinary(t, "aply", "f.json"); code != exitUsage || !strings.Contains(errOut, `did you mean "apply"?`) {
		t.Errorf("aply: exit %d\n%s", code, errOut)
	}
	code, out, _ := runBinary(t, "version", "--json")
	var v buildinfo.Info
	if code != exitOK || json.Unmarshal([]byte(out), &v) != nil || v.Version != "(devel)" || v.Go != runtime.Version() {
		t.Errorf("version --json: exit %d\n%s", code, out)
	}

	code, script, _ := runBinary(t, "completion", "bash")
	if code != exitOK {
		t.Fatalf("completion bash: exit %d", code)
	}
	p := filepath.Join(t.TempDir(), "netagent.bash")
	if err := os.WriteFile(p, []byte(script), 0o600); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "site.json"), []byte("{}"), 0o600)
	if got := completeBash(t, p, dir, "netagent", "--state-dir", sd, "pla"); !slices.Equal(got, []string{"plan"}) {
		t.Errorf("netagent --state-dir D pla: %q", got)
	}
	if got := completeBash(t, p, dir, "netagent", "plan", "s"); !slices.Equal(got, []string{"site.json"}) {
		t.Errorf("netagent plan s: %q", got)
	}
	if got := completeBash(t, p, dir, "netagent", "plan", "site.json", "--f"); !slices.Equal(got, []string{"--force"}) {
		t.Errorf("netagent plan site.json --f: %q", got)
	}
}

// graph --format svg lays the DOT out with Graphviz's dot when it is on
// PATH (the external uplink dashed, not as a deletion), and without it
// fails at once with exit 3 naming what is missing, printing nothing.
func TestBinaryGraphSVG(t *testing.T) {
	gateway, err := filepath.Abs("../../examples/gateway.json")
	if err != nil {
		t.Fatal(err)
	}
	testbin.Netagent(t) // built before PATH changes
	t.Run("without dot", func(t *testing.T) {
		t.Setenv("PATH", t.TempDir())
		code, out, errOut := runBinary(t, "graph", gateway, "--format", "svg")
		if code != exitInternal || out != "" || !strings.Contains(errOut, "Graphviz's dot, which is not on PATH") {
			t.Errorf("graph --format svg without dot: want exit %d, nothing on stdout, got exit %d\n%s%s", exitInternal, code, out, errOut)
		}
		if code, _, errOut := runBinary(t, "graph", gateway, "--format", "png"); code != exitUsage || !strings.Contains(errOut, "want dot or svg") {
			t.Errorf("graph --format png: exit %d\n%s", code, errOut)
		}
	})
	t.Run("with dot", func(t *testing.T) {
		dot := testtool.Tool{Name: "dot", Package: "graphviz"}.Find(t)
		withDot := t.TempDir() // PATH with dot alone
		if err := os.Symlink(dot, filepath.Join(withDot, "dot")); err != nil {
			t.Fatal(err)
		}
		t.Setenv("PATH", withDot)
		code, out, errOut := runBinary(t, "graph", gateway, "--format", "svg")
		if code != exitOK || !strings.Contains(out, "<svg") {
			t.Fatalf("graph --format svg: exit %d\n%s%s", code, out, errOut)
		}
		_, uplink, ok := strings.Cut(out, "<title>link/uplink0</title>")
		if shape, _, _ := strings.Cut(uplink, "<text"); !ok || !strings.Contains(shape, "stroke-dasharray") || strings.Contains(shape, "red") {
			t.Errorf("the external uplink is not drawn dashed:\n%s", out)
		}
	})
}

// Run without privilege, every command that reaches the kernel says that
// it needs root (or the capabilities) and exits 3; a --netns that does
// not exist is named, with where to see the others, and no state
// directory is made for it (issue 29, point 3).
func TestBinaryNeedsRootAndANamespace(t *testing.T) {
	intentFile := filepath.Join(t.TempDir(), "e.json")
	if err := os.WriteFile(intentFile, []byte(`{"version": 1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Chmod(filepath.Dir(intentFile), 0o755)
	bin := testbin.Netagent(t)
	if os.Geteuid() == 0 { // the binary must be reachable by nobody
		os.Chmod(filepath.Dir(bin), 0o755)
	}
	for _, args := range [][]string{{"plan", intentFile}, {"apply", intentFile}, {"check", intentFile}, {"show"}, {"snapshot"}, {"import", "kernel"}} {
		sd := filepath.Join(t.TempDir(), "state")
		cmd := exec.Command(bin, append(args, "--state-dir", sd)...)
		if os.Geteuid() == 0 {
			cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		}
		var errOut bytes.Buffer
		cmd.Stderr = &errOut
		err := cmd.Run()
		if ee := (*exec.ExitError)(nil); !errors.As(err, &ee) || ee.ExitCode() != exitInternal ||
			!strings.Contains(errOut.String(), "root (or the capabilities CAP_NET_ADMIN and CAP_SYS_ADMIN) is needed to act on a network namespace") {
			t.Errorf("%q as nobody: %v\n%s", args, err, errOut.String())
		}
		if _, err := os.Stat(sd); err == nil {
			t.Errorf("%q as nobody made the state directory", args)
		}
	}
	intentDir := t.TempDir()
	run := []string{"run", "--intent-dir", intentDir, "--socket", filepath.Join(t.TempDir(), "sock")}
	for _, args := range [][]string{{"plan", intentFile}, {"apply", intentFile}, {"check", intentFile}, {"show"}, {"snapshot"}, {"import", "kernel"}, run} {
		sd := filepath.Join(t.TempDir(), "state")
		code, _, errOut := runBinary(t, append([]string{"--netns", "na-no-such-ns", "--state-dir", sd}, args...)...)
		if code != exitInternal || !strings.Contains(errOut, "network namespace \"na-no-such-ns\" does not exist (`ip netns list` shows those there are)") {
			t.Errorf("%q --netns na-no-such-ns: exit %d\n%s", args, code, errOut)
		}
		if _, err := os.Stat(sd); err == nil {
			t.Errorf("%q --netns na-no-such-ns made the state directory", args)
		}
	}
}
