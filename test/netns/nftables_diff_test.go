//go:build !vmtest

package netns_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/netagent/netagent/configurators/nftables"
	"github.com/netagent/netagent/items"
)

// nftRule is a rule of `nft -j list table`: its chain, handle, its
// expressions with the counter's figures blanked, and its packets.
type nftRule struct {
	chain   string
	handle  int
	expr    string
	packets int
}

var nftNoHandle = regexp.MustCompile(`,\s*"handle":\s*\d+`)

var counterFigures = regexp.MustCompile(`"counter":\{"bytes":\d+,"packets":\d+\}`)

// nftRules returns the rules of table inet netagent as nft lists them.
func nftRules(e *cliEnv) []nftRule {
	e.t.Helper()
	var out []nftRule
	for _, o := range nftJSON(e, "table", "inet", "netagent") {
		raw, ok := o["rule"]
		if !ok {
			continue
		}
		var r struct {
			Chain  string
			Handle int
			Expr   []map[string]json.RawMessage
		}
		if err := json.Unmarshal(raw, &r); err != nil {
			e.t.Fatal(err)
		}
		nr := nftRule{chain: r.Chain, handle: r.Handle}
		for _, x := range r.Expr {
			if c, ok := x["counter"]; ok {
				var v struct{ Packets int }
				json.Unmarshal(c, &v)
				nr.packets = v.Packets
			}
		}
		b, _ := json.Marshal(r.Expr)
		nr.expr = counterFigures.ReplaceAllString(string(b), `"counter":{}`)
		out = append(out, nr)
	}
	return out
}

// nftCountersIntent is a table whose input chain counts ICMP on lo; the
// second version changes the ssh rule's port, inserts a rule before it,
// drops the udp one, turns the policy to drop (in place) and adds a set
// element.
func nftCountersIntent(second bool) string {
	rules := `{"iifname": "lo", "protocol": "icmp", "counter": true, "verdict": "accept"},
        {"protocol": "tcp", "dport": "22", "counter": true, "verdict": "accept"},
        {"protocol": "udp", "dport": "53", "verdict": "accept"},
        {"saddr": "@mgmt", "counter": true, "verdict": "accept"}`
	policy, elems := "accept", `"192.0.2.0/24"`
	if second {
		rules = `{"iifname": "lo", "protocol": "icmp", "counter": true, "verdict": "accept"},
        {"protocol": "tcp", "dport": "80", "verdict": "accept"},
        {"protocol": "tcp", "dport": "2222", "counter": true, "verdict": "accept"},
        {"saddr": "@mgmt", "counter": true, "verdict": "accept"}`
		policy, elems = "drop", `"192.0.2.0/24", "198.51.100.7"`
	}
	return fmt.Sprintf(`{"version": 1, "interfaces": [{"name": "uplink0", "type": "physical"}],
  "nftables": {"tables": [{"family": "inet", "name": "netagent",
    "sets": [{"name": "mgmt", "type": "ipv4_addr", "interval": true, "elements": [%s]}],
    "chains": [{"name": "input", "type": "filter", "hook": "input", "priority": 0, "policy": %q, "rules": [
        %s]}]}]}}`, elems, policy, rules)
}

