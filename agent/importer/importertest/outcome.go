// Package importertest helps the importers' tests: the outcome of an
// import as one line, and the check of the tables that pin what each
// package example gives.
package importertest

import (
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"testing"

	"github.com/netagent/netagent/agent/importer"
)

// Outcome is how the import of name ended: "" it imported (err is nil),
// else "LINE:COLUMN KEY" of its first refusal. It fails t for an error
// that is no refusal, and for a refusal without its line or its why.
func Outcome(t testing.TB, name string, err error) string {
	t.Helper()
	var ie *importer.Error
	switch {
	case err == nil:
		return ""
	case !errors.As(err, &ie):
		t.Errorf("%s: %v", name, err)
		return err.Error()
	}
	for _, r := range ie.Refusals {
		if r.Pos.Line == 0 || r.Why == "" {
			t.Errorf("%s: a refusal without its line or why: %v", name, r)
		}
	}
	r := ie.Refusals[0]
	return fmt.Sprintf("%d:%d %s", r.Pos.Line, r.Pos.Column, r.Key)
}

// ImportFunc imports one file with opts.
type ImportFunc func(file string, opts importer.Options) error

// CheckPins checks a package's examples against pins, by name (a path
// relative to dir): each imports or is refused as its pin says (Outcome),
// and imports with SkipUnsupported; an example without a pin, and a pin
// without its example, fail t. It returns how many are refused.
func CheckPins(t testing.TB, dir string, names []string, pins map[string]string, imp ImportFunc) (refused int) {
	t.Helper()
	for _, name := range names {
		f := filepath.Join(dir, name)
		got := Outcome(t, f, imp(f, importer.Options{}))
		want, ok := pins[name]
		switch {
		case !ok:
			t.Errorf("%s: a package example without a pin (it is %q)", name, got)
			continue
		case got != want:
			t.Errorf("%s: %q, want %q", name, got, want)
		}
		if want != "" {
			refused++
		}
		if err := imp(f, importer.Options{SkipUnsupported: true}); err != nil {
			t.Errorf("%s with --skip-unsupported: %v", name, err)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(pins)) {
		if !slices.Contains(names, name) {
			t.Errorf("%s: pinned, but not among the package's examples", name)
		}
	}
	return refused
}
