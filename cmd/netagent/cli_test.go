package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sirupsen/logrus"

	"github.com/netagent/netagent/agent/host"
	"github.com/netagent/netagent/agent/oneshot"
	"github.com/netagent/netagent/agent/versions"
)

// Options go after the files too: `graph f.json --current --netns X`
// reads the kernel of X (which does not exist: exit 3 naming it) instead
// of taking --current for a file.
func TestFlagsAfterFiles(t *testing.T) {
	code, _, errOut := runCLI("--state-dir", t.TempDir(), "graph", "../../examples/gateway.json", "--current", "--netns", "na-does-not-exist")
	if code != exitInternal || !strings.Contains(errOut, "na-does-not-exist") || strings.Contains(errOut, "--current") {
		t.Errorf("exit %d, want %d naming the namespace:\n%s", code, exitInternal, errOut)
	}
	// Between files, with a value, and as --name=value.
	other := writeIntent(t, "other.json", `{"version": 1, "interfaces": [{"name": "br9", "type": "bridge"}]}`)
	code, out, errOut := runCLI("validate", "../../examples/gateway.json", "--log-level=warn", other, "--log-format", "json")
	if code != exitOK || !strings.HasPrefix(out, "valid: 2 files,") {
		t.Errorf("validate with options between and after the files: exit %d\n%s%s", code, out, errOut)
	}
	// A bad option after the files is still a bad command line.
	if code, _, errOut := runCLI("validate", "../../examples/gateway.json", "--bogus"); code != exitUsage || !strings.Contains(errOut, "-bogus") {
		t.Errorf("bad option after a file: exit %d\n%s", code, errOut)
	}
	// An option that takes a value, last without one.
	if code, _, _ := runCLI("plan", "../../examples/gateway.json", "--netns"); code != exitUsage {
		t.Errorf("--netns without its value: exit %d, want %d", code, exitUsage)
	}
}

