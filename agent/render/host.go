package render

import (
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/netagent/netagent/agent/intent"
	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/items"
)

// sysctls renders every sysctl, in key order. A per-interface key must
// name a declared interface: the item depends on it. A global forwarding
// key depends on the intent's per-interface forwarding keys of its family
// (see forwardingDeps).
func (b *builder) sysctls() {
	keys := make(map[string]string, len(b.in.Sysctls)) // intent key -> item key
	for k := range b.in.Sysctls {
		keys[k] = b.sysctlKey(k)
	}
	for _, k := range slices.Sorted(maps.Keys(b.in.Sysctls)) {
		at, ok := b.in.SysctlOrigins[k]
		if !ok {
			at = intent.Origin{Path: "sysctls[" + strconv.Quote(k) + "]"}
		}
		key := keys[k]
		if ifname, perIf := items.SysctlInterface(key); perIf {
			if _, ok := b.deviceRef(at, ifname); !ok {
				continue
			}
		}
		b.put(&items.Sysctl{Key: key, Value: b.in.Sysctls[k], Deps: forwardingDeps(key, keys)}, at)
	}
}

// forwardingDeps returns, for a key whose write rewrites every interface's
// forwarding key (net.ipv4.ip_forward, net.ipv{4,6}.conf.all.forwarding),
// the references of the per-interface forwarding keys of the same family
// in the intent, in key order. Those are then set first, so that the values
// saved to be restored are the real originals, and restored last.
func forwardingDeps(key string, keys map[string]string) []dg.ItemRef {
	fam, global := items.GlobalForwardingSysctl(key)
	if !global {
		return nil
	}
	var deps []dg.ItemRef
	for _, k := range slices.Sorted(maps.Values(keys)) {
		if f, ok := items.InterfaceForwardingSysctl(k); ok && f == fam {
			deps = append(deps, dg.ItemRef{Type: items.TypeSysctl, Name: k})
		}
	}
	return deps
}

// sysctlKey turns an intent key into the item's: the dots inside a
// declared interface name ("net.ipv4.conf.bond0.100.rp_filter" for
// interface bond0.100) become slashes, as sysctl(8) writes them.
func (b *builder) sysctlKey(k string) string {
	for _, name := range slices.Sorted(maps.Keys(b.idx.ifaces)) {
		if !strings.Contains(name, ".") || !strings.Contains(k, "."+name+".") {
			continue
		}
		cand := strings.Replace(k, "."+name+".", "."+strings.ReplaceAll(name, ".", "/")+".", 1)
		if got, ok := items.SysctlInterface(cand); ok && got == name {
			return cand
		}
	}
	return k
}

// intentSysctlKey is the inverse of sysctlKey.
func intentSysctlKey(key string) string { return strings.ReplaceAll(key, "/", ".") }

// chains renders every firewall chain: one item per family, so a chain of
// family "both" is two items, in iptables and in ip6tables. The jumps from
// one built-in chain are placed as one block (see jumpBlocks). A chain whose
// rules jump to (or go to) another chain of the intent, in its table and
// family, depends on that chain: iptables-restore refuses a jump to a
// chain that does not exist yet, and a chain still jumped to cannot go.
func (b *builder) chains() {
	slots := jumpBlocks(b.in.Firewall.Chains)
	declared := map[dg.ItemRef]bool{}
	for i := range b.in.Firewall.Chains {
		ch := &b.in.Firewall.Chains[i]
		for _, f := range ch.Families() {
			declared[chainRef(families[f], string(ch.Table), ch.Name)] = true
		}
	}
	for i := range b.in.Firewall.Chains {
		ch := &b.in.Firewall.Chains[i]
		at := locate(ch.Origin, "firewall.chains", i)
		for _, f := range ch.Families() {
			slot := slots[jumpKey{f, ch.Table, ch.JumpFrom, ch.Name}]
			var deps []dg.ItemRef
			for _, target := range jumpTargets(ch.Args) {
				ref := chainRef(families[f], string(ch.Table), target)
				if target != ch.Name && declared[ref] && !containsRef(deps, ref) {
					deps = append(deps, ref)
				}
			}
			b.put(&items.IptablesChain{
				Family:     families[f],
				Table:      string(ch.Table),
				Chain:      ch.Name,
				JumpFrom:   string(ch.JumpFrom),
				Position:   slot.pos,
				BlockStart: slot.start,
				Rules:      ch.Args,
				Deps:       deps,
			}, at)
		}
	}
}

// jumpKey names a chain's jump in one family: hooks are per family, table
// and built-in chain.
type jumpKey struct {
	fam   intent.Family
	table intent.FirewallTable
	from  intent.BuiltinChain
	name  string
}

// jumpSlot is where a jump goes: its position, in the block starting at
// start.
type jumpSlot struct{ start, pos int }

// jumpBlocks places the jumps of the chains. netagent's jumps from one
// built-in chain (per family and table) form one block in order of
// position (absent: 1), a position given explicitly before an absent one,
// then by name; the block starts at its first position. So chains sharing
// a hook never claim one place, and the order holds whatever the order of
// the intent (Validate rejects two explicit positions that are equal).
func jumpBlocks(chains []intent.Chain) map[jumpKey]jumpSlot {
	blocks := map[jumpKey][]*intent.Chain{} // name left empty
	for i := range chains {
		ch := &chains[i]
		for _, f := range ch.Families() {
			if ch.JumpFrom != "" {
				hook := jumpKey{f, ch.Table, ch.JumpFrom, ""}
				blocks[hook] = append(blocks[hook], ch)
			}
		}
	}
	slots := map[jumpKey]jumpSlot{}
	for hook, members := range blocks {
		slices.SortFunc(members, blockOrder)
		start := members[0].EffectivePosition()
		for i, ch := range members {
			hook.name = ch.Name
			slots[hook] = jumpSlot{start: start, pos: start + i}
		}
	}
	return slots
}

// blockOrder orders the chains of one block.
func blockOrder(a, b *intent.Chain) int {
	if c := a.EffectivePosition() - b.EffectivePosition(); c != 0 {
		return c
	}
	if ea, eb := a.Position != 0, b.Position != 0; ea != eb {
		if ea {
			return -1
		}
		return 1
	}
	return strings.Compare(a.Name, b.Name)
}

// chainRef is the reference of the chain item of a family, table and name.
func chainRef(f items.Family, table, name string) dg.ItemRef {
	return dg.Ref(&items.IptablesChain{Family: f, Table: table, Chain: name})
}

// jumpTargets lists the targets of the "-j"/"--jump" and "-g"/"--goto"
// options of rules split into arguments, in order.
func jumpTargets(rules [][]string) []string {
	var out []string
	for _, args := range rules {
		for i := 0; i+1 < len(args); i++ {
			switch args[i] {
			case "-j", "--jump", "-g", "--goto":
				out = append(out, args[i+1])
			}
		}
	}
	return out
}
