package host

import (
	"errors"
	"slices"
	"strings"
	"testing"

	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/internal/disrupt"
	"github.com/netagent/netagent/items"
	"github.com/netagent/netagent/reconciler"
)

// Two ports leaving their bridge in one pass: the second is the last, and
// the bridge loses its carrier with it (the kernel's NO-CARRIER), though
// the state the pass starts from still holds the first.
func TestPredictOpsLastOfSeveralPortsLeaving(t *testing.T) {
	before, ops := bothPortsLeave()
	p1 := ops[0].Item
	preds := PredictOps(ops, before)
	if preds[0].Effect != disrupt.Removed || len(preds[0].LinksDown) != 0 {
		t.Errorf("first port: %s %v, want removed, nothing down", preds[0], preds[0].LinksDown)
	}
	if !slices.Equal(preds[1].LinksDown, []string{"br0"}) || !strings.Contains(preds[1].Why, "br0 loses its carrier") {
		t.Errorf("last port: %s %v, want br0 down", preds[1], preds[1].LinksDown)
	}
	// A failed first delete leaves its port in: the second is not the last.
	ops[0].Err = errors.New("refused")
	if preds = PredictOps(ops, before); len(preds[1].LinksDown) != 0 {
		t.Errorf("after a failed delete: %s %v, want nothing down", preds[1], preds[1].LinksDown)
	}
	if !before.Contains(dg.Ref(p1)) {
		t.Error("the state the pass starts from was changed")
	}
}

// The summary names a bridge whose last port leaves as going down, not as
// removed (the port is removed; the bridge stays, without carrier).
func TestSummarizeMasterOfALastPortGoesDown(t *testing.T) {
	br := &items.Interface{IfName: "br0", Kind: items.KindBridge, AdminUp: true}
	p1 := &items.Port{IfName: "p1", Master: "br0", MasterKind: items.KindBridge}
	ops := reconciler.OperationLog{op(reconciler.OpDelete, p1, false)}
	d := SummarizeDisruption(ops, PredictOps(ops, dg.New("current", br, p1)), nil)
	if len(d.LinksDown) != 1 || d.LinksDown[0].Link != "br0" || d.LinksDown[0].Effect != disrupt.Down {
		t.Errorf("links down %+v, want br0 down", d.LinksDown)
	}
}

// bothPortsLeave is a bridge br0 (up) with two ports, p1 and p2, and the
// plan that takes both out of it.
func bothPortsLeave() (*dg.Graph, reconciler.OperationLog) {
	br := &items.Interface{IfName: "br0", Kind: items.KindBridge, AdminUp: true}
	p1 := &items.Port{IfName: "p1", Master: "br0", MasterKind: items.KindBridge}
	p2 := &items.Port{IfName: "p2", Master: "br0", MasterKind: items.KindBridge}
	return dg.New("current", br, p1, p2), reconciler.OperationLog{op(reconciler.OpDelete, p1, false), op(reconciler.OpDelete, p2, false)}
}
