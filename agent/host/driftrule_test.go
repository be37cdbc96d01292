package host

import (
	"slices"
	"testing"

	"github.com/netagent/netagent/agent/intent"
	"github.com/netagent/netagent/agent/render"
	dg "github.com/netagent/netagent/depgraph"
)

// The drift-ignore rule leaves out what an ignore item's attributes
// differ in, never that it is missing; other policies keep everything.
func TestWithoutIgnored(t *testing.T) {
	ign, rep, rep2 := dg.ItemRef{Type: "route", Name: "a"}, dg.ItemRef{Type: "route", Name: "b"}, dg.ItemRef{Type: "route", Name: "c"}
	pol := render.DriftPolicies{ign: intent.DriftIgnore, rep: intent.DriftReport}
	diffs := []Difference{{Ref: ign, Kind: Differs}, {Ref: rep, Kind: Differs}, {Ref: rep2, Kind: Missing}, {Ref: ign, Kind: Missing}}
	kept, ignored := WithoutIgnored(diffs, pol)
	if len(kept) != 3 || kept[0].Ref != rep || kept[2].Ref != ign || kept[2].Kind != Missing {
		t.Errorf("kept %v", kept)
	}
	if !slices.Equal(ignored, []dg.ItemRef{ign}) {
		t.Errorf("ignored %v", ignored)
	}
	if kept, ignored := WithoutIgnored(diffs, nil); len(kept) != len(diffs) || ignored != nil {
		t.Errorf("no policies: %v, %v", kept, ignored)
	}
}
