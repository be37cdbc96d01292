package l3

import (
	"context"
	"fmt"

	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/items"
	"github.com/netagent/netagent/reconciler"
	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// ruleNL is the part of netlink.Handle the rule configurator uses. Rule
// changes go over a conn: the library's RuleAdd always sets NLM_F_EXCL,
// and the kernel's existence check for it treats an unset source or
// destination as a wildcard, so "from all" would clash with "from
// 10.0.0.0/8" of the same priority and table.
type ruleNL interface {
	RuleList(family int) ([]netlink.Rule, error)
}

var _ ruleNL = (*netlink.Handle)(nil)

// ruleConfigurator manages items.Rule. A rule cannot change in place, and
// its item name holds every selector, so Modify never reaches the kernel.
type ruleConfigurator struct {
	nlh  ruleNL
	open opener
}

var _ reconciler.Configurator = (*ruleConfigurator)(nil)

// errRuleNotOwned: a rule of another protocol has every selector of the item.
var errRuleNotOwned = fmt.Errorf("%w: a rule of another protocol has the same selectors", ErrNotOwned)

// Create adds the rule unless netagent's is already there; a rule of
// another protocol with the same selectors is ErrNotOwned.
func (c *ruleConfigurator) Create(_ context.Context, item dg.Item) error {
	r, err := items.As[*items.Rule](item)
	if err != nil {
		return err
	}
	list, err := c.list(r.Family)
	if err != nil {
		return fmt.Errorf("adding rule %s: %w", r.Name(), err)
	}
	owned, foreign := findRule(list, r)
	switch {
	case owned >= 0:
		return nil
	case foreign:
		return fmt.Errorf("adding rule %s: %w", r.Name(), errRuleNotOwned)
	}
	return wrapIf(c.send(ruleRequest(unix.RTM_NEWRULE, unix.NLM_F_CREATE, r)), "adding rule %s", r.Name())
}

// Modify changes nothing in the kernel: two rules of one name differ only
// in Deps. Any other difference is an error (ErrNeedsRecreate).
func (c *ruleConfigurator) Modify(_ context.Context, oldItem, newItem dg.Item) error {
	o, err := items.As[*items.Rule](oldItem)
	if err != nil {
		return err
	}
	n, err := items.As[*items.Rule](newItem)
	if err != nil {
		return err
	}
	k := *o
	k.Deps = n.Deps
	if !k.Equal(n) {
		return fmt.Errorf("modifying rule %s into %s: %w", o.Name(), n.Name(), ErrNeedsRecreate)
	}
	return nil
}

// Delete removes netagent's rule; see deleteRule.
func (c *ruleConfigurator) Delete(_ context.Context, item dg.Item) error {
	return onItem[*items.Rule](item, "deleting rule", c.deleteRule)
}

// NeedsRecreate delegates to items.NeedsRecreate (never, for rules).
func (c *ruleConfigurator) NeedsRecreate(oldItem, newItem dg.Item) bool {
	return items.NeedsRecreate(oldItem, newItem)
}

// deleteRule deletes r. The kernel deletes the first rule that has every
// selector the request names (rule_find): a request that names no iif also
// matches our rule of the same priority and table that has one. Such
// "shadows" listed before r are taken out first and put back after, in
// their order; they look up the same table at the same priority as r, so
// their order among themselves does not change routing.
func (c *ruleConfigurator) deleteRule(r *items.Rule) error {
	list, err := c.list(r.Family)
	if err != nil {
		return err
	}
	at, foreign := findRule(list, r)
	switch {
	case at < 0 && foreign:
		return errRuleNotOwned
	case at < 0:
		return nil
	}
	shadows, err := shadowsOf(list[:at], r)
	if err != nil {
		return err
	}
	var reqs []*nlRequest
	for _, s := range shadows {
		reqs = append(reqs, ruleRequest(unix.RTM_DELRULE, 0, s))
	}
	reqs = append(reqs, ruleRequest(unix.RTM_DELRULE, 0, r))
	for _, s := range shadows {
		reqs = append(reqs, ruleRequest(unix.RTM_NEWRULE, unix.NLM_F_CREATE, s))
	}
	return c.send(reqs...)
}

// shadowsOf returns our rules in before that a delete of r would match.
func shadowsOf(before []netlink.Rule, r *items.Rule) ([]*items.Rule, error) {
	var shadows []*items.Rule
	for i := range before {
		k := &before[i]
		if k.Protocol != items.RouteProtocol || !deleteMatches(r, k) {
			continue
		}
		s, ok := ruleFromKernel(k, nil)
		if !ok {
			return nil, fmt.Errorf("rule %v of ours with selectors netagent does not manage precedes it and would be deleted instead", k)
		}
		shadows = append(shadows, s)
	}
	return shadows, nil
}

// deleteMatches reports whether the kernel's rule_find would take k for a
// delete request built from r: every selector r sets must match, those it
// leaves unset match anything.
func deleteMatches(r *items.Rule, k *netlink.Rule) bool {
	got, ok := ruleFromKernel(k, nil)
	if !ok {
		got = &items.Rule{Family: familyOfAF(k.Family), Priority: uint32(k.Priority), Table: uint32(k.Table),
			From: rulePrefix(k.Src, familyOfAF(k.Family)), To: rulePrefix(k.Dst, familyOfAF(k.Family)),
			Mark: k.Mark, IifName: k.IifName, OifName: k.OifName}
		if k.Mask != nil {
			got.Mask = *k.Mask
		}
	}
	return got.Family == r.Family && got.Priority == r.Priority && got.Table == r.Table &&
		(!r.From.IsValid() || got.From == r.From) && (!r.To.IsValid() || got.To == r.To) &&
		(r.Mark == 0 || got.Mark == r.Mark) && (r.EffectiveMask() == 0 || got.EffectiveMask() == r.EffectiveMask()) &&
		(r.IifName == "" || got.IifName == r.IifName) && (r.OifName == "" || got.OifName == r.OifName)
}

// findRule returns the index of our rule that is exactly r (or -1) and
// whether a rule of another protocol is exactly r.
func findRule(list []netlink.Rule, r *items.Rule) (owned int, foreign bool) {
	owned = -1
	for i := range list {
		got, ok := ruleFromKernel(&list[i], r)
		if !ok || !got.Equal(r) {
			continue
		}
		if list[i].Protocol != items.RouteProtocol {
			foreign = true
		} else if owned < 0 {
			owned = i
		}
	}
	return owned, foreign
}

// list dumps the rules of one family, in the kernel's order.
func (c *ruleConfigurator) list(f items.Family) ([]netlink.Rule, error) {
	var list []netlink.Rule
	err := retryDump("rules", func() error {
		var err error
		list, err = c.nlh.RuleList(int(afOf(f)))
		return err
	})
	return list, err
}

// send runs the requests in order over a conn and returns the first error.
func (c *ruleConfigurator) send(reqs ...*nlRequest) error {
	conn, err := c.open()
	if err != nil {
		return err
	}
	defer conn.close()
	for _, r := range conn.exchange(reqs) {
		if r.err != nil {
			return r.err
		}
	}
	return nil
}
