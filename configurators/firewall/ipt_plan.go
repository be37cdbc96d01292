package firewall

import (
	"bytes"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/netagent/netagent/items"
)

// chainPlan is what one operation writes into its table. Plans are pure:
// computed from a view of the kernel, rendered into one restore input
// together with the other plans of the same table.
type chainPlan struct {
	chain string
	// write: declare the chain (":<chain> - [0:0]", which creates it or
	// flushes it in the same transaction) and append fill: the marker,
	// then every rule, already rendered as lines (see fillLines). create: the view has no chain of
	// that name, so it is made with "-N <chain>", which fails the
	// transaction if one appeared since the view was taken: a chain that
	// is not netagent's is never flushed for a stale view.
	write, create bool
	fill          string
	// delJumps counts netagent's jumps to chain to delete, per chain
	// holding them.
	delJumps map[string]int
	// jump, when not nil, is where the jump is inserted.
	jump *jumpSpec
	// drop: flush and delete the chain.
	drop bool
}

// jumpSpec is a jump to insert: into chain from, at 1-based position pos.
type jumpSpec struct {
	from string
	pos  int
}

// empty reports whether the plan writes nothing.
func (p *chainPlan) empty() bool {
	return !p.write && len(p.delJumps) == 0 && p.jump == nil && !p.drop
}

// errForeign is the error for a chain of the item's name that does not
// start with netagent's marker rule.
var errForeign = fmt.Errorf("a chain of that name exists without the %q mark: %w", OwnerComment, ErrNotOwned)

// planApply plans turning old (nil for a create) into c, given the kernel
// view v (which must hold c.Chain and the jump sources if they exist) and
// the chain's record (nil if none). made says that netagent made a chain
// of that name in this namespace instance (see adoptable): one whose mark
// was removed by hand is then rewritten whole. It writes only what
// differs.
func planApply(v *tableView, old, c *items.IptablesChain, rec *chainRecord, made bool) (*chainPlan, error) {
	if err := checkChainName(c); err != nil {
		return nil, err
	}
	p := &chainPlan{chain: c.Chain}
	rules, exists := v.rules(c.Chain)
	if exists && !chainOwned(rules, c.Rules, rec, made) {
		return nil, errForeign
	}
	unmarked := exists && !ownedRules(rules) // adopted: rewritten whole, marker included
	if !exists || unmarked || !rulesMatch(rules[1:], c.Rules, rec) {
		fill, err := fillLines(c)
		if err != nil {
			return nil, err
		}
		p.write, p.create, p.fill = true, !exists, fill
	}
	sources := jumpSources(old, c)
	if !jumpInPlace(v, sources, c) {
		p.delJumps = countJumps(v, sources, c.Chain)
		if c.JumpFrom != "" {
			p.jump = &jumpSpec{from: c.JumpFrom, pos: v.jumpAt(c)}
		}
	}
	return p, nil
}

// planDelete plans removing c: its jumps from c.JumpFrom, then the chain.
// A chain that is gone needs nothing; one without the mark is refused,
// unless it is adoptable (made: see planApply).
func planDelete(v *tableView, c *items.IptablesChain, made bool) (*chainPlan, error) {
	if err := checkChainName(c); err != nil {
		return nil, err
	}
	p := &chainPlan{chain: c.Chain}
	rules, exists := v.rules(c.Chain)
	if !exists {
		return p, nil
	}
	if !chainOwned(rules, c.Rules, nil, made) {
		return nil, errForeign
	}
	p.delJumps = countJumps(v, jumpSources(nil, c), c.Chain)
	p.drop = true
	return p, nil
}

// checkChainName refuses chain names the restore format would have to
// quote: chain names are bare words in a chain declaration.
func checkChainName(c *items.IptablesChain) error {
	for _, name := range []string{c.Chain, c.JumpFrom} {
		if q, err := quoteArg(name); name != "" && (err != nil || q != name) {
			return fmt.Errorf("chain name %q: %w", name, ErrBadArgument)
		}
	}
	return nil
}

// rulesMatch reports whether the kernel's rules (marker excluded) are
// intended: equal as written, or equal to the kernel form recorded when
// exactly these intended rules were last applied.
func rulesMatch(kernel, intended [][]string, rec *chainRecord) bool {
	if equalRules(kernel, intended) {
		return true
	}
	return rec != nil && equalRules(rec.Intended, intended) && equalRules(rec.Kernel, kernel)
}

func equalRules(a, b [][]string) bool { return slices.EqualFunc(a, b, slices.Equal) }

// fillLines renders the marker and the rules of c as restore input:
// "-A <chain> <args...>" lines, each ending in a newline, in one string
// (one allocation for the 10k rules of a large intent, not one a rule).
func fillLines(c *items.IptablesChain) (string, error) {
	var b strings.Builder
	b.Grow(fillSize(c))
	for i := -1; i < len(c.Rules); i++ {
		args := markerRule
		if i >= 0 {
			args = c.Rules[i]
		}
		if err := writeRuleLine(&b, "-A", c.Chain, args); err != nil {
			return "", err
		}
		b.WriteByte('\n')
	}
	return b.String(), nil
}

