// Package importertest helps the importers' tests: the outcome of an
// import as one line, for the tables that pin what each package example
// gives.
package importertest

import (
	"errors"
	"fmt"
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
