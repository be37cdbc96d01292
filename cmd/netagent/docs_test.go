package main

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/netagent/netagent/agent/member"
)

// The documentation's tests: the command pages (docs/commands/) against
// the command registry completion and help read, the README's length,
// and every relative link of the README and docs/ to a file of the tree.

const (
	repoRoot    = "../.."
	commandsDir = repoRoot + "/docs/commands"
	// readmeMaxLines bounds the README: what netagent is, the two
	// commands, one worked example and where to read on; the rest is in
	// docs/.
	readmeMaxLines = 200
)

// pageName is the page of a completion spec's command: netagent-apply,
// netagent-fleet-push.
func pageName(spec string) string { return "netagent-" + spec }

// docOptions are the options a page's OPTIONS section documents: each
// paragraph that begins with a backquoted `--NAME ...`.
func docOptions(t *testing.T, page string) (opts []string, sections []string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(commandsDir, page+".md"))
	if err != nil {
		t.Fatal(err)
	}
	optLine := regexp.MustCompile("^`(--[a-z0-9-]+)")
	in, paraStart := false, true
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(line, "## ") {
			sections = append(sections, strings.TrimPrefix(line, "## "))
			in = line == "## OPTIONS"
			paraStart = true
			continue
		}
		if strings.TrimSpace(line) == "" {
			paraStart = true
			continue
		}
		if in && paraStart {
			if m := optLine.FindStringSubmatch(line); m != nil {
				opts = append(opts, m[1])
			}
		}
		paraStart = false
	}
	return opts, sections
}

// pageSections are the sections every command page has, in this order
// (go-md2man makes the man pages of them); others (FILES, ENVIRONMENT)
// may come between them.
var pageSections = []string{"NAME", "SYNOPSIS", "DESCRIPTION", "OPTIONS", "EXIT STATUS", "EXAMPLES", "SEE ALSO"}

// TestDocsCommandPages: every command and fleet subcommand of the
// registry has its page, no page is for a command that does not exist,
// and each page's OPTIONS are the command's own options (the global ones
// are netagent(8)'s and may be repeated).
func TestDocsCommandPages(t *testing.T) {
	if !member.Built {
		t.Skip("the pages are the default build's; this one has no fleet (-tags nofleet)")
	}
	want := map[string]completionSpec{}
	for _, s := range completionSpecs() {
		want[pageName(s.name)] = s
	}
	entries, err := os.ReadDir(commandsDir)
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), ".md")
		if !ok || name == "netagent" {
			continue
		}
		have[name] = true
		if _, ok := want[name]; !ok {
			t.Errorf("docs/commands/%s.md: no such command", name)
		}
	}
	for _, page := range mapKeys(want) {
		spec := want[page]
		if !have[page] {
			t.Errorf("docs/commands/%s.md is missing (command %s)", page, strings.Replace(spec.name, "-", " ", 1))
			continue
		}
		checkPage(t, page, spec.flags, func(f string) bool { return isGlobal(strings.TrimPrefix(f, "--")) })
	}
}

// TestDocsOverviewPage: netagent(8) documents the global options.
func TestDocsOverviewPage(t *testing.T) {
	flags := append(globalFlags(), "--version")
	checkPage(t, "netagent", flags, func(string) bool { return false })
}

// checkPage compares a page's sections and OPTIONS with flags (--help,
// and what optional says, may be left out).
func checkPage(t *testing.T, page string, flags []string, optional func(string) bool) {
	t.Helper()
	opts, sections := docOptions(t, page)
	if !inOrder(sections, pageSections) {
		t.Errorf("docs/commands/%s.md: sections %q, want %q in this order", page, sections, pageSections)
	}
	documented := map[string]bool{}
	for _, o := range opts {
		if documented[o] {
			t.Errorf("docs/commands/%s.md: OPTIONS has %s twice", page, o)
		}
		documented[o] = true
		if !slices.Contains(flags, o) {
			t.Errorf("docs/commands/%s.md: OPTIONS has %s, which the command does not take", page, o)
		}
	}
	for _, f := range flags {
		if f != "--help" && !documented[f] && !optional(f) {
			t.Errorf("docs/commands/%s.md: OPTIONS lacks %s", page, f)
		}
	}
	head := readLines(t, filepath.Join(commandsDir, page+".md"))
	title := "# " + page + "(8)"
	if len(head) < 5 || head[0] != title || head[2] != "## NAME" || !strings.HasPrefix(head[4], page+" - ") {
		t.Errorf("docs/commands/%s.md: want %q, then \"## NAME\" and %q", page, title, page+" - SUMMARY")
	}
}

