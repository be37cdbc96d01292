package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// completionLines are the cases' command lines, their words joined by
// spaces (none of the cases' words needs quoting).
func completionLines(cases []completionCase) []string {
	lines := make([]string, 0, len(cases))
	for _, tc := range cases {
		lines = append(lines, strings.Join(tc.words, " "))
	}
	return lines
}

// splitCompletions reads a shell's answers: after each "== LINE" marker,
// one candidate a line (fish's "candidate<TAB>description" and a
// directory's trailing / cut), sorted and without duplicates, a slice
// for each line in order.
func splitCompletions(t *testing.T, out string, n int) [][]string {
	t.Helper()
	var got [][]string
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "== ") {
			got = append(got, nil)
			continue
		}
		if line == "" || line == "--end--" || len(got) == 0 {
			continue
		}
		c, _, _ := strings.Cut(line, "\t")
		got[len(got)-1] = append(got[len(got)-1], strings.TrimSuffix(c, "/"))
	}
	if len(got) != n {
		t.Fatalf("%d answers, want %d:\n%s", len(got), n, out)
	}
	for i := range got {
		slices.Sort(got[i])
		got[i] = slices.Compact(got[i])
	}
	return got
}

// runShell runs a shell program in dir, bounded: a shell that waits for
// input must not hang the test.
func runShell(t *testing.T, dir, name string, args ...string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err != nil {
		t.Fatalf("%s: %v (scripts/setup.sh installs it)", name, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir(), "XDG_CONFIG_HOME="+t.TempDir(), "XDG_DATA_HOME="+t.TempDir())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", name, err, out)
	}
	return string(out)
}

// checkShellCompletion compares a shell's answers with the cases', and
// checks that every command is offered with its options.
func checkShellCompletion(t *testing.T, shell string, complete func(lines []string) string) {
	cases := append(slices.Clone(completionCases),
		completionCase{words: []string{"netagent", ""}, want: commandNames()},
		completionCase{words: []string{"netagent", "try", "--pro"}, want: []string{"--probe", "--probe-must-pass-before", "--probe-timeout", "--protect"}})
	got := splitCompletions(t, complete(completionLines(cases)), len(cases))
	for i, tc := range cases {
		if noFleet(tc.words) {
			continue
		}
		if !slices.Equal(got[i], tc.want) {
			t.Errorf("%s %q: %q, want %q", shell, tc.words, got[i], tc.want)
		}
	}
}

// The zsh script, loaded by compinit in an interactive zsh on a
// pseudo-terminal (zsh/zpty), completes as the bash one: each line is
// typed and completed with TAB, and what reaches compadd (after zsh
// filtered it by the word typed) is recorded.
func TestZshCompletion(t *testing.T) {
	script, dir := writeCompletionScript(t, "zsh"), completionDir(t)
	out := filepath.Join(t.TempDir(), "offered")
	checkShellCompletion(t, "zsh", func(lines []string) string {
		runShell(t, dir, "zsh", append([]string{"-f", "-c", zshDriver, "zsh", script, out}, lines...)...)
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	})
}

// zshDriver SCRIPT OUT LINE...: an interactive zsh on a pseudo-terminal
// loads SCRIPT through compinit, with compadd wrapped to append what it
// is given (filtered as zsh filters it) to OUT, and TAB bound to complete
// and then append "--end--". Each LINE is typed with a TAB; once its
// "--end--" is in OUT, the line is killed and the terminal read up to a
// marker command: the next line is never typed ahead (zle would see it).
const zshDriver = `
zmodload zsh/zpty || exit 1
script=$1 out=$2
shift 2
: > $out
zpty z zsh -f -i || exit 1
zpty -w z "bindkey -e; autoload -U compinit; compinit -u -D; source ${(q)script}"
zpty -w z "compadd() { local -a _m; builtin compadd -O _m \"\$@\"; print -rl -- \$_m >> ${(q)out}; builtin compadd \"\$@\" }"
zpty -w z "_complete_marked() { zle complete-word; print -r -- --end-- >> ${(q)out} }; zle -N _complete_marked; bindkey '^I' _complete_marked"
zpty -w z "print READY-0"
zpty -r z reply '*READY-0*' || exit 1
zpty -r z reply '*READY-0*' || exit 1
i=0
for line in "$@"; do
    ((i++))
    print -r -- "== $line" >> $out
    zpty -w -n z "$line"$'\t'
    n=0
    while :; do
        ends=(${(f)"$(<$out)"})
        ends=(${(M)ends:#--end--})
        (( ${#ends} >= i )) && break
        (( n++ < 1200 )) || { print -u2 "no completion of: $line"; exit 1 }
        sleep 0.05
    done
    zpty -w -n z $'\x15'
    zpty -w z "print DONE-$i"
    zpty -r z reply "*DONE-$i*" || exit 1
done
zpty -d z
`

// The fish script completes as the bash one: `complete -C LINE` is fish's
// own completion of each line.
func TestFishCompletion(t *testing.T) {
	script, dir := writeCompletionScript(t, "fish"), completionDir(t)
	checkShellCompletion(t, "fish", func(lines []string) string {
		return runShell(t, dir, "fish", append([]string{"--no-config", "-c",
			`source $argv[1]; or exit 1; for l in $argv[2..]; echo "== $l"; complete -C $l; end`, script}, lines...)...)
	})
}
