package items

import (
	"fmt"
	"slices"

	dg "github.com/netagent/netagent/depgraph"
)

// IptablesChain is a user chain in an iptables table with all its rules,
// optionally jumped to from a built-in chain. Its name is
// "<family>/<table>/<chain>" ("ipv4/nat/NAT-OUT"). The configurator replaces
// the chain's rules as a whole, atomically, and moves the jump, so every
// change is a Modify.
//
// Rules naming interfaces ("-o uplink0") do not depend on them: iptables
// accepts names of absent interfaces.
type IptablesChain struct {
	Family Family // FamilyIPv4 (iptables) or FamilyIPv6 (ip6tables)
	Table  string // filter, nat, mangle, raw, security
	Chain  string
	// JumpFrom is the built-in chain ("POSTROUTING") that jumps to Chain;
	// "" for none.
	JumpFrom string
	// Position is the 1-based position of the jump in JumpFrom; 0 means 1,
	// in Equal too.
	Position int
	// BlockStart, when not 0, says that the jump belongs to netagent's block
	// of jumps in JumpFrom (all of netagent's jumps from one built-in chain
	// of one family and table), which starts at BlockStart: the jump is the
	// (Position-BlockStart+1)-th of the block. A block starting past the
	// built-in chain's own rules starts right after them, and its jumps
	// follow on in order (see JumpAt). 0 means Position is absolute.
	BlockStart int
	// Rules are the chain's rules in order, each split into arguments as
	// after "-A <chain>": {"-o", "uplink0", "-j", "MASQUERADE"}.
	Rules [][]string
	// Deps are items that must exist first: the renderer lists the chains
	// of the intent that Rules jump or go to.
	Deps []dg.ItemRef
}

var _ dg.Item = (*IptablesChain)(nil)

// Type returns TypeIptablesChain.
func (c *IptablesChain) Type() string { return TypeIptablesChain }

// Name returns "<family>/<table>/<chain>".
func (c *IptablesChain) Name() string {
	return c.Family.String() + "/" + c.Table + "/" + c.Chain
}

// External returns false.
func (c *IptablesChain) External() bool { return false }

// EffectivePosition returns Position, or 1 for 0.
func (c *IptablesChain) EffectivePosition() int {
	if c.Position == 0 {
		return 1
	}
	return c.Position
}

// JumpAt returns the 1-based position the jump must take in a built-in
// chain holding foreign rules that are not netagent's jumps. An absolute
// Position is returned as is.
func (c *IptablesChain) JumpAt(foreign int) int {
	if c.BlockStart == 0 {
		return c.EffectivePosition()
	}
	return min(c.BlockStart, foreign+1) + max(c.EffectivePosition()-c.BlockStart, 0)
}

// Dependencies: Deps.
func (c *IptablesChain) Dependencies() []dg.Dependency { return extraDeps(nil, c.Deps) }

// Equal compares every field (Position as EffectivePosition).
func (c *IptablesChain) Equal(other dg.Item) bool {
	o, ok := other.(*IptablesChain)
	if !ok || o == nil {
		return false
	}
	return c.Family == o.Family && c.Table == o.Table && c.Chain == o.Chain &&
		c.JumpFrom == o.JumpFrom && c.EffectivePosition() == o.EffectivePosition() && c.BlockStart == o.BlockStart &&
		slices.EqualFunc(c.Rules, o.Rules, slices.Equal) && slices.Equal(c.Deps, o.Deps)
}

// String describes the chain in one line.
func (c *IptablesChain) String() string {
	s := fmt.Sprintf("iptables-chain %s %d rules", c.Name(), len(c.Rules))
	if c.JumpFrom != "" {
		s += fmt.Sprintf(", jump from %s at %d", c.JumpFrom, c.EffectivePosition())
	}
	if c.JumpFrom != "" && c.BlockStart != 0 && c.BlockStart != c.EffectivePosition() {
		s += fmt.Sprintf(" (block from %d)", c.BlockStart)
	}
	return s
}
