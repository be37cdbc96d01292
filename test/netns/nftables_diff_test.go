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
	"testing"

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
