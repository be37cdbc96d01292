package main

import (
	"context"
	"fmt"

	"github.com/netagent/netagent/agent/host"
	"github.com/netagent/netagent/agent/oneshot"
	dg "github.com/netagent/netagent/depgraph"
)

// Protected links (see host.Protection): --protect LINK on apply, plan,
// check and run, and "protected": true in the intent. An apply that would
// disrupt one is refused before anything changes (exitRefused), unless
// --force; what an intent that protected a link leaves out of it stays in
// the kernel as an orphan.

// guard works out the protection of the target's intent and what it
// decides (oneshot.Guard). It prints nothing.
func (p *protectOpts) guard(g *globals, t *oneshot.Target) (*oneshot.Guarded, int) {
	return p.guardGraph(g, t.Runtime, t.Intent.Protected, t.Graph)
}

// guardGraph is guard on a graph the intent's files protect the links
// protected of.
func (p *protectOpts) guardGraph(g *globals, rt *host.Runtime, protected []string, intended *dg.Graph) (*oneshot.Guarded, int) {
	gd, err := oneshot.Guard(context.Background(), p.options(), rt, protected, intended)
	if err != nil {
		fmt.Fprintf(g.stderr, "netagent: %v\n", err)
		return nil, exitInternal
	}
	return gd, exitOK
}

// options are the oneshot options of --protect and --force.
func (p *protectOpts) options() *oneshot.Options {
	return &oneshot.Options{Protect: p.links, Force: p.force}
}

// refuse prints the refusals and reports whether the command stops there
// (they are not forced).
func (p *protectOpts) refuse(g *globals, res *oneshot.Guarded, prefix string) bool {
	printRefused(g, res, prefix)
	return res.Stops()
}
