package main

import (
	"context"
	"fmt"

	"github.com/netagent/netagent/agent/oneshot"
	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/internal/termsafe"
)

func init() {
	register(&command{
		name:    "show",
		summary: "print what the kernel holds: netagent's objects and the links around them (--all: every object of others too)",
		usage:   "[--netns NAME] [--json] [--all] [--resolv-conf PATH]",
		run:     runShow,
	})
}

func runShow(g *globals, args []string) int {
	fs := newFlagSet(g, "show", "")
	k := kernelFlags(g, fs)
	asJSON := fs.Bool("json", false, "print an intent document (valid input for apply); with --all, inside an object that lists the others' objects too")
	all := fs.Bool("all", false, "also list the objects that are not netagent's (addresses, routes, rules, permanent neighbours, iptables chains), marked foreign")
	fs.Func("resolv-conf", "also read the DNS netagent wrote to `PATH` (as given to apply): --json then has the dns section "+
		"(the servers and domains the leases kept do not give)", func(v string) error {
		k.resolvConf = v
		return nil
	})
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() > 0 {
		return usageError(g, fs, "show takes no arguments")
	}
	res, err := oneshot.Show(context.Background(), k.options(g), *all)
	if err != nil {
		return printError(g, "", err)
	}
	switch {
	case *asJSON && *all:
		err = writeJSON(g, res.AllJSON())
	case *asJSON:
		err = writeJSON(g, res.Intent())
	default:
		printSections(g, res.Text(*all))
	}
	if err != nil {
		return exitInternal
	}
	return exitOK
}

// printShowText prints one section per item type, one line per item.
func printShowText(g *globals, list []dg.Item) { printSections(g, oneshot.ShowText(list)) }

// printSections prints show's sections, each line escaped for a terminal
// (names and rules other programs chose, what a DHCP server sent).
func printSections(g *globals, sections []oneshot.ShowSection) {
	for _, s := range sections {
		fmt.Fprintf(g.stdout, "%s:\n", s.Title)
		for _, l := range s.Lines {
			fmt.Fprintf(g.stdout, "  %s\n", termsafe.String(l.Text))
			for _, r := range l.Rules {
				fmt.Fprintf(g.stdout, "      -A %s %s\n", termsafe.String(l.Chain), termsafe.String(r))
			}
		}
	}
}
