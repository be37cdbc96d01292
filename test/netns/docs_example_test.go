//go:build !vmtest

package netns_test

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// The documentation's examples of live output (docs/fleet.md's rollout
// status, docs/commands/netagent-fleet-snapshot.md's summary) were
// captured from these tests' runs; the tests check that what the
// commands print now has the same shape, so that an example cannot
// silently rot.

// docExample is the fenced block of the doc file (relative to the
// repository's root) that follows the line `<!-- example: NAME -->`,
// without its "$ " command lines.
func docExample(t *testing.T, file, name string) []string {
	t.Helper()
	data, err := os.ReadFile("../../" + file)
	if err != nil {
		t.Fatal(err)
	}
	marker := "<!-- example: " + name + " -->"
	_, rest, ok := strings.Cut(string(data), marker+"\n")
	if !ok {
		t.Fatalf("%s has no %s", file, marker)
	}
	lines := strings.Split(rest, "\n")
	if len(lines) < 2 || !strings.HasPrefix(lines[0], "```") {
		t.Fatalf("%s: no fenced block after %s", file, marker)
	}
	var out []string
	for _, l := range lines[1:] {
		if strings.HasPrefix(l, "```") {
			return out
		}
		if !strings.HasPrefix(l, "$ ") {
			out = append(out, l)
		}
	}
	t.Fatalf("%s: the block after %s does not end", file, marker)
	return nil
}

var (
	shapeHex    = regexp.MustCompile(`\b([0-9a-f]{2}:){5}[0-9a-f]{2}\b|\b[0-9a-f]{8,}\b|\b[0-9a-f]*[0-9][0-9a-f]*\b`)
	shapeDigits = regexp.MustCompile(`[0-9]+`)
	shapeBlanks = regexp.MustCompile(`\s+`)
)

// shape is a line of output as an example shows it: numbers (counts,
// ifindexes, versions, durations) and hex words with a digit (boot IDs,
// MACs, a test namespace's suffix) stand for any, blank runs for a
// column's padding.
func shape(line string) string {
	line = shapeHex.ReplaceAllString(line, "N")
	line = shapeDigits.ReplaceAllString(line, "N")
	return strings.TrimSpace(shapeBlanks.ReplaceAllString(line, " "))
}

// checkDocExample fails t unless output has, line by line, the shape of
// the doc's example name (both printed on failure, to paste from).
func checkDocExample(t *testing.T, file, name, output string) {
	t.Helper()
	want := docExample(t, file, name)
	got := strings.Split(strings.TrimRight(output, "\n"), "\n")
	diff := len(want) != len(got)
	for i := 0; !diff && i < len(want); i++ {
		diff = shape(want[i]) != shape(got[i])
	}
	if diff {
		var trimmed []string
		for _, l := range got {
			trimmed = append(trimmed, strings.TrimRight(l, " "))
		}
		t.Errorf("%s, example %s: the output now has another shape; the example:\n%s\nthe output:\n%s", file, name,
			strings.Join(want, "\n"), strings.Join(trimmed, "\n"))
	}
}

// TestDocExampleShape: numbers and padding stand for any; words do not.
func TestDocExampleShape(t *testing.T) {
	for _, c := range []struct {
		a, b string
		same bool
	}{
		{"  w  trial  3   0  ", "  w   trial 12 1", true},
		{"boot 6f1c2d3e-0000-4000-8000-0123456789ab, nsid 0", "boot 00000000-1111-2222-3333-444444444444, nsid 17", true},
		{"  w  trial  3", "  w  done  3", false},
		{"queued 3", "queued 1, pending 2", false},
		{`na-test-139-e76ad0e0 {"mac":"5e:f2:2f:bb:63:cf"}`, `na-test-7-0badcafe {"mac":"02:00:00:00:00:01"}`, true},
		{"h1 fails", "h2 fails", true},
		{"na-test-1-abcdefab", "na-test-2-01234567", true},
		{"h1 fails", "h1 refused", false},
	} {
		if got := shape(c.a) == shape(c.b); got != c.same {
			t.Errorf("%q and %q: same shape %v, want %v (%q, %q)", c.a, c.b, got, c.same, shape(c.a), shape(c.b))
		}
	}
}
