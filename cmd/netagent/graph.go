package main

import (
	"context"
	"fmt"

	"github.com/netagent/netagent/agent/render"
	"github.com/netagent/netagent/agent/target"
	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/items"
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
// change, the items a plan predicts to fail marked (depgraph.DiffDOTFailing).
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
	if intended != nil {
		describeFiles(intended)
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
	cur, err := readCurrent(rt, intended)
	if err != nil {
		fmt.Fprintf(g.stderr, "netagent: graph: %v\n", err)
		return exitInternal
	}
	if intended == nil {
		fmt.Fprint(g.stdout, dg.DOT(cur))
		return exitOK
	}
	res, err := rt.Plan(context.Background(), intended)
	if err != nil {
		fmt.Fprintf(g.stderr, "netagent: graph: %v\n", err)
		return exitInternal
	}
	fmt.Fprint(g.stdout, dg.DiffDOTFailing(cur, intended, predictedFailures(res)))
	return exitOK
}

// predictedFailures are the items a plan predicts to fail, with why.
func predictedFailures(res *target.PlanResult) map[dg.ItemRef]string {
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
func readCurrent(rt *target.Runtime, intended *dg.Graph) (*dg.Graph, error) {
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
