package firewall

import (
	"strings"

	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/internal/netnsx"
	"github.com/netagent/netagent/items"
)

// maxOtherChains bounds the chains an import takes: they are another
// writer's.
const maxOtherChains = 1 << 12

// ReadOtherChains reads the iptables chains in t that are not netagent's
// for an import (see OtherChains).
func ReadOtherChains(t *netnsx.Target, stateDir string) ([]dg.Item, error) {
	chains, err := ReadForeignChains(t, stateDir)
	if err != nil {
		return nil, err
	}
	return OtherChains(chains), nil
}

// OtherChains turns the others' chains into the items that would make
// them: a chain of its own (not a table's built-in one) becomes an
// IptablesChain with its rules, jumped to from the built-in chain whose
// only rule naming it is a bare "-j CHAIN" (at that position), as an
// intent's chain is. What an intent cannot make becomes an items.Foreign
// with its Why: a rule of a built-in chain other than such a jump (the
// intent's rules live in chains of its own), a chain jumped to from more
// than one built-in chain or by a jump with matches, too many chains.
func OtherChains(chains []ForeignChain) []dg.Item {
	own := map[string]bool{} // the chains of their own, by name
	for _, c := range chains {
		own[c.Name()] = !c.BuiltIn
	}
	jumps := map[string][]jumpAt{} // family/table/chain -> bare jumps to it
	for _, c := range chains {
		if !c.BuiltIn {
			continue
		}
		for i, r := range c.Rules {
			if key, ok := bareJump(&c, r); ok && own[key] {
				jumps[key] = append(jumps[key], jumpAt{from: c.Chain, pos: i + 1})
			}
		}
	}
	var out []dg.Item
	for _, c := range chains {
		if len(out) >= maxOtherChains {
			out = append(out, otherChainRefusal(&c, "more chains than the import takes"))
			break
		}
		if c.BuiltIn {
			out = append(out, builtInRules(&c, jumps)...)
			continue
		}
		out = append(out, otherChain(&c, jumps[c.Name()]))
	}
	return out
}

// jumpAt is a bare jump's place: a built-in chain and a 1-based position.
type jumpAt struct {
	from string
	pos  int
}

func otherChain(c *ForeignChain, jumps []jumpAt) dg.Item {
	if len(jumps) > 1 {
		return otherChainRefusal(c, "jumped to from more than one built-in chain or place: an intent's chain has one jump")
	}
	it := &items.IptablesChain{Family: c.Family, Table: c.Table, Chain: c.Chain, Rules: c.Rules}
	if len(jumps) == 1 {
		it.JumpFrom, it.Position = jumps[0].from, jumps[0].pos
	}
	return it
}

// builtInRules are the refusals of a built-in chain's rules other than
// the bare jumps that otherChain turns into its JumpFrom.
func builtInRules(c *ForeignChain, jumps map[string][]jumpAt) []dg.Item {
	var out []dg.Item
	for _, r := range c.Rules {
		if key, ok := bareJump(c, r); ok && len(jumps[key]) == 1 {
			continue
		}
		out = append(out, &items.Foreign{Kind: items.TypeIptablesChain, Desc: c.Name() + " rule " + strings.Join(r, " "),
			Why: "a rule of a built-in chain is not an intent's: its rules live in chains of its own, jumped to"})
	}
	return out
}

// bareJump returns the name of the chain a rule "-j CHAIN" of c jumps to.
func bareJump(c *ForeignChain, r []string) (string, bool) {
	if len(r) != 2 || r[0] != "-j" {
		return "", false
	}
	return (&ForeignChain{Family: c.Family, Table: c.Table, Chain: r[1]}).Name(), true
}

func otherChainRefusal(c *ForeignChain, why string) *items.Foreign {
	return &items.Foreign{Kind: items.TypeIptablesChain, Desc: c.Name(), Why: why}
}