// "--" ends the options: a file whose name starts with a dash can be
// given after it (and only after it).
func TestDoubleDashEndsOptions(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	for i, name := range []string{"--x.json", "-y.json"} {
		doc := fmt.Sprintf(`{"version": 1, "interfaces": [{"name": "br%d", "type": "bridge"}]}`, i)
		if err := os.WriteFile(filepath.Join(dir, name), []byte(doc), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if code, out, errOut := runCLI("validate", "--log-level", "warn", "--", "--x.json", "-y.json"); code != exitOK || !strings.HasPrefix(out, "valid: 2 files,") {
		t.Errorf("validate -- --x.json -y.json: exit %d\n%s%s", code, out, errOut)
	}
	if code, _, _ := runCLI("validate", "--x.json"); code != exitUsage {
		t.Errorf("validate --x.json (no --): exit %d, want %d (an unknown option)", code, exitUsage)
	}
	// A "--" that is an option's value ends nothing.
	fs := newFlagSet(testGlobals(), "x", "")
	s := fs.String("socket", "", "")
	j := fs.Bool("json", false, "")
	if _, ok := parseFlags(fs, []string{"--socket", "--", "f", "--json"}); !ok || *s != "--" || !*j || fs.NArg() != 1 || fs.Arg(0) != "f" {
		t.Errorf("--socket -- f --json: socket %q json %v args %q", *s, *j, fs.Args())
	}
}

func testGlobals() *globals {
	g := &globals{stdout: io.Discard, stderr: io.Discard, logFormat: "text", logLevel: "info"}
	if err := g.settle(); err != nil {
		panic(err)
	}
	return g
}

// A command's option before the command's name is the command's:
// `netagent --json history` is `netagent history --json`; an unknown
// option is still a bad command line, the command's.
func TestCommandOptionsBeforeTheCommand(t *testing.T) {
	code, out, errOut := runCLI("--json", "--state-dir", t.TempDir(), "history")
	if code != exitOK || strings.TrimSpace(out) != "[]" {
		t.Errorf("--json --state-dir D history: exit %d\n%s%s", code, out, errOut)
	}
	code, _, errOut = runCLI("--bogus", "history")
	if code != exitUsage || !strings.Contains(errOut, "--bogus") || !strings.Contains(errOut, "Run 'netagent history --help'") {
		t.Errorf("--bogus history: exit %d\n%s", code, errOut)
	}
	if code, _, errOut := runCLI("--bogus"); code != exitUsage || !strings.Contains(errOut, "-bogus") {
		t.Errorf("--bogus: exit %d\n%s", code, errOut)
	}
}

// The global options are accepted after the command's name: the later of
// two wins. history reads the versions of the state directory given last.
func TestGlobalOptionsAfterTheCommand(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	doc := []byte(`{"version": 1, "interfaces": [{"name": "br0", "type": "bridge"}]}`)
	if _, _, err := versions.Record(versions.Open(b, 0), "test", map[string][]byte{"a.json": doc}, versions.Any); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		n    int
	}{
		{[]string{"history", "--state-dir", b, "--json"}, 1},
		{[]string{"--state-dir", a, "history", "--json", "--state-dir", b}, 1},
		{[]string{"--state-dir", b, "history", "--state-dir", a, "--json"}, 0},
		{[]string{"--state-dir", b, "history", "--json"}, 1},
	} {
		code, out, errOut := runCLI(tc.args...)
		var list []oneshot.HistoryEntry
		if code != exitOK || json.Unmarshal([]byte(out), &list) != nil || len(list) != tc.n {
			t.Errorf("%q: exit %d, %d versions, want %d\n%s%s", tc.args, code, len(list), tc.n, out, errOut)
		}
	}
	// Each global, after the command, on a command without --netns of
	// its own (status, validate) and on one with (plan, kernelFlags).
	g := testGlobals()
	fs := newFlagSet(g, "status", "")
	args := []string{"--netns", "na-x", "--log-level", "debug", "--log-format", "json"}
	if _, ok := parseFlags(fs, args); !ok {
		t.Fatal("parse failed")
	}
	if g.netns != "na-x" || g.stateDir != "/var/lib/netagent/na-x" || g.log.GetLevel() != logrus.DebugLevel {
		t.Errorf("after %q: netns %q, state dir %q, level %v", args, g.netns, g.stateDir, g.log.GetLevel())
	}
	if _, isJSON := g.log.Formatter.(*logrus.JSONFormatter); !isJSON {
		t.Errorf("--log-format json after the command: formatter %T", g.log.Formatter)
	}
	g = testGlobals()
	g.stateDir, g.stateDirGiven = "/given", true
	fs = newFlagSet(g, "status", "")
	if _, ok := parseFlags(fs, []string{"--netns", "na-x"}); !ok || g.stateDir != "/given" {
		t.Errorf("a given --state-dir follows the --netns after the command: %q", g.stateDir)
	}
	g = testGlobals()
	fs = newFlagSet(g, "plan", "")
	k := kernelFlags(g, fs)
	if _, ok := parseFlags(fs, []string{"--netns", "na-y", "f.json"}); !ok || k.netns != "na-y" || k.stateDir(g) != "/var/lib/netagent/na-y" {
		t.Errorf("plan --netns na-y: netns %q, state dir %q", k.netns, k.stateDir(g))
	}
	if code, _, errOut := runCLI("validate", "--log-level", "loud", "../../examples/gateway.json"); code != exitUsage || !strings.Contains(errOut, "log-level") {
		t.Errorf("a bad --log-level after the command: exit %d\n%s", code, errOut)
	}
}

// A bad command line prints the error, options spelled with two dashes
// (with the closest option when one is close), and one line pointing at
// --help: no usage, no exit-code table (issue 29, point 1). --version is
// the version command; back-quoted prose is no placeholder and a boolean
// option has none (point 2); `help exit-codes` has the table.
func TestUsageErrorsAreShort(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"apply"}, "netagent apply: no intent file given\nRun 'netagent apply --help' for its usage.\n"},
		{[]string{"plan", "--jsn", "f.json"}, "netagent plan: flag provided but not defined: --jsn; did you mean --json?\nRun 'netagent plan --help' for its usage.\n"},
		{[]string{"apply", "--wait", "soon", "f.json"}, "netagent apply: invalid value \"soon\" for flag --wait: time: invalid duration \"soon\"\nRun 'netagent apply --help' for its usage.\n"},
		{[]string{"--frobnicate"}, "netagent: flag provided but not defined: --frobnicate\nRun 'netagent --help' for the commands and options.\n"},
		{nil, "usage: netagent [global options] <command> [options] [arguments]\nRun 'netagent --help' for the commands and options.\n"},
	} {
		code, out, errOut := runCLI(tc.args...)
		if code != exitUsage || out != "" || errOut != tc.want {
			t.Errorf("%q: exit %d, stdout %q, stderr %q, want %q", tc.args, code, out, errOut, tc.want)
		}
	}
	for _, args := range [][]string{{"--version"}, {"--netns", "x", "--version"}} {
		code, out, errOut := runCLI(args...)
		if _, want, _ := runCLI("version"); code != exitOK || out != want || errOut != "" {
			t.Errorf("%q: exit %d, %q %q, want %q", args, code, out, errOut, want)
		}
	}
	code, out, _ := runCLI("try", "--help")
	if code != exitOK || !strings.Contains(out, "\n  --probe PROBE\n") || !strings.Contains(out, "\n  --keep-partial\n") || strings.Contains(out, "GO DOC") {
		t.Errorf("try --help: exit %d\n%s", code, out)
	}
	if code, out, _ := runCLI("--help"); code != exitOK || !strings.Contains(out, "\n  --version\n") || strings.Contains(out, "an intent file could not be read") {
		t.Errorf("--help: exit %d\n%s", code, out)
	}
	code, out, _ = runCLI("help", "exit-codes")
	for _, want := range []string{"exit codes:\n  0  success", "an intent file could not be read", "9  try: reverted, a probe did not pass", "for fleet: 1 an invalid intent"} {
		if code != exitOK || !strings.Contains(out, want) {
			t.Errorf("help exit-codes: exit %d, no %q in\n%s", code, want, out)
		}
	}
}