// A modify of some rules of a table leaves the others in the kernel as
// they were: the ICMP rule keeps its handle and its counter (which ping
// over lo moved before the modify and moves on after it), the set rule
// its handle; the changed and inserted rules are new, in their places;
// the policy changed in place. nft is the oracle.
func TestNftablesModifyKeepsCounters(t *testing.T) {
	e := cliNewEnv(t)
	e.ip("link", "set", "lo", "up")
	e.mustRun(0, "apply", e.writeFile("a.json", nftCountersIntent(false)))
	e.exec("ping", "-c", "3", "-i", "0.2", "-q", "127.0.0.1")
	before := nftRules(e)
	if len(before) != 4 || before[0].packets == 0 {
		t.Fatalf("before the modify, want 4 rules and ICMP counted: %+v", before)
	}

	e.mustRun(0, "apply", e.writeFile("b.json", nftCountersIntent(true)))
	after := nftRules(e)
	if len(after) != 4 {
		t.Fatalf("after the modify, want 4 rules: %+v", after)
	}
	icmp, set := after[0], after[3]
	if icmp.handle != before[0].handle || icmp.expr != before[0].expr || icmp.packets < before[0].packets {
		t.Errorf("the ICMP rule changed: before %+v, after %+v", before[0], icmp)
	}
	if set.handle != before[3].handle || set.expr != before[3].expr {
		t.Errorf("the set rule changed: before %+v, after %+v", before[3], set)
	}
	for i, port := range map[int]string{1: `"right":80`, 2: `"right":2222`} {
		if !strings.Contains(after[i].expr, port) || slices.ContainsFunc(before, func(r nftRule) bool { return r.handle == after[i].handle }) {
			t.Errorf("rule %d: want a new rule matching %s, got %+v", i, port, after[i])
		}
	}
	chain := e.exec("nft", "list", "chain", "inet", "netagent", "input")
	if !strings.Contains(chain, "policy drop") {
		t.Errorf("policy not changed:\n%s", chain)
	}
	if set := e.exec("nft", "list", "set", "inet", "netagent", "mgmt"); !strings.Contains(set, "198.51.100.7") || !strings.Contains(set, "192.0.2.0/24") {
		t.Errorf("set element not added:\n%s", set)
	}
	e.exec("ping", "-c", "2", "-i", "0.2", "-q", "127.0.0.1")
	if later := nftRules(e)[0]; later.handle != icmp.handle || later.packets <= icmp.packets {
		t.Errorf("the kept ICMP rule no longer counts: %+v after %+v", later, icmp)
	}
	if res := e.mustRun(0, "apply", e.writeFile("b2.json", nftCountersIntent(true))); !strings.Contains(res.stdout, "converged: 0 operations") {
		t.Errorf("a second apply wrote: %s", res)
	}
}

// interposed is a kernel with another writer (nft) running between the
// configurator's dump and its batch.
type interposed struct {
	nftables.Kernel
	before func()
}

func (k interposed) ApplyBatch(gen uint32, ops []nftables.Op) error {
	if k.before != nil {
		k.before()
	}
	return k.Kernel.ApplyBatch(gen, ops)
}

// A batch computed from a dump fails with ErrGenerationChanged when
// another writer (nft) commits between the dump and the batch, and
// nothing of it is applied; without the writer, the same call succeeds.
func TestNftablesGeneration(t *testing.T) {
	e := cliNewEnv(t)
	k := nftables.NetlinkKernel(e.tgt, 0)
	n := 0
	racer := nftables.NewConfigurator(interposed{k, func() { n++; e.exec("nft", fmt.Sprintf("add table ip intruder%d", n)) }})
	plain := nftables.NewConfigurator(k)
	tbl := &items.NftTable{Family: "inet", Table: "netagent", Chains: []items.NftChain{{Name: "input", Type: "filter", Hook: "input",
		Priority: &items.NftPriority{}, Rules: []items.NftRule{{Protocol: "tcp", Dport: "22", Verdict: "accept"}}}}}
	ctx := context.Background()
	if err := racer.Create(ctx, tbl); !errors.Is(err, nftables.ErrGenerationChanged) {
		t.Fatalf("create with a writer in between: %v, want ErrGenerationChanged", err)
	}
	if out := e.exec("nft", "list", "tables"); strings.Contains(out, "netagent") || !strings.Contains(out, "intruder1") {
		t.Fatalf("after the refused create: %s", out)
	}
	if err := plain.Create(ctx, tbl); err != nil {
		t.Fatal(err)
	}
	before := e.exec("nft", "-j", "list", "table", "inet", "netagent")
	next := *tbl
	next.Chains = []items.NftChain{tbl.Chains[0]}
	next.Chains[0].Policy = "drop"
	next.Chains[0].Rules = append(slices.Clone(tbl.Chains[0].Rules), items.NftRule{Protocol: "udp", Dport: "53", Verdict: "accept"})
	if err := racer.Modify(ctx, tbl, &next); !errors.Is(err, nftables.ErrGenerationChanged) {
		t.Fatalf("modify with a writer in between: %v, want ErrGenerationChanged", err)
	}
	if after := e.exec("nft", "-j", "list", "table", "inet", "netagent"); after != before {
		t.Fatalf("the refused modify changed the table:\n before %s\n after  %s", before, after)
	}
	if err := plain.Modify(ctx, tbl, &next); err != nil {
		t.Fatal(err)
	}
	if out := e.exec("nft", "list", "table", "inet", "netagent"); !strings.Contains(out, "udp dport 53 accept") || !strings.Contains(out, "policy drop") {
		t.Errorf("the retried modify did not apply:\n%s", out)
	}
}

