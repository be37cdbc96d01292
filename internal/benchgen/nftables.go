package main

import (
	"fmt"
	"strings"
)

// The nftables workloads: one table inet netagent, written as `nft -f`
// text for the kernel side and as the intent's nftables section, with
// the same objects in the same order (netagent's mark, the empty chain
// netagent-owned, first; then the sets, the chains, their rules), so that
// `nft list ruleset` prints the same for both.

// The intent's nftables section, as far as the workloads use it.
type (
	nftSection struct {
		Tables []nftTable `json:"tables"`
	}
	nftTable struct {
		Family string     `json:"family"`
		Name   string     `json:"name"`
		Sets   []nftSet   `json:"sets,omitempty"`
		Chains []nftChain `json:"chains"`
	}
	nftSet struct {
		Name     string   `json:"name"`
		Type     string   `json:"type"`
		Elements []string `json:"elements"`
	}
	nftChain struct {
		Name     string    `json:"name"`
		Type     string    `json:"type,omitempty"`
		Hook     string    `json:"hook,omitempty"`
		Priority string    `json:"priority,omitempty"`
		Rules    []nftRule `json:"rules,omitempty"`
	}
	nftRule struct {
		Saddr    string `json:"saddr,omitempty"`
		Protocol string `json:"protocol,omitempty"`
		Dport    string `json:"dport,omitempty"`
		Verdict  string `json:"verdict"`
		Target   string `json:"target,omitempty"`
	}
)

// nftOwnerChain is netagent's mark on a table it made (items.NftOwnerChain).
const nftOwnerChain = "netagent-owned"

// nftRuleText is a rule as nft writes it.
func nftRuleText(r nftRule) string {
	var parts []string
	if r.Saddr != "" {
		parts = append(parts, "ip saddr "+r.Saddr)
	}
	if r.Dport != "" {
		parts = append(parts, r.Protocol+" dport "+r.Dport)
	}
	return strings.Join(append(parts, strings.TrimSpace(r.Verdict+" "+r.Target)), " ")
}

// text is the table as an `nft -f` file.
func (t *nftTable) text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "table %s %s {\n\tchain %s {\n\t}\n", t.Family, t.Name, nftOwnerChain)
	for _, s := range t.Sets {
		fmt.Fprintf(&b, "\tset %s {\n\t\ttype %s\n\t\telements = { %s }\n\t}\n", s.Name, s.Type, strings.Join(s.Elements, ", "))
	}
	for _, c := range t.Chains {
		fmt.Fprintf(&b, "\tchain %s {\n", c.Name)
		if c.Hook != "" {
			fmt.Fprintf(&b, "\t\ttype %s hook %s priority %s; policy accept;\n", c.Type, c.Hook, c.Priority)
		}
		for _, r := range c.Rules {
			fmt.Fprintf(&b, "\t\t%s\n", nftRuleText(r))
		}
		b.WriteString("\t}\n")
	}
	b.WriteString("}\n")
	return b.String()
}

// nftFiles is the workload of one table: nft -f's file, the intent, and
// the intent with edit applied to a copy of the table.
func nftFiles(t nftTable, edit func(*nftTable)) *files {
	c := t
	c.Sets = append([]nftSet(nil), t.Sets...)
	c.Chains = append([]nftChain(nil), t.Chains...)
	edit(&c)
	intent := &doc{Version: 1, Nftables: &nftSection{Tables: []nftTable{t}}}
	change := &doc{Version: 1, Nftables: &nftSection{Tables: []nftTable{c}}}
	return &files{setup: "link set lo up\n", kernelName: "kernel.nft", kernel: t.text(), intent: intent, change: change}
}

// nftRulesWorkload is n rules in chains regular chains NA-BENCH<c>, each
// jumped to from the base chain forward: rule r of chain c accepts TCP
// from 10.c.r.0/24 (modulo 250) to port 1000+r. change.json gives the
// first rule port 999.
func nftRulesWorkload(n, chains int) *files {
	t := nftTable{Family: "inet", Name: "netagent"}
	fwd := nftChain{Name: "forward", Type: "filter", Hook: "forward", Priority: "filter"}
	var regular []nftChain
	for c := range chains {
		ch := nftChain{Name: fmt.Sprintf("NA-BENCH%04d", c)}
		for r := range n/chains + btoi(c < n%chains) {
			ch.Rules = append(ch.Rules, nftBenchRule(c, r, 1000+r))
		}
		regular = append(regular, ch)
		fwd.Rules = append(fwd.Rules, nftRule{Verdict: "jump", Target: ch.Name})
	}
	t.Chains = append([]nftChain{fwd}, regular...)
	return nftFiles(t, func(c *nftTable) {
		ch := &c.Chains[1]
		ch.Rules = append([]nftRule(nil), ch.Rules...)
		ch.Rules[0] = nftBenchRule(0, 0, 999)
	})
}

func nftBenchRule(c, r, port int) nftRule {
	return nftRule{Saddr: fmt.Sprintf("10.%d.%d.0/24", c%250, r%250), Protocol: "tcp", Dport: fmt.Sprint(port), Verdict: "accept"}
}

// nftSetWorkload is one set "blocked" of n IPv4 addresses, 10.0.0.0
// onwards, dropped from the base chain input by one rule. change.json
// replaces the first address by 11.0.0.0.
func nftSetWorkload(n int) *files {
	set := nftSet{Name: "blocked", Type: "ipv4_addr"}
	for i := range n {
		set.Elements = append(set.Elements, fmt.Sprintf("%d.%d.%d.%d", 10+i>>24, i>>16&255, i>>8&255, i&255))
	}
	t := nftTable{Family: "inet", Name: "netagent", Sets: []nftSet{set}, Chains: []nftChain{{
		Name: "input", Type: "filter", Hook: "input", Priority: "filter",
		Rules: []nftRule{{Saddr: "@blocked", Verdict: "drop"}},
	}}}
	return nftFiles(t, func(c *nftTable) {
		s := &c.Sets[0]
		s.Elements = append([]string{"11.0.0.0"}, s.Elements[1:]...)
	})
}