// netagent help, help COMMAND and COMMAND --help print on stdout, exit 0;
// an unknown command names the closest one.
func TestHelp(t *testing.T) {
	code, out, _ := runCLI("help")
	if code != exitOK || !strings.Contains(out, "commands:") || !strings.Contains(out, "  plan ") || !strings.Contains(out, "exit codes:") {
		t.Errorf("help: exit %d\n%s", code, out)
	}
	for _, args := range [][]string{{"help", "plan"}, {"plan", "--help"}, {"plan", "-h"}, {"--state-dir", t.TempDir(), "plan", "f.json", "--help"}} {
		code, out, errOut := runCLI(args...)
		if code != exitOK || errOut != "" {
			t.Errorf("%q: exit %d, stderr %q", args, code, errOut)
		}
		for _, want := range []string{"usage: netagent plan [options] FILE...", "--json", "--protect", "global options", "--state-dir DIR", "--netns NAME", "exit codes: netagent help exit-codes"} {
			if !strings.Contains(out, want) {
				t.Errorf("%q: no %q in\n%s", args, want, out)
			}
		}
	}
	if code, out, _ := runCLI("--help"); code != exitOK || !strings.Contains(out, "commands:") {
		t.Errorf("--help: exit %d\n%s", code, out)
	}
	for _, tc := range []struct{ typed, want string }{{"aply", "apply"}, {"stauts", "status"}, {"valid", "validate"}, {"rollbak", "rollback"}, {"hist", "history"}} {
		for _, args := range [][]string{{tc.typed}, {"help", tc.typed}} {
			code, out, errOut := runCLI(args...)
			if code != exitUsage || out != "" || !strings.Contains(errOut, `did you mean "`+tc.want+`"?`) {
				t.Errorf("%q: exit %d\n%s%s", args, code, out, errOut)
			}
		}
	}
	if code, _, errOut := runCLI("frobnicate"); code != exitUsage || strings.Contains(errOut, "did you mean") {
		t.Errorf("frobnicate: exit %d\n%s", code, errOut)
	}
	if code, _, _ := runCLI(); code != exitUsage {
		t.Errorf("no command: exit %d", code)
	}
	// fleet's subcommands, as `netagent fleet push --help`
	for _, args := range [][]string{{"help", "fleet", "push"}, {"fleet", "push", "--help"}} {
		if noFleet(args) {
			continue
		}
		code, out, errOut := runCLI(args...)
		if code != exitOK || errOut != "" || !strings.Contains(out, "usage: netagent fleet push [options]") || !strings.Contains(out, "--etcd-endpoints") {
			t.Errorf("%q: exit %d\n%s%s", args, code, out, errOut)
		}
	}
	for _, args := range [][]string{{"help", "fleet", "frob"}, {"help", "plan", "push"}, {"help", "fleet", "push", "x"}} {
		if code, _, _ := runCLI(args...); code != exitUsage {
			t.Errorf("%q: exit %d, want %d", args, code, exitUsage)
		}
	}
}

