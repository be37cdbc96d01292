package netns_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/netagent/netagent/configurators/l3"
	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/items"
)

// l3Rules returns `ip -j rule show` of both families.
func (e *l3Env) l3Rules() []map[string]any {
	return append(e.ipJSON("-4", "rule", "show"), e.ipJSON("-6", "rule", "show")...)
}

func (e *l3Env) mustRule(kv ...string) {
	e.t.Helper()
	if got := l3Find(e.l3Rules(), kv...); len(got) != 1 {
		e.t.Errorf("ip rule: %d rules with %v, want 1", len(got), kv)
	}
}

func l3RuleSamples() []*items.Rule {
	v4, v6 := items.FamilyIPv4, items.FamilyIPv6
	return []*items.Rule{
		{Priority: 100, Family: v4, From: l3Prefix("10.0.0.0/8"), Table: 100},
		{Priority: 101, Family: v4, To: l3Prefix("192.0.2.0/24"), Table: 101},
		{Priority: 102, Family: v4, Mark: 0x1, Table: 102},
		{Priority: 103, Family: v4, Mark: 0x10, Mask: 0xf0, IifName: "up0", Table: 103},
		{Priority: 104, Family: v4, From: l3Prefix("10.1.0.0/16"), To: l3Prefix("10.2.0.0/16"), OifName: "up0", Table: 1000},
		{Priority: 200, Family: v6, From: l3Prefix("2001:db8::/32"), IifName: "peer0", Table: 100},
		{Priority: 201, Family: v6, Mark: 7, Table: items.TableMain,
			Deps: []dg.ItemRef{items.InterfaceRef("up0")}},
	}
}

var l3RuleSampleFields = [][]string{
	{"priority", "100", "src", "10.0.0.0", "srclen", "8", "table", "100", "protocol", "211"},
	{"priority", "101", "src", "all", "dst", "192.0.2.0", "dstlen", "24", "table", "101", "protocol", "211"},
	{"priority", "102", "fwmark", "0x1", "table", "102", "protocol", "211"},
	{"priority", "103", "fwmark", "0x10", "fwmask", "0xf0", "iif", "up0", "table", "103", "protocol", "211"},
	{"priority", "104", "src", "10.1.0.0", "srclen", "16", "dst", "10.2.0.0", "dstlen", "16", "oif", "up0", "table", "1000", "protocol", "211"},
	{"priority", "200", "src", "2001:db8::", "srclen", "32", "iif", "peer0", "table", "100", "protocol", "211"},
	{"priority", "201", "fwmark", "0x7", "table", "main", "protocol", "211"},
}

func TestL3RuleCreateModifyDelete(t *testing.T) {
	e := l3NewEnv(t)
	rules := l3RuleSamples()
	for _, r := range rules {
		e.create(r)
	}
	for _, f := range l3RuleSampleFields {
		e.mustRule(f...)
	}
	e.mustReadBack(l3Items(rules)...)

	for _, r := range rules {
		e.create(r) // twice
	}
	for _, f := range l3RuleSampleFields {
		e.mustRule(f...)
	}

	// Two rules of one name differ only in Deps: Modify has nothing to do
	// in the kernel. Anything else would be another name.
	moved := *rules[6]
	moved.Deps = nil
	e.modify(rules[6], &moved)
	rules[6] = &moved
	e.mustRule(l3RuleSampleFields[6]...)
	e.mustReadBack(l3Items(rules)...)
	other := *rules[0]
	other.Table = 999
	if err := e.cfg(&other).Modify(e.ctx, rules[0], &other); !errors.Is(err, l3.ErrNeedsRecreate) {
		t.Errorf("Modify of a selector: got %v, want ErrNeedsRecreate", err)
	}

	for _, r := range rules {
		e.delete(r)
		e.delete(r) // twice
	}
	if got := l3Find(e.l3Rules(), "protocol", "211"); len(got) != 0 {
		t.Errorf("rules of protocol 211 left: %v", got)
	}
	e.mustReadBackNone(items.TypeRule)
}

// The kernel matches a delete (and an exclusive add) on the selectors the
// request names: a rule without iif matches one with it. Neither may hit
// the wrong rule.
func TestL3RuleWildcardNeighbours(t *testing.T) {
	e := l3NewEnv(t)
	v4 := items.FamilyIPv4
	withIif := &items.Rule{Priority: 300, Family: v4, From: l3Prefix("10.0.0.0/8"), IifName: "up0", Table: 100}
	plain := &items.Rule{Priority: 300, Family: v4, From: l3Prefix("10.0.0.0/8"), Table: 100}
	all := &items.Rule{Priority: 300, Family: v4, Table: 100}
	for _, r := range []*items.Rule{withIif, plain, all} {
		e.create(r)
	}
	e.mustReadBack(withIif, plain, all)

	e.delete(plain)
	e.mustReadBack(withIif, all)
	e.mustRule("priority", "300", "src", "10.0.0.0", "iif", "up0", "protocol", "211")
	e.delete(all)
	e.mustReadBack(withIif)
	e.delete(withIif)
	e.mustReadBackNone(items.TypeRule)
}

func TestL3RuleForeignUntouched(t *testing.T) {
	e := l3NewEnv(t)
	e.ip("rule", "add", "prio", "100", "from", "10.0.0.0/8", "iif", "up0", "lookup", "100")
	e.ip("rule", "add", "prio", "150", "fwmark", "0x2", "lookup", "150", "proto", "static")
	e.ip("-6", "rule", "add", "prio", "100", "to", "2001:db8::/32", "lookup", "100")
	before := fmt.Sprint(e.l3Rules())

	v4, v6 := items.FamilyIPv4, items.FamilyIPv6
	clashes := []*items.Rule{
		{Priority: 100, Family: v4, From: l3Prefix("10.0.0.0/8"), IifName: "up0", Table: 100},
		{Priority: 150, Family: v4, Mark: 2, Table: 150},
		{Priority: 100, Family: v6, To: l3Prefix("2001:db8::/32"), Table: 100},
		{Priority: 0, Family: v4, Table: items.TableLocal},
		{Priority: 32766, Family: v4, Table: items.TableMain},
	}
	for _, r := range clashes {
		l3MustNotOwn(t, "create "+r.Name(), e.cfg(r).Create(e.ctx, r))
		l3MustNotOwn(t, "delete "+r.Name(), e.cfg(r).Delete(e.ctx, r))
	}
	// Ours beside them; the first is a wildcard match of the foreign
	// rule listed before it, which a delete of ours must not take.
	ours := []*items.Rule{
		{Priority: 100, Family: v4, From: l3Prefix("10.0.0.0/8"), Table: 100},
		{Priority: 150, Family: v4, Mark: 2, Mask: 0xff, Table: 150},
		{Priority: 100, Family: v6, Table: 100},
	}
	for _, r := range ours {
		e.create(r)
	}
	e.mustReadBack(l3Items(ours)...)
	for _, r := range ours {
		e.delete(r)
	}
	e.mustReadBackNone(items.TypeRule)
	if after := fmt.Sprint(e.l3Rules()); after != before {
		t.Errorf("foreign rules changed:\nbefore %s\nafter  %s", before, after)
	}
}
