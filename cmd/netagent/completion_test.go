package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// completeBash sources script in bash, sets COMP_WORDS to words (the last
// one is the word being completed), calls the completion function in dir
// and returns COMPREPLY, sorted.
func completeBash(t *testing.T, script, dir string, words ...string) []string {
	t.Helper()
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Fatalf("bash: %v", err)
	}
	cmd := exec.Command(bash, "--norc", "--noprofile", "-c",
		`source "$1" || exit 1; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}
		_netagent; [[ ${#COMPREPLY[@]} -eq 0 ]] || printf '%s\n' "${COMPREPLY[@]}"`, "bash", script)
	cmd.Args = append(cmd.Args, words...)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%q: %v\n%s", words, err, out)
	}
	reply := strings.Fields(string(out))
	slices.Sort(reply)
	return reply
}

// writeCompletionScript writes `netagent completion SHELL` into a file.
func writeCompletionScript(t *testing.T, shell string) string {
	t.Helper()
	code, out, errOut := runCLI("completion", shell)
	if code != exitOK {
		t.Fatalf("completion %s: exit %d\n%s", shell, code, errOut)
	}
	p := filepath.Join(t.TempDir(), "netagent."+shell)
	if err := os.WriteFile(p, []byte(out), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// completionCase is a command line (its last word is the one being
// completed) and what a shell offers there, sorted.
type completionCase struct {
	words []string
	want  []string
}

// completionCases are what every shell's completion offers, in the
// directory completionDir makes.
var completionCases = []completionCase{
	{[]string{"netagent", "pl"}, []string{"plan"}},
	{[]string{"netagent", "re"}, []string{"recover"}},
	{[]string{"netagent", "--state-dir", "/x", "--log-level", "warn", "ap"}, []string{"apply"}},
	{[]string{"netagent", "--log-l"}, []string{"--log-level"}},
	{[]string{"netagent", "--log-level", ""}, []string{"debug", "error", "info", "warn"}},
	{[]string{"netagent", "plan", "--j"}, []string{"--json"}},
	{[]string{"netagent", "apply", "--lock"}, []string{"--lock-timeout"}},
	{[]string{"netagent", "apply", "a.json", "--state"}, []string{"--state-dir"}},
	{[]string{"netagent", "status", "--log-format", "j"}, []string{"json"}},
	{[]string{"netagent", "plan", ""}, []string{"--x.json", "a.json", "sub"}},
	{[]string{"netagent", "--netns", "x", "plan", "a.json", "--json", "a"}, []string{"a.json"}},
	{[]string{"netagent", "validate", "b"}, []string{"b.txt"}}, // no *.json: any file
	{[]string{"netagent", "check", "--", "--"}, []string{"--x.json"}},
	{[]string{"netagent", "apply", "--wait", ""}, nil}, // a duration: nothing to offer
	{[]string{"netagent", "apply", "--wait", "5s", "a"}, []string{"a.json"}},
	{[]string{"netagent", "plan", "--state-dir", ""}, []string{"sub"}},
	{[]string{"netagent", "run", "--intent-dir", "s"}, []string{"sub"}},
	{[]string{"netagent", "status", ""}, nil}, // takes no files
	{[]string{"netagent", "help", "st"}, []string{"status"}},
	{[]string{"netagent", "help", "fleet", "p"}, []string{"push"}},
	{[]string{"netagent", "help", "plan", ""}, nil},
	{[]string{"netagent", "completion", ""}, []string{"bash", "fish", "zsh"}},
	// fleet: its subcommands, then each one's options and (push) file
	{[]string{"netagent", "fleet", ""}, []string{"controller", "delete", "get", "list", "push", "rollout", "snapshot", "status"}},
	{[]string{"netagent", "fleet", "--etcd-endpoints", "http://e:2379", "p"}, []string{"push"}},
	{[]string{"netagent", "--log-level", "warn", "fleet", "s"}, []string{"snapshot", "status"}},
	{[]string{"netagent", "fleet", "push", "--ho"}, []string{"--host"}},
	{[]string{"netagent", "fleet", "status", "--st"}, []string{"--stale", "--state-dir"}},
	{[]string{"netagent", "fleet", "status", "--ho"}, nil},
	{[]string{"netagent", "fleet", "list", "--j"}, []string{"--json"}},
	{[]string{"netagent", "fleet", "push", "--j"}, []string{"--json"}},
	{[]string{"netagent", "fleet", "--host", "h1", "push", "--tr"}, []string{"--trial-timeout", "--try"}},
	{[]string{"netagent", "fleet", "push", ""}, []string{"--x.json", "a.json", "sub"}},
	{[]string{"netagent", "fleet", "push", "--host", "h1", "a"}, []string{"a.json"}},
	{[]string{"netagent", "fleet", "push", "--with", ""}, []string{"--x.json", "a.json", "sub"}},
	{[]string{"netagent", "fleet", "push", "--etcd-ca", "b"}, []string{"b.txt"}},
	{[]string{"netagent", "fleet", "push", "--trial-timeout", ""}, nil}, // a duration
	{[]string{"netagent", "fleet", "get", "--host", "h1", ""}, nil},     // takes no file
	{[]string{"netagent", "fleet", "list", ""}, nil},
}

// completionDir is a directory of a.json, b.txt, --x.json and sub/.
func completionDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, f := range []string{"a.json", "b.txt", "--x.json"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte("{}"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o700); err != nil {
		t.Fatal(err)
	}
	return dir
}

// The bash completion completes command names after the global options,
// each command's options, the values of those it knows and intent files
// (*.json and directories) for the commands that take them.
func TestBashCompletion(t *testing.T) {
	script := writeCompletionScript(t, "bash")
	dir := completionDir(t)
	for _, tc := range completionCases {
		if noFleet(tc.words) {
			continue
		}
		if got := completeBash(t, script, dir, tc.words...); !slices.Equal(got, tc.want) {
			t.Errorf("%q: COMPREPLY %q, want %q", tc.words, got, tc.want)
		}
	}
	// Every command, and each of its options.
	cmds := completeBash(t, script, dir, "netagent", "")
	if !slices.Equal(cmds, commandNames()) {
		t.Errorf("commands: %q, want %q", cmds, commandNames())
	}
	for _, c := range []string{"apply", "try", "run", "status", "history"} {
		got := completeBash(t, script, dir, "netagent", c, "--")
		for _, want := range []string{"--help", "--netns", "--state-dir", "--log-level", "--log-format"} {
			if !slices.Contains(got, want) {
				t.Errorf("%s --: no %s in %q", c, want, got)
			}
		}
	}
	if got := completeBash(t, script, dir, "netagent", "try", "--pro"); !slices.Equal(got, []string{"--probe", "--probe-must-pass-before", "--probe-timeout", "--protect"}) {
		t.Errorf("try --pro: %q", got)
	}
	if code, _, _ := runCLI("completion", "tcsh"); code != exitUsage {
		t.Errorf("completion tcsh: exit %d, want %d", code, exitUsage)
	}
}
