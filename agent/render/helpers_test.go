package render

import (
	"flag"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/netagent/netagent/agent/intent"
	dg "github.com/netagent/netagent/depgraph"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// describe lists a graph's items in order: the ref, the subgraph holding it
// (if not the root), the item's own description and its dependencies.
func describe(g *dg.Graph) string {
	var b strings.Builder
	for _, ref := range g.Refs() {
		it, _ := g.Get(ref)
		b.WriteString(ref.String())
		if scope, _ := g.ScopeOf(ref); scope != "" {
			b.WriteString("  [" + scope + "]")
		}
		b.WriteString("\n    " + it.String() + "\n")
		for _, d := range g.Dependencies(ref) {
			b.WriteString("    needs " + d.String() + "\n")
		}
	}
	return b.String()
}

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from the golden file (go test -update rewrites it)\n got:\n%s\nwant:\n%s", name, got, want)
	}
}

// parseFile parses an intent file of the repository, failing the test on
// error.
func parseFile(t *testing.T, path string) *intent.Intent {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	in, err := intent.Parse(data)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return in
}

// parse parses an intent given inline, failing the test on error.
func parse(t *testing.T, doc string) *intent.Intent {
	t.Helper()
	in, err := intent.Parse([]byte(doc))
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	return in
}

// mustRender renders in, failing the test on error.
func mustRender(t *testing.T, in *intent.Intent) *dg.Graph {
	t.Helper()
	g, err := Render(in)
	if err != nil {
		t.Fatalf("render: %v", err)
	}
	return g
}

// only returns the single item of type typ in g, failing if there is not
// exactly one.
func only[T dg.Item](t *testing.T, g *dg.Graph) T {
	t.Helper()
	var found []T
	for it := range g.Items() {
		if x, ok := it.(T); ok {
			found = append(found, x)
		}
	}
	if len(found) != 1 {
		var zero T
		t.Fatalf("want one %T, found %d", zero, len(found))
	}
	return found[0]
}

// errorLines renders the field errors of err one per line.
func errorLines(err error) string {
	var lines []string
	for _, fe := range intent.FieldErrors(err) {
		lines = append(lines, fe.Error())
	}
	return strings.Join(lines, "\n")
}

func mustPrefix(s string) netip.Prefix { return netip.MustParsePrefix(s) }
