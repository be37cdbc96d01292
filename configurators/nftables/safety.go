package nftables

import (
	"errors"
	"fmt"

	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/internal/netnsx"
	"github.com/netagent/netagent/items"
)

// Plan's cross-table warnings. Every base chain on a hook sees the
// packet, in priority order, whatever the others decide: an accept ends
// the packet's walk of its own chain only, and a drop in any of them drops
// it (KEP-3866: kube-proxy's nftables mode learned it from firewalld). So
// a base chain of another owner's table on a hook netagent's table uses,
// in a family that sees the same packets (inet covers ip and ip6), with a
// drop policy or rules that drop or reject, may drop what netagent's
// table accepts, before or after it by their priorities. Plan warns of
// each such pair; it reads other owners' tables for this only as
// tableReader does (their base chains, and the verdicts of at most
// MaxInspectedRules rules in all), never writes them.

// MaxInspectedRules bounds the rules of other owners' base chains that
// plan's warnings inspect in all; past it, a warning says how many chains
// were left uninspected.
const MaxInspectedRules = 10000

// maxWarnings bounds the warnings of one plan; past it, one more says
// how many were left out.
const maxWarnings = 50

// Warning is one of plan's warnings about an intended table.
type Warning struct {
	Ref  dg.ItemRef
	Text string
}

// Warnings returns plan's warnings for the tables of hint in namespace
// t: the other owners' base chains that may drop what netagent's accept
// (see above). None on a kernel without nf_tables.
func Warnings(t *netnsx.Target, hint *dg.Graph) ([]Warning, error) {
	want := intendedTables(hint)
	if len(want) == 0 {
		return nil, nil
	}
	return warnings(readerOf(t), want, MaxInspectedRules)
}

func warnings(r tableReader, want []*items.NftTable, budget int) ([]Warning, error) {
	mine := ownBaseChains(want)
	names := map[string]bool{}
	for _, it := range want {
		names[it.Name()] = true
	}
	foreign, err := r.BaseChains(func(t TableInfo, bc BaseChain) bool {
		return !t.Marked && !names[t.ID()] && bc.Hook != "" && coversAny(mine, bc)
	}, budget)
	if errors.Is(err, ErrNoNftables) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading other owners' base chains: %w", err)
	}
	var out []Warning
	unread := 0
	for _, f := range foreign {
		if f.Unread {
			unread++
			continue
		}
		for _, m := range mine {
			if seesSamePackets(m.chain, f) && dropsSome(f) {
				out = append(out, Warning{Ref: m.ref, Text: crossTableText(m.chain, f)})
			}
		}
	}
	if len(out) > maxWarnings {
		out = append(out[:maxWarnings], Warning{Ref: out[maxWarnings].Ref, Text: fmt.Sprintf("nftables: %d more such warnings left out", len(out)-maxWarnings)})
	}
	if unread > 0 {
		out = append(out, Warning{Ref: mine[0].ref, Text: fmt.Sprintf("nftables: %d base chains of other owners on netagent's hooks were not inspected for drop rules: "+
			"the cap of %d rules inspected was reached", unread, budget)})
	}
	return out, nil
}

// ownChain is a base chain of an intended table, with its table's item.
type ownChain struct {
	ref   dg.ItemRef
	chain BaseChain
}

// ownBaseChains are the intended tables' base chains.
func ownBaseChains(want []*items.NftTable) []ownChain {
	var out []ownChain
	for _, it := range want {
		for _, ch := range it.Chains {
			if !ch.Base() {
				continue
			}
			prio, _ := items.NftPriorityValue(it.Family, ch.Hook, derefPriority(ch.Priority))
			out = append(out, ownChain{ref: dg.Ref(it), chain: BaseChain{Family: it.Family, Table: it.Table, Chain: ch.Name,
				Type: ch.Type, Hook: ch.Hook, Priority: prio, Device: ch.Device, PolicyDrop: ch.Policy == "drop"}})
		}
	}
	return out
}

func derefPriority(p *items.NftPriority) items.NftPriority {
	if p == nil {
		return items.NftPriority{}
	}
	return *p
}

// coversAny reports whether f is on the hook of one of mine.
func coversAny(mine []ownChain, f BaseChain) bool {
	for _, m := range mine {
		if seesSamePackets(m.chain, f) {
			return true
		}
	}
	return false
}

// seesSamePackets reports whether base chains a and b see the same packets: the
// same hook, in the same family or inet and one of ip and ip6; on the
// ingress and egress hooks, of the same device.
func seesSamePackets(a, b BaseChain) bool {
	if a.Hook != b.Hook {
		return false
	}
	if (a.Hook == "ingress" || a.Hook == "egress") && a.Device != b.Device {
		return false
	}
	ipish := func(f string) bool { return f == "inet" || f == "ip" || f == "ip6" }
	if a.Family == b.Family {
		return true
	}
	return ipish(a.Family) && ipish(b.Family) && (a.Family == "inet" || b.Family == "inet")
}

// dropsSome reports whether f drops packets: its policy, or a rule.
func dropsSome(f BaseChain) bool { return f.PolicyDrop || f.DropRules > 0 }

// crossTableText is the warning that f may drop what m accepts.
func crossTableText(m, f BaseChain) string {
	order := "runs before netagent's"
	switch {
	case f.Priority == m.Priority:
		order = "runs at the same priority as netagent's (their order is not defined)"
	case f.Priority > m.Priority:
		order = "runs after netagent's"
	}
	why := "has policy drop"
	switch {
	case f.PolicyDrop:
	case f.Inspected < f.Rules:
		why = fmt.Sprintf("drops or rejects in %d of the first %d of its %d rules (the rest not inspected: cap)", f.DropRules, f.Inspected, f.Rules)
	default:
		why = fmt.Sprintf("drops or rejects in %d of its %d rules", f.DropRules, f.Rules)
	}
	return fmt.Sprintf("nftables: another owner's base chain %s (type %s, hook %s, priority %d) %s; it %s chain %s/%s %s (priority %d): "+
		"an accept in netagent's table does not bypass a drop in another table (every base chain on a hook sees the packet: KEP-3866)",
		f.ID(), f.Type, f.Hook, f.Priority, why, order, m.Family, m.Table, m.Chain, m.Priority)
}
