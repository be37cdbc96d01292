package manpage

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/netagent/netagent/internal/testtool"
)

var header = Header{Date: "2026-12-03", Source: "netagent v1.0", Manual: "netagent manual"}

// samplePage is a command page as docs/commands/ has them (docs29's
// convention), with what a converter can get wrong: links to other pages
// and anchors, a table, a code block with a line starting with a dot,
// non-ASCII text.
const samplePage = "# netagent-sample(8)\n" + `
## NAME

netagent-sample - do a sample thing to the network

## SYNOPSIS

` + "`netagent sample`" + ` [*OPTIONS*] *FILE*

## DESCRIPTION

Reads *FILE* ([netagent.json(5)](../intent.md), see [drift](../drift.md#policy))
and says so — as ` + "`plan`" + ` would. See <https://example.com/netagent>.

| code | meaning |
|---|---|
| 0 | done |
| 1 | not done, with a reason long enough to be wrapped in its cell |

## OPTIONS

` + "`--netns NAME`" + ` runs in the named network namespace.

` + "`--wait DURATION`" + ` waits this long (default 5s).

## EXIT STATUS

0 when it did, 1 when it did not.

## EXAMPLES

` + "```" + `
netagent sample /etc/netagent/host.json
.a line starting with a dot
` + "```" + `

## SEE ALSO

**netagent**(8), **netagent.json**(5)
`

func TestConvertSamplePage(t *testing.T) {
	p, err := Convert([]byte(samplePage), header)
	if err != nil {
		t.Fatal(err)
	}
	if p.Name != "netagent-sample" || p.Section != "8" || p.FileName() != "netagent-sample.8" {
		t.Errorf("page %s(%s), file %s", p.Name, p.Section, p.FileName())
	}
	roff := string(p.Roff)
	for _, want := range []string{
		`.TH "NETAGENT-SAMPLE" "8" "2026-12-03" "netagent v1.0" "netagent manual"` + "\n",
		".SH NAME\nnetagent-sample \\- do a sample thing to the network\n",
		"Reads \\fIFILE\\fP (netagent.json(5), see drift)\nand says so \\[u2014] as",
		"\\[la]https://example.com/netagent\\[ra]",
		"\\&.a line starting with a dot",
		".TS\n",
	} {
		if !strings.Contains(roff, want) {
			t.Errorf("the page lacks %q:\n%s", want, roff)
		}
	}
	if strings.Contains(roff, "intent.md") || strings.Contains(roff, "drift.md") {
		t.Error("a relative link's target is in the man page")
	}
	for i, c := range p.Roff {
		if c > 127 {
			t.Fatalf("byte %d of the page is not ASCII: %q", i, p.Roff[max(0, i-20):i+1])
		}
	}
}

func TestConvertRefuses(t *testing.T) {
	for _, tc := range []struct{ name, page, want string }{
		{"no title line", "## NAME\n\nx - y\n", "is not the title line"},
		{"title without section", "# netagent-x\n\n## NAME\n\nnetagent-x - y\n", "is not the title line"},
		{"no NAME", "# netagent-x(8)\n\n## SYNOPSIS\n\nx\n", `no "## NAME" section`},
		{"NAME without summary", "# netagent-x(8)\n\n## NAME\n\nnetagent-x\n", "is not \"netagent-x - summary\""},
		{"NAME of another page", "# netagent-x(8)\n\n## NAME\n\nnetagent-y - summary\n", "is not \"netagent-x - summary\""},
		{"raw HTML", "# netagent-x(8)\n\n## NAME\n\nnetagent-x - y\n\n<div>boxed</div>\n", "raw HTML has no man form"},
	} {
		if _, err := Convert([]byte(tc.page), header); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.want)
		}
	}
	if _, err := Convert([]byte(samplePage), Header{Date: `2026" "x`}); err == nil {
		t.Error("a header field with a quote was taken")
	}
	// An HTML comment (docs/intent.md's markers) is no HTML.
	if _, err := Convert([]byte("# netagent-x(8)\n\n## NAME\n\nnetagent-x - y\n\n<!-- a marker -->\n"), header); err != nil {
		t.Errorf("a comment: %v", err)
	}
}

// docsPages are the pages of docs/ that become man pages: the format, and
// every command page that exists (docs/commands is docs29's, filled in
// after this test was written: the test covers whatever is there).
func docsPages(t *testing.T) map[string]string {
	t.Helper()
	pages := map[string]string{"../../docs/intent.md": "netagent.json.5"}
	cmds, err := filepath.Glob("../../docs/commands/*.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cmds {
		pages[c] = strings.TrimSuffix(filepath.Base(c), ".md") + ".8"
	}
	return pages
}

