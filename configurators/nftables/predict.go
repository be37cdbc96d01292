package nftables

import (
	"fmt"
	"strings"

	"github.com/netagent/netagent/internal/disrupt"
	"github.com/netagent/netagent/items"
	"github.com/netagent/netagent/reconciler"
)

// Predict says what an operation on a table does to traffic (package
// disrupt) and, for a modify, which base chains it recreates: a base
// chain's hook, priority and type cannot change in place (the kernel
// refuses NFT_MSG_NEWCHAIN with another hook or type for an existing
// chain), so such a chain is deleted and made again, and its rules and
// counters start anew. old is the table's current value (nil: unknown).
// Every operation is one transaction: no packet sees a table half
// written.
func Predict(op reconciler.Operation, old, it *items.NftTable) disrupt.Prediction {
	switch op {
	case reconciler.OpCreate:
		return disrupt.In("the table is made in one transaction")
	case reconciler.OpDelete:
		return disrupt.Certainly(disrupt.Removed, "the table and its chains are deleted in one transaction")
	}
	why := "the table is replaced in one transaction"
	if rc := ChainRecreates(old, it); len(rc) > 0 {
		why += "; " + strings.Join(rc, "; ")
	}
	return disrupt.Certainly(disrupt.Atomic, why)
}

// ChainRecreates names, for each base chain of old whose hook, priority
// or type new changes (or that becomes a regular chain or the reverse),
// the recreate it needs: "recreate chain input (hook/priority/type cannot
// change in place: priority 0 → -10)".
func ChainRecreates(old, new *items.NftTable) []string {
	if old == nil || new == nil {
		return nil
	}
	var out []string
	for _, nc := range new.Chains {
		for _, oc := range old.Chains {
			if oc.Name != nc.Name {
				continue
			}
			if ch := baseChanges(old.Family, oc, nc); len(ch) > 0 {
				out = append(out, fmt.Sprintf("recreate chain %s (hook/priority/type cannot change in place: %s)", nc.Name, strings.Join(ch, ", ")))
			}
		}
	}
	return out
}

// baseChanges lists what of a base chain's hook, priority and type
// differs between a and b, as "what old → new".
func baseChanges(family string, a, b items.NftChain) []string {
	if !a.Base() && !b.Base() {
		return nil
	}
	if a.Base() != b.Base() {
		return []string{fmt.Sprintf("hook %q → %q", a.Hook, b.Hook)}
	}
	var out []string
	if a.Hook != b.Hook {
		out = append(out, fmt.Sprintf("hook %s → %s", a.Hook, b.Hook))
	}
	pa, _ := items.NftPriorityValue(family, a.Hook, derefPriority(a.Priority))
	pb, _ := items.NftPriorityValue(family, b.Hook, derefPriority(b.Priority))
	if pa != pb {
		out = append(out, fmt.Sprintf("priority %d → %d", pa, pb))
	}
	if a.Type != b.Type {
		out = append(out, fmt.Sprintf("type %s → %s", a.Type, b.Type))
	}
	return out
}
