package vm

import (
	"strings"
	"time"
)

// Result is what one VM run printed and how it ended.
type Result struct {
	Output   string        // the whole serial console, kernel messages included, "\r" removed
	ExitCode int           // the test binary's exit status; -1 if it never finished
	Boot     time.Duration // qemu start to the test binary's start
	Duration time.Duration // qemu start to qemu exit
	Passed   []string      // tests and subtests ("TestA/sub") that printed "--- PASS"
	Failed   []string      // ... "--- FAIL"
	Skipped  []string      // ... "--- SKIP"
}

// recordTestLine notes a "--- PASS: TestX (0.01s)" line, indented or not.
func (r *Result) recordTestLine(line string) {
	rest, ok := strings.CutPrefix(strings.TrimLeft(line, " \t"), "--- ")
	if !ok {
		return
	}
	verdict, rest, _ := strings.Cut(rest, ": ")
	name, _, _ := strings.Cut(rest, " ")
	if name == "" {
		return
	}
	switch verdict {
	case "PASS":
		r.Passed = append(r.Passed, name)
	case "FAIL":
		r.Failed = append(r.Failed, name)
	case "SKIP":
		r.Skipped = append(r.Skipped, name)
	}
}

// topLevel returns the names in tests that are not subtests.
func topLevel(tests []string) []string {
	var top []string
	for _, name := range tests {
		if !strings.Contains(name, "/") {
			top = append(top, name)
		}
	}
	return top
}

// tail returns the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
