package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os/exec"
	"strings"

	"github.com/netagent/netagent/agent/oneshot"
	"github.com/netagent/netagent/internal/gctune"
)

func init() {
	register(&command{
		name:    "graph",
		summary: "print the intended graph as DOT, or SVG through Graphviz (--current: the kernel's, or what an apply would change)",
		usage:   "[--current] [--format dot|svg] [--netns NAME] [FILE...]",
		run:     runGraph,
	})
}

// runGraph prints DOT for `dot -Tsvg`: the intended graph of the files;
// with --current, the current state read back from the kernel, or, with
// files, current and intended together coloured by what an apply would
// change, the items a plan predicts to fail marked (depgraph.DiffDOTFailing).
func runGraph(g *globals, args []string) int {
	fs := newFlagSet(g, "graph", "[FILE...]")
	k := kernelFlags(g, fs)
	current := fs.Bool("current", false, "read the kernel: its state alone, or with files the difference to the intent")
	format := fs.String("format", "dot", "dot, or svg: the DOT laid out by Graphviz's dot, which must be on PATH")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() == 0 && !*current {
		return usageError(g, fs, "no intent file given (or use --current)")
	}
	out, code := graphOutput(g, fs, *format)
	if out == nil {
		return code
	}
	o := k.options(g)
	o.Sized = gctune.Size
	dot, err := oneshot.Graph(context.Background(), o, fs.Args(), *current)
	if err != nil {
		return printError(g, "", err)
	}
	return out(dot)
}

// graphOutput returns what prints the DOT in the format asked: as it is,
// or laid out as SVG by Graphviz's dot. Without dot on PATH, svg fails at
// once (exit 3), before the kernel is read.
func graphOutput(g *globals, fs *flag.FlagSet, format string) (func(dot string) int, int) {
	switch format {
	case "dot":
		return func(dot string) int {
			fmt.Fprint(g.stdout, dot)
			return exitOK
		}, exitOK
	case "svg":
	default:
		return nil, usageError(g, fs, fmt.Sprintf("--format %q: want dot or svg", format))
	}
	bin, err := exec.LookPath("dot")
	if err != nil {
		fmt.Fprintf(g.stderr, "netagent: graph --format svg needs Graphviz's dot, which is not on PATH (%v): install graphviz, "+
			"or run `netagent graph` (DOT) and lay it out where dot is: dot -Tsvg\n", err)
		return nil, exitInternal
	}
	return func(dot string) int {
		cmd := exec.Command(bin, "-Tsvg")
		cmd.Stdin = strings.NewReader(dot)
		var errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = g.stdout, &errOut
		if err := cmd.Run(); err != nil {
			fmt.Fprintf(g.stderr, "netagent: graph: %s -Tsvg: %v\n%s", bin, err, errOut.String())
			return exitInternal
		}
		return exitOK
	}, exitOK
}
