package main

import (
	"fmt"
	"slices"

	"github.com/netagent/netagent/agent/render"
	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/items"
)

func init() {
	register(&command{
		name:    "show",
		summary: "print what the kernel holds: netagent's objects and the links around them",
		usage:   "[--netns NAME] [--json]",
		run:     runShow,
	})
}

func runShow(g *globals, args []string) int {
	fs := newFlagSet(g, "show", "")
	k := kernelFlags(g, fs)
	asJSON := fs.Bool("json", false, "print an intent document (valid input for apply)")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() > 0 {
		return usageError(g, fs, "show takes no arguments")
	}
	rt, code := k.open(g)
	if rt == nil {
		return code
	}
	defer rt.Close()
	cur, err := rt.ReadCurrent(nil)
	if err != nil {
		fmt.Fprintf(g.stderr, "netagent: show: %v\n", err)
		return exitInternal
	}
	var list []dg.Item
	for it := range cur.Items() {
		list = append(list, it)
	}
	if *asJSON {
		if writeJSON(g, render.ToIntent(list)) != nil {
			return exitInternal
		}
		return exitOK
	}
	printShowText(g, list)
	return exitOK
}

// showSections orders the text output: links first, then what sits on
// them.
var showSections = []struct{ typ, title string }{
	{items.TypeLink, "links (not netagent's)"},
	{items.TypeInterface, "interfaces"},
	{items.TypePort, "ports"},
	{items.TypeBridgeVLANs, "bridge vlans"},
	{items.TypeAddress, "addresses"},
	{items.TypeRoute, "routes"},
	{items.TypeRule, "rules"},
	{items.TypeNeighbor, "neighbors"},
	{items.TypeSysctl, "sysctls"},
	{items.TypeIptablesChain, "firewall chains"},
	{items.TypeDNS, "dns"},
	{items.TypeForeign, "routes and rules (not netagent's, left alone)"},
}

// printShowText prints one section per item type, one line per item.
func printShowText(g *globals, list []dg.Item) {
	for _, s := range showSections {
		i := slices.IndexFunc(list, func(it dg.Item) bool { return it.Type() == s.typ })
		if i < 0 {
			continue
		}
		fmt.Fprintf(g.stdout, "%s:\n", s.title)
		for _, it := range list {
			if it.Type() == s.typ {
				fmt.Fprintf(g.stdout, "  %s\n", it)
				printChainRules(g, it)
			}
		}
	}
}

// printChainRules prints a chain's rules under it, as iptables would take
// them after "-A <chain>".
func printChainRules(g *globals, it dg.Item) {
	if c, ok := it.(*items.IptablesChain); ok {
		for _, args := range c.Rules {
			fmt.Fprintf(g.stdout, "      -A %s %s\n", c.Chain, render.JoinRule(args))
		}
	}
}
