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

// ruleNL is the part of netlink.Handle the plan helpers used for rules;
// rules are now dumped raw over a conn (dumpRuleMsgs), decoded with the
// writer's codec. Rule changes go over a conn too: the library's RuleAdd
// always sets NLM_F_EXCL, and the kernel's existence check for it treats
// an unset source or destination as a wildcard, so "from all" would clash
// with "from 10.0.0.0/8" of the same priority and table.
type ruleNL interface {
	RuleList(family int) ([]netlink.Rule, error)
}

var _ ruleNL = (*netlink.Handle)(nil)

// ruleConfigurator manages items.Rule. A rule cannot change in place, and
// its item name holds every selector and the action, so Modify never
// reaches the kernel.
type ruleConfigurator struct {
	open opener
	// adopt takes over a rule of another protocol that is exactly the
	// item instead of refusing it (ErrNotOwned); see adoptRule.
	adopt bool
}

var _ reconciler.Configurator = (*ruleConfigurator)(nil)

// errRuleNotOwned: a rule of another protocol has every selector of the item.
var errRuleNotOwned = fmt.Errorf("%w: a rule of another protocol has the same selectors", ErrNotOwned)

// Create adds the rule unless netagent's is already there; a rule of
// another protocol with the same selectors is ErrNotOwned, or, with
// adopt, taken over (adoptRule).
func (c *ruleConfigurator) Create(_ context.Context, item dg.Item) error {
	r, err := items.As[*items.Rule](item)
	if err != nil {
		return err
	}
	return wrapIf(c.with(func(conn rawOps) error {
		list, err := dumpRuleMsgs(conn, int(afOf(r.Family)))
		if err != nil {
			return err
		}
		owned, foreign := findRule(list, r)
		switch {
		case owned >= 0:
			return nil
		case foreign && c.adopt:
			return adoptRule(conn, list, r)
		case foreign:
			return errRuleNotOwned
		}
		return send(conn, ruleRequest(unix.RTM_NEWRULE, unix.NLM_F_CREATE, r))
	}), "adding rule %s", r.Name())
}

// adoptRule takes over someone else's rule that is exactly r (list is
// the kernel's rules of r's family). The kernel has no replace for rules,
// so netagent's copy is added first, then theirs deleted: the kernel puts
// a new rule after the rules of its priority, so theirs, which does the
// same, matches first until it goes, and no packet finds neither. Their
// delete names every attribute of theirs, its protocol included; an
// earlier rule that this delete would take instead (rule_find takes the
// first match) stops the adoption before anything is written.
func adoptRule(conn rawOps, list []ruleMsg, r *items.Rule) error {
	at := theirRule(list, r)
	theirs := list[at]
	if err := shadowedAt(list, at); err != nil {
		return err
	}
	if err := send(conn, ruleRequest(unix.RTM_NEWRULE, unix.NLM_F_CREATE, r)); err != nil {
		return err
	}
	if err := send(conn, theirs.request(unix.RTM_DELRULE, 0)); err != nil {
		return fmt.Errorf("deleting the adopted rule of protocol %d after adding netagent's: %w", theirs.Proto, err)
	}
	return nil
}

// shadowedAt is the error adopting list[at] fails with when the delete of
// that rule would take an earlier rule first, or nil.
func shadowedAt(list []ruleMsg, at int) error {
	for i := range list[:at] {
		if deleteMatches(&list[at], &list[i]) {
			return fmt.Errorf("%w: the delete of the rule of protocol %d would take an earlier rule first", ErrNotOwned, list[at].Proto)
		}
	}
	return nil
}

// theirRule is the index of the first rule of another protocol that
// is exactly r, or -1.
func theirRule(list []ruleMsg, r *items.Rule) int {
	for i := range list {
		if got, ok := decodeRule(list[i], r); ok && got.Equal(r) && list[i].Proto != items.RouteProtocol {
			return i
		}
	}
	return -1
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
	return onItem[*items.Rule](item, "deleting rule", func(r *items.Rule) error {
		return c.with(func(conn rawOps) error { return deleteRule(conn, r) })
	})
}

// NeedsRecreate delegates to items.NeedsRecreate (never, for rules).
func (c *ruleConfigurator) NeedsRecreate(oldItem, newItem dg.Item) bool {
	return items.NeedsRecreate(oldItem, newItem)
}

// deleteRule deletes r. The kernel deletes the first rule that has every
// selector the request names (rule_find): a request that names no iif also
// matches our rule of the same priority and action that has one, and the
// "not" flag is not compared at all. Such "shadows" listed before r are
// taken out first and put back after, in their order; they do what r does
// at the same priority, so their order among themselves does not change
// routing.
func deleteRule(conn rawOps, r *items.Rule) error {
	list, err := dumpRuleMsgs(conn, int(afOf(r.Family)))
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
	return send(conn, reqs...)
}

// shadowsOf returns our rules in before that a delete of r would match.
func shadowsOf(before []ruleMsg, r *items.Rule) ([]*items.Rule, error) {
	want := encodeRule(r)
	var shadows []*items.Rule
	for i := range before {
		k := &before[i]
		if k.Proto != items.RouteProtocol || !deleteMatches(&want, k) {
			continue
		}
		s, ok := decodeRule(*k, nil)
		if !ok {
			return nil, fmt.Errorf("rule %+v of ours with selectors netagent does not manage precedes it and would be deleted instead", *k)
		}
		shadows = append(shadows, s)
	}
	return shadows, nil
}

// findRule returns the index of our rule that is exactly r (or -1) and
// whether a rule of another protocol is exactly r.
func findRule(list []ruleMsg, r *items.Rule) (owned int, foreign bool) {
	owned = -1
	for i := range list {
		got, ok := decodeRule(list[i], r)
		if !ok || !got.Equal(r) {
			continue
		}
		if list[i].Proto != items.RouteProtocol {
			foreign = true
		} else if owned < 0 {
			owned = i
		}
	}
	return owned, foreign
}

// with runs f over a conn.
func (c *ruleConfigurator) with(f func(rawOps) error) error {
	conn, err := c.open()
	if err != nil {
		return err
	}
	defer conn.close()
	return f(conn)
}

// send runs the requests in order over conn and returns the first error.
func send(conn rawOps, reqs ...*nlRequest) error {
	for _, r := range conn.exchange(reqs) {
		if r.err != nil {
			return r.err
		}
	}
	return nil
}
