package nftables

import (
	"fmt"
	"slices"

	gnft "github.com/google/nftables"
	"github.com/google/nftables/expr"

	"github.com/netagent/netagent/internal/netnsx"
	"github.com/netagent/netagent/items"
)

// What ownership, show --all and plan's warnings read of the tables of
// others. It only reads: the names of the tables, whether each holds
// netagent's mark (items.NftOwnerChain), and of their base chains the
// hook, type, priority, policy and whether a rule's verdict drops. Nothing
// else of another owner's table is decoded, and nothing is ever written.

// TableInfo is a table as a listing shows it: its family, name and
// whether it carries netagent's mark.
type TableInfo struct {
	Family, Name string
	Marked       bool
}

// ID is the table's "<family>/<name>", an items.NftTable's name.
func (t TableInfo) ID() string { return t.Family + "/" + t.Name }

// BaseChain is a base chain as plan's warnings see it.
type BaseChain struct {
	Family, Table, Chain string
	Type, Hook           string
	Priority             int
	Device               string
	PolicyDrop           bool
	// DropRules counts the rules of the chain inspected whose verdict is
	// drop or that reject; Inspected is how many were inspected, Rules
	// how many the chain has (Inspected < Rules: a cap was reached).
	// Unread: the rules were not read at all (the cap was reached before).
	DropRules, Inspected, Rules int
	Unread                      bool
}

// ID is the chain's "<family>/<table> <chain>".
func (b BaseChain) ID() string { return b.Family + "/" + b.Table + " " + b.Chain }

// tableReader is what the ownership records, show --all and plan's
// warnings read of the kernel's tables (never a write).
type tableReader interface {
	// Tables lists every table, with its mark.
	Tables() ([]TableInfo, error)
	// BaseChains returns the base chains for which keep (given the
	// chain's table and its hook, type, priority and policy) is true; of
	// a kept chain with policy accept, rules are read (GetRules) while
	// fewer than ruleBudget were inspected in all.
	BaseChains(keep func(TableInfo, BaseChain) bool, ruleBudget int) ([]BaseChain, error)
}

// netlinkReader is tableReader over google/nftables in one namespace.
type netlinkReader struct{ nsfd int }

var _ tableReader = netlinkReader{}

// readerOf is the reader of namespace t (nil: the caller's own).
func readerOf(t *netnsx.Target) netlinkReader {
	if t == nil {
		return netlinkReader{nsfd: -1}
	}
	return netlinkReader{nsfd: int(t.NsHandle())}
}

func (r netlinkReader) conn() (*gnft.Conn, error) {
	if r.nsfd < 0 {
		return gnft.New()
	}
	return gnft.New(gnft.WithNetNSFd(r.nsfd))
}

// tablesAndChains lists the tables and every chain (two dumps).
func (r netlinkReader) tablesAndChains() (*gnft.Conn, []TableInfo, []*gnft.Chain, error) {
	c, err := r.conn()
	if err != nil {
		return nil, nil, nil, fmt.Errorf("nftables: %w", kernelErr(err))
	}
	ts, err := c.ListTables()
	if err != nil {
		return nil, nil, nil, fmt.Errorf("nftables: listing tables: %w", kernelErr(err))
	}
	chains, err := c.ListChains()
	if err != nil {
		return nil, nil, nil, fmt.Errorf("nftables: listing chains: %w", kernelErr(err))
	}
	marked := map[TableInfo]bool{}
	for _, ch := range chains {
		if ch.Name == items.NftOwnerChain {
			marked[TableInfo{Family: familyName(ch.Table.Family), Name: ch.Table.Name}] = true
		}
	}
	var out []TableInfo
	for _, t := range ts {
		ti := TableInfo{Family: familyName(t.Family), Name: t.Name}
		if ti.Family == "" {
			continue
		}
		ti.Marked = marked[ti]
		out = append(out, ti)
	}
	return c, out, chains, nil
}

// Tables lists every table with its mark.
func (r netlinkReader) Tables() ([]TableInfo, error) {
	_, ts, _, err := r.tablesAndChains()
	return ts, err
}

// BaseChains returns the base chains of the kept tables (see tableReader).
func (r netlinkReader) BaseChains(keep func(TableInfo, BaseChain) bool, ruleBudget int) ([]BaseChain, error) {
	c, ts, chains, err := r.tablesAndChains()
	if err != nil {
		return nil, err
	}
	var out []BaseChain
	for _, ch := range chains {
		ti := TableInfo{Family: familyName(ch.Table.Family), Name: ch.Table.Name}
		i := slices.IndexFunc(ts, func(t TableInfo) bool { return t.Family == ti.Family && t.Name == ti.Name })
		if ch.Hooknum == nil || i < 0 {
			continue
		}
		bc := baseChainOf(ti, ch)
		if !keep(ts[i], bc) {
			continue
		}
		err := inspectRules(&bc, &ruleBudget, func() ([]*gnft.Rule, error) { return c.GetRules(ch.Table, ch) })
		if err != nil {
			return nil, fmt.Errorf("nftables: rules of %s: %w", bc.ID(), kernelErr(err))
		}
		out = append(out, bc)
	}
	return out, nil
}

// baseChainOf is ch's hook, type, priority and policy.
func baseChainOf(ti TableInfo, ch *gnft.Chain) BaseChain {
	bc := BaseChain{Family: ti.Family, Table: ti.Name, Chain: ch.Name, Type: string(ch.Type), Device: ch.Device}
	bc.Hook = hookName(ti.Family, *ch.Hooknum)
	if ch.Priority != nil {
		bc.Priority = int(*ch.Priority)
	}
	bc.PolicyDrop = ch.Policy != nil && *ch.Policy == gnft.ChainPolicyDrop
	return bc
}

// hookName is the name of hook number n in family ("" for none known).
func hookName(family string, n gnft.ChainHook) string {
	for name, v := range hooksOf(family) {
		if v == n && (family != "ip" && family != "ip6" && family != "bridge" || name != "ingress") {
			return name
		}
	}
	return ""
}

// inspectRules counts the drops of a kept base chain's rules (read by
// rules) while budget lasts, and takes what it inspected off budget: a
// chain with policy drop is not read, one past the budget is Unread.
func inspectRules(bc *BaseChain, budget *int, rules func() ([]*gnft.Rule, error)) error {
	switch {
	case bc.PolicyDrop:
	case *budget <= 0:
		bc.Unread = true
	default:
		rs, err := rules()
		if err != nil {
			return err
		}
		*budget -= countDrops(bc, rs, *budget)
	}
	return nil
}

// countDrops inspects at most budget of rules, counting in bc those that
// drop or reject, and returns how many it inspected.
func countDrops(bc *BaseChain, rules []*gnft.Rule, budget int) int {
	bc.Rules = len(rules)
	for _, r := range rules[:min(len(rules), budget)] {
		bc.Inspected++
		if drops(r.Exprs) {
			bc.DropRules++
		}
	}
	return bc.Inspected
}

// drops reports whether a rule's expressions end its packets: a drop
// verdict or a reject.
func drops(exprs []expr.Any) bool {
	return slices.ContainsFunc(exprs, func(e expr.Any) bool {
		switch e := e.(type) {
		case *expr.Verdict:
			return e.Kind == expr.VerdictDrop
		case *expr.Reject:
			return true
		}
		return false
	})
}
