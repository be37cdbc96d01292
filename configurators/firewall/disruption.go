package firewall

import (
	"github.com/netagent/netagent/internal/disrupt"
	"github.com/netagent/netagent/items"
	"github.com/netagent/netagent/reconciler"
)

// Predict says what an operation on an iptables chain or a sysctl does to
// traffic: a chain is written, rewritten or removed with its jump by one
// iptables-restore (one transaction: the old rules apply until the new
// ones do, with no window without either); a sysctl is written in place.
func Predict(op reconciler.Operation, it any) disrupt.Prediction {
	if _, chain := it.(*items.IptablesChain); !chain {
		return disrupt.In("written in place")
	}
	switch op {
	case reconciler.OpCreate:
		return disrupt.In("chain and jump added in one iptables-restore")
	case reconciler.OpModify:
		return disrupt.Certainly(disrupt.Atomic, "rules and jump replaced in one iptables-restore: no window")
	}
	return disrupt.Certainly(disrupt.Removed, "chain and jump removed in one iptables-restore")
}
