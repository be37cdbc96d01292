package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os/exec"
	"strings"

	"github.com/netagent/netagent/agent/host"
	"github.com/netagent/netagent/agent/render"
	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/items"
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
	var intended *dg.Graph
	if fs.NArg() > 0 {
		var code int
		if intended, code = loadIntent(g, fs.Args()); intended == nil {
			return code
		}
	}
	if intended != nil {
		describeFiles(intended)
	}
	if !*current {
		return out(dg.DOT(intended))
	}
	rt, code := k.open(g)
	if rt == nil {
		return code
	}
	defer rt.Close()
	cur, err := readCurrent(rt, intended)
	if err != nil {
		fmt.Fprintf(g.stderr, "netagent: graph: %v\n", err)
		return exitInternal
	}
	if intended == nil {
		return out(dg.DOT(cur))
	}
	res, err := rt.Plan(context.Background(), intended)
	if err != nil {
		fmt.Fprintf(g.stderr, "netagent: graph: %v\n", err)
		return exitInternal
	}
	return out(dg.DiffDOTFailing(cur, intended, predictedFailures(res)))
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

// predictedFailures are the items a plan predicts to fail, with why.
func predictedFailures(res *host.PlanResult) map[dg.ItemRef]string {
	out := make(map[dg.ItemRef]string)
	for _, p := range res.Problems {
		if !p.Blocked {
			out[p.Ref] = p.Reason
		}
	}
	return out
}

// describeFiles labels each file's subgraph with the file's name (the
// subgraph's own name has each "/" escaped: see render.SubgraphName), so
// that a DOT cluster reads "/etc/netagent/lan.json".
func describeFiles(intended *dg.Graph) {
	for _, sub := range intended.SubGraphs() {
		sub.SetDescription(render.FileOfSubgraph(sub.Name()))
	}
}

// readCurrent reads the kernel back for graph --current. Without an intent
// (intended nil), a link netagent does not own but that its objects sit on
// (the uplink an address or a route is on, a port of its bridge) is read
// back as the physical interface it is to them, as an intent would declare
// it, so that it is drawn present, under its link, rather than missing.
func readCurrent(rt *host.Runtime, intended *dg.Graph) (*dg.Graph, error) {
	cur, err := rt.ReadCurrent(intended)
	if err != nil || intended != nil {
		return cur, err
	}
	hint := dg.New("physical")
	for _, ref := range cur.Refs() {
		for _, d := range cur.Dependencies(ref) {
			req := d.RequiredItem
			if req.Type == items.TypeInterface && !cur.Contains(req) && cur.Contains(items.LinkRef(req.Name)) {
				hint.Put(&items.Interface{IfName: req.Name, Kind: items.KindPhysical})
			}
		}
	}
	if hint.Len() == 0 {
		return cur, nil
	}
	return rt.ReadCurrent(hint)
}
