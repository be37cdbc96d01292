package render

import (
	"slices"
	"strings"

	"github.com/netagent/netagent/agent/intent"
	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/items"
)

// The firewall section: the chains, "firewall.chains". Their rules may
// name foreign interfaces, which ToIntent leaves undeclared.
var firewallSection = section{
	path:   "firewall.chains",
	render: (*builder).chains,
	toIntent: func(inv *inverter, out *intent.Intent) {
		out.Firewall.Chains = chainsToIntent(sectionItems[*items.IptablesChain](inv))
	},
}

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
		at := b.in.Locate(ch.Origin, "firewall.chains", i)
		b.object(ch.Drift, ch.Origin)
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

// chainsToIntent converts iptables chains, merging the ipv4 and ipv6
// versions of a chain into one of family "both" when they are the same.
func chainsToIntent(chains []*items.IptablesChain) []intent.Chain {
	var out []intent.Chain
	merged := map[*items.IptablesChain]bool{}
	for _, c := range chains {
		if merged[c] {
			continue
		}
		ch := chainToIntent(c)
		if c.Family == items.FamilyIPv4 {
			if twin := findTwin(chains, c); twin != nil {
				ch.Family, merged[twin] = intent.ChainBoth, true
			}
		}
		out = append(out, ch)
	}
	return out
}

// findTwin returns the ipv6 chain of c's table and name if it is otherwise
// the same as c.
func findTwin(chains []*items.IptablesChain, c *items.IptablesChain) *items.IptablesChain {
	for _, o := range chains {
		if o.Family != items.FamilyIPv6 {
			continue
		}
		v6 := *o
		v6.Family = c.Family
		if v6.Equal(c) {
			return o
		}
	}
	return nil
}

func chainToIntent(c *items.IptablesChain) intent.Chain {
	ch := intent.Chain{Table: intent.FirewallTable(c.Table), Name: c.Chain, JumpFrom: intent.BuiltinChain(c.JumpFrom)}
	if c.Family == items.FamilyIPv6 {
		ch.Family = intent.ChainIPv6
	}
	if c.JumpFrom != "" && c.EffectivePosition() != 1 {
		ch.Position = c.EffectivePosition()
	}
	for _, args := range c.Rules {
		ch.Rules = append(ch.Rules, JoinRule(args))
	}
	return ch
}

// JoinRule writes a rule's arguments as one string that intent.SplitRule
// splits back into the same arguments: plain arguments as they are, the
// others in single quotes.
func JoinRule(args []string) string {
	quoted := make([]string, len(args))
	for i, a := range args {
		quoted[i] = quoteArg(a)
	}
	return strings.Join(quoted, " ")
}

// quoteArg quotes a when it holds anything but letters, digits and
// -_./:,=+@%!. A single quote inside closes the quotes, is written with
// a backslash, and opens them again.
func quoteArg(a string) string {
	if a != "" && strings.IndexFunc(a, func(r rune) bool { return !isPlain(r) }) < 0 {
		return a
	}
	return "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
}

func isPlain(r rune) bool {
	return ('a' <= r && r <= 'z') || ('A' <= r && r <= 'Z') || ('0' <= r && r <= '9') ||
		strings.ContainsRune("-_./:,=+@%!", r)
}