// bigSet returns n addresses of 10.0.0.0/8, none adjacent (so nft lists
// each as it is).
func bigSet(n int) []string {
	out := make([]string, n)
	for i := range out {
		v := 2 * i
		out[i] = fmt.Sprintf("10.%d.%d.%d", v>>16&255, v>>8&255, v&255)
	}
	return out
}

// nftSetElements returns the elements of set inet netagent NAME as nft
// lists them, single addresses only.
func nftSetElements(e *cliEnv, name string) []string {
	e.t.Helper()
	for _, o := range nftJSON(e, "set", "inet", "netagent", name) {
		if raw, ok := o["set"]; ok {
			var s struct{ Elem []string }
			if err := json.Unmarshal(raw, &s); err != nil {
				e.t.Fatalf("set %s: %v", name, err)
			}
			return s.Elem
		}
	}
	e.t.Fatalf("no set %s", name)
	return nil
}

// An interval set of 100k elements (a batch of about 4 MiB, beyond the
// default socket buffers) is applied and read back exactly by nft; a
// second apply writes nothing; one element swapped is applied as such.
func TestNftablesBigSet(t *testing.T) {
	e := cliNewEnv(t)
	elems := bigSet(100_000)
	intent := func(elems []string) string {
		b, _ := json.Marshal(elems)
		return fmt.Sprintf(`{"version": 1, "interfaces": [{"name": "uplink0", "type": "physical"}],
  "nftables": {"tables": [{"family": "inet", "name": "netagent",
    "sets": [{"name": "big", "type": "ipv4_addr", "interval": true, "elements": %s}],
    "chains": [{"name": "input", "type": "filter", "hook": "input", "priority": 0, "rules": [{"saddr": "@big", "verdict": "drop"}]}]}]}}`, b)
	}
	start := time.Now()
	e.mustRun(0, "apply", e.writeFile("big.json", intent(elems)))
	t.Logf("apply of 100k elements: %v", time.Since(start))
	start = time.Now()
	defer func() { t.Logf("the rest: %v", time.Since(start)) }()
	if got := nftSetElements(e, "big"); !slices.Equal(got, elems) {
		t.Fatalf("nft lists %d elements, want the %d applied (first %q)", len(got), len(elems), got[:min(3, len(got))])
	}
	if res := e.mustRun(0, "apply", e.writeFile("big2.json", intent(elems))); !strings.Contains(res.stdout, "converged: 0 operations") {
		t.Errorf("a second apply wrote: %s", res.stdout)
	}
	swapped := append(slices.Clone(elems[1:]), "11.0.0.1")
	e.mustRun(0, "apply", e.writeFile("big3.json", intent(swapped)))
	if got := nftSetElements(e, "big"); !slices.Equal(got, swapped) {
		t.Fatalf("after swapping one element nft lists %d elements, want %d", len(got), len(swapped))
	}
}

// With a small batch limit, the elements of a set of 100k go into
// follow-up batches (each of the next generation), after a first batch
// of 10k rules (about 2 MiB, which cannot be split); nft reads back every
// rule and element.
func TestNftablesSplitBatch(t *testing.T) {
	e := cliNewEnv(t)
	tbl := &items.NftTable{Family: "inet", Table: "netagent",
		Sets: []items.NftSet{{Name: "big", Type: "ipv4_addr", Elements: bigSet(100_000)}}}
	for c := range 100 {
		ch := items.NftChain{Name: fmt.Sprintf("c%d", c)}
		for r := range 100 {
			ch.Rules = append(ch.Rules, items.NftRule{Protocol: "tcp", Dport: fmt.Sprint(1000 + 100*c + r), Counter: true, Verdict: "accept"})
		}
		tbl.Chains = append(tbl.Chains, ch)
	}
	tbl.Chains[0].Rules[0] = items.NftRule{Saddr: "@big", Verdict: "drop"}
	c := nftables.NewConfigurator(nftables.NetlinkKernel(e.tgt, 256<<10))
	if err := c.Create(context.Background(), tbl); err != nil {
		t.Fatal(err)
	}
	// A hash set: nft lists it in hash order; and while the kernel
	// grows its hash table after the inserts, a dump may list some
	// elements twice and miss others (the walk restarts): read until a
	// listing has every element once.
	want := slices.Sorted(slices.Values(tbl.Sets[0].Elements))
	var got []string
	for try := 0; try < 50 && !slices.Equal(got, want); try++ {
		time.Sleep(time.Duration(try) * 20 * time.Millisecond)
		got = slices.Sorted(slices.Values(nftSetElements(e, "big")))
	}
	if !slices.Equal(got, want) {
		t.Fatalf("nft lists %d elements (%d distinct), want the %d created", len(got), len(slices.Compact(got)), len(want))
	}
	rules := nftRules(e)
	if len(rules) != 10_000 || rules[9_999].chain != "c99" || !strings.Contains(rules[9_999].expr, `"right":10999`) {
		t.Fatalf("nft lists %d rules, want 10000 ending with c99's dport 10999: %+v", len(rules), rules[len(rules)-1])
	}
	back, err := nftables.ReadBack(e.tgt)
	if err != nil || len(back) != 1 || !back[0].Equal(tbl) {
		t.Fatalf("read-back: %v %v, want the table", len(back), err)
	}
}

