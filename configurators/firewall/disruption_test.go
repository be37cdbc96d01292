package firewall

import (
	"testing"

	"github.com/netagent/netagent/internal/disrupt"
	"github.com/netagent/netagent/items"
	"github.com/netagent/netagent/reconciler"
)

// TestPredictChain: one iptables-restore per chain operation: a rewrite
// is atomic.
func TestPredictChain(t *testing.T) {
	ch := &items.IptablesChain{}
	for op, want := range map[reconciler.Operation]disrupt.Effect{
		reconciler.OpCreate: disrupt.None, reconciler.OpModify: disrupt.Atomic, reconciler.OpDelete: disrupt.Removed,
	} {
		if p := Predict(op, ch); p.Effect != want || !p.Certain {
			t.Errorf("%s chain: %s, want %s", op, p, want)
		}
	}
	if p := Predict(reconciler.OpModify, &items.Sysctl{}); p.Effect != disrupt.None {
		t.Errorf("sysctl: %s", p)
	}
}