// inOrder: want are in have, each once, in their order.
func inOrder(have, want []string) bool {
	i := 0
	for _, h := range have {
		if i < len(want) && h == want[i] {
			i++
		} else if slices.Contains(want, h) {
			return false
		}
	}
	return i == len(want)
}

func mapKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func readLines(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(string(data), "\n")
}

// TestDocsReadmeShort: the README stays a front page.
func TestDocsReadmeShort(t *testing.T) {
	if n := len(readLines(t, filepath.Join(repoRoot, "README.md"))) - 1; n > readmeMaxLines {
		t.Errorf("README.md has %d lines, more than %d: move the text to a page of docs/", n, readmeMaxLines)
	}
}

// pendingPages are pages that other work adds, linked to already.
var pendingPages = map[string]string{}

// TestDocsLinks: every relative link of README.md and docs/ names a file
// of the tree, and an anchor names a heading of that file.
func TestDocsLinks(t *testing.T) {
	files := []string{"README.md"}
	err := filepath.WalkDir(filepath.Join(repoRoot, "docs"), func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".md") {
			rel, _ := filepath.Rel(repoRoot, path)
			files = append(files, rel)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	link := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	for _, file := range files {
		for n, line := range markdownText(t, filepath.Join(repoRoot, file)) {
			for _, m := range link.FindAllStringSubmatch(line, -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				path, anchor, _ := strings.Cut(target, "#")
				dest := file
				if path != "" {
					dest = filepath.ToSlash(filepath.Clean(filepath.Join(filepath.Dir(file), path)))
				}
				if _, pending := pendingPages[dest]; pending {
					if _, err := os.Stat(filepath.Join(repoRoot, dest)); err != nil {
						continue
					}
				}
				info, err := os.Stat(filepath.Join(repoRoot, dest))
				if err != nil {
					t.Errorf("%s:%d: link %s: %v", file, n+1, target, err)
					continue
				}
				if anchor != "" && !info.IsDir() && strings.HasSuffix(dest, ".md") && !slices.Contains(anchors(t, filepath.Join(repoRoot, dest)), anchor) {
					t.Errorf("%s:%d: link %s: %s has no heading #%s", file, n+1, target, dest, anchor)
				}
			}
		}
	}
}

// markdownText is a file's lines outside fenced code blocks.
func markdownText(t *testing.T, path string) map[int]string {
	t.Helper()
	lines := map[int]string{}
	fenced := false
	for n, line := range readLines(t, path) {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		if !fenced {
			lines[n] = line
		}
	}
	return lines
}

// explicitAnchor is an HTML anchor a page sets itself.
var explicitAnchor = regexp.MustCompile(`<a id="([a-z0-9_-]+)"></a>`)

// anchors are the explicit anchors of a file and the ids GitHub gives its headings: lower case, spaces
// as dashes, punctuation but dashes and underscores dropped.
func anchors(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var ids []string
	seen := map[string]int{}
	fenced := false
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
		}
		if fenced {
			continue
		}
		for _, m := range explicitAnchor.FindAllStringSubmatch(line, -1) {
			ids = append(ids, m[1]) // <a id="x"></a>, as docs/intent.md's generated value types have
		}
		if !strings.HasPrefix(line, "#") {
			continue
		}
		id := slug(strings.TrimLeft(line, "#"))
		if k := seen[id]; k > 0 {
			ids = append(ids, id+"-"+strconv.Itoa(k))
		} else {
			ids = append(ids, id)
		}
		seen[id]++
	}
	return ids
}

func slug(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r > 127:
			b.WriteRune(r)
		}
	}
	return b.String()
}