// A batch the kernel refuses midway (its last op jumps to a chain that
// is not there) fails naming that op and its errno, and leaves the table
// byte for byte; so does a create of a table that exists (NLM_F_EXCL).
func TestNftablesAtomicFailure(t *testing.T) {
	e := cliNewEnv(t)
	k := nftables.NetlinkKernel(e.tgt, 0)
	c := nftables.NewConfigurator(k)
	ctx := context.Background()
	tbl := &items.NftTable{Family: "inet", Table: "netagent", Chains: []items.NftChain{{Name: "input", Type: "filter", Hook: "input",
		Priority: &items.NftPriority{}, Rules: []items.NftRule{{Protocol: "tcp", Dport: "22", Verdict: "accept"}}}}}
	if err := c.Create(ctx, tbl); err != nil {
		t.Fatal(err)
	}
	before := e.exec("nft", "-j", "list", "ruleset")
	bad := *tbl
	bad.Chains = []items.NftChain{tbl.Chains[0]}
	bad.Chains[0].Policy = "drop"
	bad.Chains[0].Rules = append(slices.Clone(tbl.Chains[0].Rules), items.NftRule{Verdict: "jump", Target: "nowhere"})
	err := c.Modify(ctx, tbl, &bad)
	t.Logf("refused: %v", err)
	if !errors.Is(err, syscall.ENOENT) || !strings.Contains(err.Error(), "add rule inet/netagent chain input") {
		t.Errorf("modify with a jump to a missing chain: %v, want ENOENT naming the rule", err)
	}
	// The kernel goes on after a failed message and acks the last one.
	start := time.Now()
	err = k.ApplyBatch(0, []nftables.Op{{Kind: nftables.OpDeleteRule, Table: *tbl, Chain: tbl.Chains[0], Handle: 99999},
		{Kind: nftables.OpAddChain, Table: *tbl, Chain: bad.Chains[0]}})
	if !errors.Is(err, syscall.ENOENT) || !strings.Contains(err.Error(), "delete rule") || time.Since(start) > time.Second {
		t.Errorf("a batch failing at its first op: %v after %v, want ENOENT naming it at once", err, time.Since(start))
	}
	if err := k.ApplyBatch(0, []nftables.Op{{Kind: nftables.OpCreateTable, Table: *tbl}}); !errors.Is(err, syscall.EEXIST) {
		t.Errorf("a create of an existing table: %v, want EEXIST", err)
	}
	if after := e.exec("nft", "-j", "list", "ruleset"); after != before {
		t.Errorf("the refused batches changed the ruleset:\n before %s\n after  %s", before, after)
	}
}

