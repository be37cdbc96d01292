package nftables

import (
	"strings"
	"testing"

	"github.com/netagent/netagent/internal/disrupt"
	"github.com/netagent/netagent/items"
	"github.com/netagent/netagent/reconciler"
)

// edge is an intended table with an input chain at priority 0 and a
// postrouting nat chain.
var edge = &items.NftTable{Family: "inet", Table: "netagent", Chains: []items.NftChain{
	{Name: "input", Type: "filter", Hook: "input", Priority: &items.NftPriority{Name: "filter"}, Policy: "drop"},
	{Name: "post", Type: "nat", Hook: "postrouting", Priority: &items.NftPriority{Name: "srcnat"}},
	{Name: "helper"},
}}

func chain(family, table, name, hook string, priority int, policyDrop bool, rules ...bool) readerChain {
	return readerChain{BaseChain: BaseChain{Family: family, Table: table, Chain: name, Type: "filter", Hook: hook, Priority: priority, PolicyDrop: policyDrop}, rules: rules}
}

// Plan warns of every other owner's base chain on a hook of netagent's
// in a family that sees the same packets (inet with ip and ip6) that has
// policy drop or drop rules, naming it, its priority and whether it runs
// before or after netagent's; not of chains that only accept, of other
// hooks or families, of netagent's own tables, nor of the intended
// table's own name (a clash).
func TestCrossTableWarnings(t *testing.T) {
	r := &fakeReader{tables: []TableInfo{
		{Family: "ip", Name: "filter"}, {Family: "inet", Name: "fw"}, {Family: "ip6", Name: "f6"},
		{Family: "bridge", Name: "br"}, {Family: "inet", Name: "mine", Marked: true}, {Family: "inet", Name: "netagent"},
		{Family: "ip", Name: "nat"},
	}, chains: []readerChain{
		chain("ip", "filter", "INPUT", "input", 0, true),
		chain("inet", "fw", "in", "input", -10, false, false, true, true),
		chain("inet", "fw", "in-ok", "input", 10, false, false, false),
		chain("ip6", "f6", "fwd", "forward", 0, true),
		chain("bridge", "br", "in", "input", -200, true),
		chain("inet", "mine", "in", "input", 0, true),
		chain("inet", "netagent", "in", "input", 0, true),
		chain("ip", "nat", "POSTROUTING", "postrouting", 200, false, true),
	}}
	got, err := warnings(r, []*items.NftTable{edge}, MaxInspectedRules)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"base chain ip/filter INPUT (type filter, hook input, priority 0) has policy drop; it runs at the same priority as netagent's (their order is not defined) chain inet/netagent input (priority 0)",
		"base chain inet/fw in (type filter, hook input, priority -10) drops or rejects in 2 of its 3 rules; it runs before netagent's chain inet/netagent input (priority 0)",
		"base chain ip/nat POSTROUTING (type filter, hook postrouting, priority 200) drops or rejects in 1 of its 1 rules; it runs after netagent's chain inet/netagent post (priority 100)",
	}
	if len(got) != len(want) {
		t.Fatalf("warnings: %d, want %d:\n%v", len(got), len(want), got)
	}
	for i, w := range want {
		if !strings.Contains(got[i].Text, w) || !strings.Contains(got[i].Text, "KEP-3866") || got[i].Ref.Name != "inet/netagent" {
			t.Errorf("warning %d:\n got  %s (%v)\n want %s", i, got[i].Text, got[i].Ref, w)
		}
	}
}

// The rules inspected are capped in all: a chain cut short says how many
// of its rules were inspected, the chains past the cap are named in one
// warning, not read.
func TestCrossTableWarningsCapped(t *testing.T) {
	r := &fakeReader{tables: []TableInfo{{Family: "ip", Name: "a"}, {Family: "ip", Name: "b"}, {Family: "ip", Name: "c"}},
		chains: []readerChain{
			chain("ip", "a", "in", "input", 0, false, false, false, true, true),
			chain("ip", "b", "in", "input", 0, false, true),
			chain("ip", "c", "in", "input", 0, false, true),
		}}
	got, err := warnings(r, []*items.NftTable{edge}, 3)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || !strings.Contains(got[0].Text, "ip/a in") || !strings.Contains(got[0].Text, "drops or rejects in 1 of the first 3 of its 4 rules") ||
		!strings.Contains(got[1].Text, "2 base chains of other owners on netagent's hooks were not inspected") || !strings.Contains(got[1].Text, "cap of 3 rules") {
		t.Errorf("capped warnings: %v", got)
	}
}

// Families and hooks: inet sees ip's and ip6's packets, ip does not see
// ip6's, bridge and netdev only their own; ingress chains of other devices
// see other packets.
func TestSameHook(t *testing.T) {
	bc := func(family, hook, dev string) BaseChain { return BaseChain{Family: family, Hook: hook, Device: dev} }
	for _, c := range []struct {
		a, b BaseChain
		want bool
	}{
		{bc("inet", "input", ""), bc("ip", "input", ""), true},
		{bc("ip6", "input", ""), bc("inet", "input", ""), true},
		{bc("ip", "input", ""), bc("ip6", "input", ""), false},
		{bc("inet", "input", ""), bc("inet", "forward", ""), false},
		{bc("inet", "input", ""), bc("bridge", "input", ""), false},
		{bc("netdev", "ingress", "eth0"), bc("netdev", "ingress", "eth0"), true},
		{bc("netdev", "ingress", "eth0"), bc("netdev", "ingress", "eth1"), false},
	} {
		if got := seesSamePackets(c.a, c.b); got != c.want {
			t.Errorf("seesSamePackets(%+v, %+v) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
}

// A modify that changes a base chain's hook, priority or type says that
// it recreates the chain; one that changes only rules or the policy says
// nothing of a recreate.
func TestPredictChainRecreate(t *testing.T) {
	moved := *edge
	moved.Chains = []items.NftChain{
		{Name: "input", Type: "filter", Hook: "input", Priority: prio(-10), Policy: "drop"},
		{Name: "post", Type: "nat", Hook: "prerouting", Priority: prio(100)},
		{Name: "helper"},
	}
	p := Predict(reconciler.OpModify, edge, &moved)
	for _, want := range []string{"recreate chain input (hook/priority/type cannot change in place: priority 0 → -10)",
		"recreate chain post (hook/priority/type cannot change in place: hook postrouting → prerouting)"} {
		if !strings.Contains(p.Why, want) {
			t.Errorf("prediction %q lacks %q", p.Why, want)
		}
	}
	if p.Effect != disrupt.Atomic {
		t.Errorf("effect %v, want atomic", p.Effect)
	}
	rules := *edge
	rules.Chains = []items.NftChain{
		{Name: "input", Type: "filter", Hook: "input", Priority: prio(0), Policy: "accept", Rules: []items.NftRule{{Verdict: "accept"}}},
		edge.Chains[1], edge.Chains[2],
	}
	if p := Predict(reconciler.OpModify, edge, &rules); strings.Contains(p.Why, "recreate") {
		t.Errorf("a change of rules and policy predicted as %q", p.Why)
	}
}