// A missing or unreadable intent file is exit 3 (I/O), not 1 (an
// invalid intent), for every command that reads intent files. The
// namespace does not exist: the files are read before it is opened.
func TestMissingFileIsIO(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "missing.json")
	dir := t.TempDir() // a directory: unreadable as a file
	for _, cmd := range []string{"validate", "plan", "check", "apply", "try", "graph"} {
		for _, f := range []string{missing, dir} {
			code, _, errOut := runCLI("--state-dir", t.TempDir(), cmd, "--netns", "na-does-not-exist", "../../examples/gateway.json", f)
			if code != exitInternal || !strings.Contains(errOut, f) {
				t.Errorf("%s %s: exit %d, want %d\n%s", cmd, f, code, exitInternal, errOut)
			}
		}
	}
	// Through the daemon: the files are read before it is asked.
	g := testGlobals()
	var errOut strings.Builder
	g.stderr = &errOut
	h := host.Holder{PID: 1, Command: "run", Socket: filepath.Join(t.TempDir(), "none.sock")}
	for _, files := range [][]string{{missing}, {"../../examples/gateway.json", missing}} {
		_, err := oneshot.CallDaemon(context.Background(), h, "plan", files)
		if code := daemonFail(g, err); code != exitInternal || !strings.Contains(errOut.String(), missing) {
			t.Errorf("via the daemon, %q: exit %d, want %d\n%s", files, code, exitInternal, errOut.String())
		}
	}
	// An invalid intent stays 1.
	bad := writeIntent(t, "bad.json", `{"version": 1, "interfaces": [{"name": "br0"`)
	_, err := oneshot.CallDaemon(context.Background(), h, "plan", []string{"../../examples/gateway.json", bad})
	if code := daemonFail(g, err); code != exitFailed {
		t.Errorf("via the daemon, a truncated file: exit %d, want %d", code, exitFailed)
	}
}

// --adopt is a flag of apply, plan, try and run; it does not go through a
// daemon (--via-daemon is a usage error naming it).
func TestAdoptFlag(t *testing.T) {
	for _, cmd := range []string{"apply", "plan", "try"} {
		code, _, errOut := runCLI(cmd, "--adopt", "--via-daemon", "--state-dir", t.TempDir(), "../../examples/gateway.json")
		if code != exitUsage || !strings.Contains(errOut, "--adopt is for the one-shot command") {
			t.Errorf("%s --adopt --via-daemon: exit %d\n%s", cmd, code, errOut)
		}
	}
	for _, cmd := range []string{"apply", "plan", "try", "run"} {
		if _, out, _ := runCLI(cmd, "--help"); !strings.Contains(out, "--adopt\n") {
			t.Errorf("%s --help does not list --adopt:\n%s", cmd, out)
		}
	}
}