// Modify reuses the read-back's dump only in the same generation: after
// another writer deletes one of netagent's rules between the read-back
// and the modify, the modify dumps again and puts the rule back with its
// own change; nft lists exactly the intended rules.
func TestNftablesDumpReuse(t *testing.T) {
	e := cliNewEnv(t)
	c := nftables.NewConfigurator(nftables.NetlinkKernel(e.tgt, 0))
	ctx := context.Background()
	tbl := &items.NftTable{Family: "inet", Table: "netagent", Chains: []items.NftChain{{Name: "input", Type: "filter", Hook: "input",
		Priority: &items.NftPriority{}, Rules: []items.NftRule{{Protocol: "tcp", Dport: "22", Verdict: "accept"}, {Protocol: "tcp", Dport: "80", Verdict: "accept"}}}}}
	if err := c.Create(ctx, tbl); err != nil {
		t.Fatal(err)
	}
	next := *tbl
	next.Chains = []items.NftChain{tbl.Chains[0]}
	next.Chains[0].Rules = append(slices.Clone(tbl.Chains[0].Rules), items.NftRule{Protocol: "udp", Dport: "53", Verdict: "accept"})
	for _, step := range []struct {
		from, to *items.NftTable
		meddle   bool
	}{{tbl, &next, false}, {&next, tbl, true}, {tbl, &next, true}} {
		if _, err := nftables.ReadBack(e.tgt); err != nil {
			t.Fatal(err)
		}
		if step.meddle {
			e.exec("nft", "delete", "rule", "inet", "netagent", "input", "handle", fmt.Sprint(nftRules(e)[0].handle))
		}
		if err := c.Modify(ctx, step.from, step.to); err != nil {
			t.Fatal(err)
		}
		var ports []string
		for _, r := range nftRules(e) {
			ports = append(ports, regexp.MustCompile(`"right":(\d+)`).FindStringSubmatch(r.expr)[1])
		}
		var want []string
		for _, r := range step.to.Chains[0].Rules {
			want = append(want, r.Dport)
		}
		if !slices.Equal(ports, want) {
			t.Errorf("after a modify (a writer in between: %v): nft lists ports %v, want %v", step.meddle, ports, want)
		}
	}
}

// What the kernel cannot change in place is deleted and added again in
// the one batch, in the kernel's order: a set turned interval (with the
// rule that looks it up), a base chain's priority, a regular chain
// dropped with the rule that jumps to it; the nat chain's rule keeps its
// handle. nft reads the result, netagent's read-back equals the intent.
func TestNftablesModifyRecreates(t *testing.T) {
	e := cliNewEnv(t)
	c := nftables.NewConfigurator(nftables.NetlinkKernel(e.tgt, 0))
	ctx := context.Background()
	mk := func(second bool) *items.NftTable {
		tbl := &items.NftTable{Family: "inet", Table: "netagent",
			Sets: []items.NftSet{{Name: "a", Type: "ipv4_addr", Interval: second, Elements: []string{"192.0.2.1"}}},
			Chains: []items.NftChain{
				{Name: "input", Type: "filter", Hook: "input", Priority: &items.NftPriority{}, Rules: []items.NftRule{
					{Saddr: "@a", Verdict: "drop"}, {IIfName: "lan0", Verdict: "jump", Target: "r"}}},
				{Name: "r", Rules: []items.NftRule{{Protocol: "tcp", Dport: "22", Verdict: "accept"}}},
				{Name: "post", Type: "nat", Hook: "postrouting", Priority: &items.NftPriority{Value: 100}, Rules: []items.NftRule{{OIfName: "wan0", Masquerade: true}}},
			}}
		if second {
			tbl.Sets[0].Elements = []string{"192.0.2.0/28"}
			tbl.Chains[0].Priority = &items.NftPriority{Value: 10}
			tbl.Chains[0].Rules = tbl.Chains[0].Rules[:1]
			tbl.Chains = slices.Delete(tbl.Chains, 1, 2)
		}
		return tbl
	}
	if err := c.Create(ctx, mk(false)); err != nil {
		t.Fatal(err)
	}
	before := nftRules(e)
	if err := c.Modify(ctx, mk(false), mk(true)); err != nil {
		t.Fatal(err)
	}
	// The input chain, added again, is listed after post now.
	after := nftRules(e)
	if len(after) != 2 || after[0].chain != "post" || after[0].handle != before[3].handle || after[1].chain != "input" {
		t.Errorf("rules after the modify: %+v (before %+v), want post's with its handle and input's", after, before)
	}
	out := e.exec("nft", "list", "table", "inet", "netagent")
	for _, want := range []string{"flags interval", "192.0.2.0/28", "hook input priority filter + 10", "ip saddr @a drop"} {
		if !strings.Contains(out, want) {
			t.Errorf("nft lists no %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "chain r ") {
		t.Errorf("chain r still there:\n%s", out)
	}
	if got, err := nftables.ReadBack(e.tgt); err != nil || len(got) != 1 || !got[0].Equal(mk(true)) {
		t.Errorf("read-back: %v, %v; want the intended table", got, err)
	}
}
