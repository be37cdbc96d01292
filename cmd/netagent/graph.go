package main

import (
	"fmt"

	dg "github.com/netagent/netagent/depgraph"
)

func init() {
	register(&command{
		name:    "graph",
		summary: "print the intended graph as DOT (--current: the kernel's, or what an apply would change)",
		usage:   "[--current] [--netns NAME] [FILE...]",
		run:     runGraph,
	})
}

// runGraph prints DOT for `dot -Tsvg`: the intended graph of the files;
// with --current, the current state read back from the kernel, or, with
// files, current and intended together coloured by what an apply would
// change (depgraph.DiffDOT).
func runGraph(g *globals, args []string) int {
	fs := newFlagSet(g, "graph", "[FILE...]")
	k := kernelFlags(g, fs)
	current := fs.Bool("current", false, "read the kernel: its state alone, or with files the difference to the intent")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() == 0 && !*current {
		return usageError(g, fs, "no intent file given (or use --current)")
	}
	var intended *dg.Graph
	if fs.NArg() > 0 {
		var code int
		if intended, code = loadIntent(g, fs.Args()); intended == nil {
			return code
		}
	}
	if !*current {
		fmt.Fprint(g.stdout, dg.DOT(intended))
		return exitOK
	}
	rt, code := k.open(g)
	if rt == nil {
		return code
	}
	defer rt.Close()
	cur, err := rt.ReadCurrent(intended)
	if err != nil {
		fmt.Fprintf(g.stderr, "netagent: graph: %v\n", err)
		return exitInternal
	}
	if intended == nil {
		fmt.Fprint(g.stdout, dg.DOT(cur))
	} else {
		fmt.Fprint(g.stdout, dg.DiffDOT(cur, intended))
	}
	return exitOK
}