// fillSize is about the length of fillLines' output: exact when no
// argument needs quotes.
func fillSize(c *items.IptablesChain) int {
	n := 0
	for i := -1; i < len(c.Rules); i++ {
		args := markerRule
		if i >= 0 {
			args = c.Rules[i]
		}
		n += len("-A \n") + len(c.Chain)
		for _, a := range args {
			n += 1 + len(a)
		}
	}
	return n
}

// jumpSources lists the chains that may hold netagent's jump to c.Chain:
// the old jump source and the new one.
func jumpSources(old, c *items.IptablesChain) []string {
	var froms []string
	if old != nil && old.JumpFrom != "" {
		froms = append(froms, old.JumpFrom)
	}
	if c.JumpFrom != "" && !slices.Contains(froms, c.JumpFrom) {
		froms = append(froms, c.JumpFrom)
	}
	return froms
}

// jumpInPlace reports whether the jumps to c.Chain in sources are exactly
// the one c wants.
func jumpInPlace(v *tableView, sources []string, c *items.IptablesChain) bool {
	total := 0
	for _, from := range sources {
		total += len(v.jumps(from, c.Chain))
	}
	if c.JumpFrom == "" {
		return total == 0
	}
	at := v.jumps(c.JumpFrom, c.Chain)
	n := len(v.chains[c.JumpFrom])
	return total == 1 && len(at) == 1 && positionMatches(at[0], n, v.jumpAt(c))
}

// positionMatches reports whether a jump found at position at of a chain
// of n rules is at the wanted position. A position past the end means the
// end: the jump is appended there.
func positionMatches(at, n, want int) bool {
	return at == want || (at == n && want > n)
}

// countJumps counts netagent's jumps to target in each source.
func countJumps(v *tableView, sources []string, target string) map[string]int {
	var m map[string]int
	for _, from := range sources {
		if n := len(v.jumps(from, target)); n > 0 {
			if m == nil {
				m = make(map[string]int)
			}
			m[from] = n
		}
	}
	return m
}

// renderTable renders the plans of one table as one iptables-restore
// transaction: declarations, jump deletions, chain contents, jump
// insertions (by position, so positions hold), chain deletions, and, with
// list, "-S" (the table as the transaction leaves it, printed by the
// restore: see execBackend.restoreListed), COMMIT.
func renderTable(table string, v *tableView, plans []*chainPlan, list bool) []byte {
	var b bytes.Buffer
	size := len(table) + 64
	for _, p := range plans {
		size += len(p.fill) + 4*len(p.chain) + 96 // declaration, jump lines
	}
	b.Grow(size)
	b.WriteString("*" + table + "\n")
	for _, p := range plans {
		switch {
		case p.create:
			b.WriteString("-N " + p.chain + "\n")
		case p.write:
			b.WriteString(":" + p.chain + " - [0:0]\n")
		}
	}
	deleted := renderJumpDeletes(&b, plans)
	for _, p := range plans {
		b.WriteString(p.fill)
	}
	renderJumpInserts(&b, v, plans, deleted)
	for _, p := range plans {
		if p.drop {
			b.WriteString("-F " + p.chain + "\n-X " + p.chain + "\n")
		}
	}
	if list {
		b.WriteString("-S\n")
	}
	b.WriteString("COMMIT\n")
	return b.Bytes()
}

// renderJumpDeletes writes the jump deletions (by rule spec, never by
// number, so that a foreign rule can never be hit) and returns how many
// rules each source chain loses.
func renderJumpDeletes(b *bytes.Buffer, plans []*chainPlan) map[string]int {
	deleted := make(map[string]int)
	for _, p := range plans {
		froms := make([]string, 0, len(p.delJumps))
		for from := range p.delJumps {
			froms = append(froms, from)
		}
		slices.Sort(froms)
		for _, from := range froms {
			line, _ := ruleLine("-D", from, jumpRule(p.chain)) // names checked by the planners
			for range p.delJumps[from] {
				b.WriteString(line + "\n")
			}
			deleted[from] += p.delJumps[from]
		}
	}
	return deleted
}

// renderJumpInserts writes the jump insertions in position order, each at
// its position, or appended when the chain is shorter than that.
func renderJumpInserts(b *bytes.Buffer, v *tableView, plans []*chainPlan, deleted map[string]int) {
	type ins struct {
		chain string
		jumpSpec
	}
	var all []ins
	for _, p := range plans {
		if p.jump != nil {
			all = append(all, ins{p.chain, *p.jump})
		}
	}
	slices.SortStableFunc(all, func(a, b ins) int {
		if c := strings.Compare(a.from, b.from); c != 0 {
			return c
		}
		return a.pos - b.pos
	})
	length := make(map[string]int)
	for _, in := range all {
		n, seen := length[in.from]
		if !seen {
			n = len(v.chains[in.from]) - deleted[in.from]
		}
		var line string
		if in.pos <= n+1 {
			line, _ = ruleLine("-I", in.from+" "+strconv.Itoa(in.pos), jumpRule(in.chain))
		} else {
			line, _ = ruleLine("-A", in.from, jumpRule(in.chain))
		}
		b.WriteString(line + "\n")
		length[in.from] = n + 1
	}
}
