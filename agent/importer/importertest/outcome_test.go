package importertest

import (
	"testing"

	"github.com/netagent/netagent/agent/importer"
)

func TestOutcome(t *testing.T) {
	if got := Outcome(t, "f", nil); got != "" {
		t.Errorf("nil: %q", got)
	}
	err := &importer.Error{Refusals: []importer.Refusal{
		{Pos: importer.Position{File: "f", Line: 3, Column: 5}, Key: "iface eth0: post-up", Why: "a command"},
		{Pos: importer.Position{File: "f", Line: 9, Column: 1}, Key: "mapping", Why: "a script"},
	}}
	if got := Outcome(t, "f", err); got != "3:5 iface eth0: post-up" {
		t.Errorf("refused: %q", got)
	}
}