// TestDocsPagesConvert converts each page of docs/ that is a man page:
// its title line must name the page's file (docs/commands/netagent-apply.md
// is netagent-apply(8)), and the page must render without a warning. The
// sample command page renders too, so that the command pages are covered
// before docs/commands has any.
func TestDocsPagesConvert(t *testing.T) {
	dir := t.TempDir()
	sample := filepath.Join(dir, "netagent-sample.md")
	if err := os.WriteFile(sample, []byte(samplePage), 0o644); err != nil {
		t.Fatal(err)
	}
	pages := docsPages(t)
	pages[sample] = "netagent-sample.8"
	for src, file := range pages {
		md, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		p, err := Convert(md, header)
		if err != nil {
			t.Errorf("%s: %v", src, err)
			continue
		}
		if p.FileName() != file {
			t.Errorf("%s: its title line names %s(%s), the file is %s's", src, p.Name, p.Section, file)
		}
		out := filepath.Join(dir, p.FileName())
		if err := os.WriteFile(out, p.Roff, 0o644); err != nil {
			t.Fatal(err)
		}
		renders(t, out, p.Name)
	}
}

// TestInstalledPagesRender installs with scripts/install.sh into a
// temporary root (DESTDIR, two PREFIXes; a stand-in binary that only
// prints completion scripts, which is all the script runs of it) and
// renders every page installed under $PREFIX/share/man: one for
// docs/intent.md and one per docs/commands/*.md.
func TestInstalledPagesRender(t *testing.T) {
	renderTools(t)
	bin := filepath.Join(t.TempDir(), "netagent")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\necho \"# completion for $2\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, prefix := range []string{"/usr/local", "/opt/netagent"} {
		root := t.TempDir()
		cmd := exec.Command("sh", "../../scripts/install.sh", bin)
		cmd.Env = append(os.Environ(), "DESTDIR="+root, "PREFIX="+prefix, "SOURCE_DATE_EPOCH=1780000000")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("install.sh with PREFIX=%s: %v\n%s", prefix, err, out)
		}
		mandir := filepath.Join(root, prefix, "share/man")
		installed, _ := filepath.Glob(filepath.Join(mandir, "man*", "*"))
		want := docsPages(t)
		if len(installed) != len(want) {
			t.Errorf("PREFIX=%s: installed %q, want one page for each of %d docs pages", prefix, installed, len(want))
		}
		for _, file := range want {
			page := filepath.Join(mandir, "man"+file[strings.LastIndexByte(file, '.')+1:], file)
			roff, err := os.ReadFile(page)
			if err != nil {
				t.Errorf("PREFIX=%s: %v", prefix, err)
				continue
			}
			if !bytes.Contains(roff, []byte(`" "2026-05-28" "netagent`)) {
				t.Errorf("%s: the .TH line has not SOURCE_DATE_EPOCH's date:\n%.200s", page, roff)
			}
			renders(t, page, strings.TrimSuffix(file, file[strings.LastIndexByte(file, '.'):]))
		}
	}
}

func renderTools(t *testing.T) (man, groff, lexgrog string) {
	t.Helper()
	man = testtool.Tool{Name: "man", Package: "man-db"}.Find(t)
	lexgrog = testtool.Tool{Name: "lexgrog", Package: "man-db"}.Find(t)
	groff = testtool.Tool{Name: "groff", Package: "groff-base"}.Find(t)
	return man, groff, lexgrog
}

// renders checks that a page renders without a warning, as man shows it
// (man -l, 80 columns, groff's warnings on) and as groff checks it (every
// warning, tbl run), and that whatis reads its NAME line.
func renders(t *testing.T, page, name string) {
	t.Helper()
	man, groff, lexgrog := renderTools(t)
	for _, args := range [][]string{
		{man, "--warnings", "-l", page},
		{groff, "-man", "-t", "-ww", "-z", page},
	} {
		cmd := exec.Command(args[0], args[1:]...)
		cmd.Env = append(os.Environ(), "MANWIDTH=80", "MAN_KEEP_FORMATTING=", "LC_ALL=C.UTF-8")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil || stderr.Len() > 0 {
			t.Errorf("%s: %v\n%s", strings.Join(args, " "), err, stderr.String())
		}
		if args[0] == man && !bytes.Contains(out, []byte("NAME")) {
			t.Errorf("%s: no NAME in what man shows:\n%.300s", page, out)
		}
	}
	out, err := exec.Command(lexgrog, page).Output()
	if want := page + `: "` + name + ` - `; err != nil || !strings.HasPrefix(string(out), want) {
		t.Errorf("lexgrog %s: %q (%v), want %q...", page, out, err, want)
	}
}
