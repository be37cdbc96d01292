package main

import (
	"context"
	"flag"
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

// protectOpts are --protect and --force.
type protectOpts struct {
	links []string
	force bool
}

// protectFlags adds --protect (repeatable) and, for a command that
// changes the kernel or plans a change, --force.
func protectFlags(fs *flag.FlagSet, force bool) *protectOpts {
	p := &protectOpts{}
	fs.Func("protect", "a link no apply may delete, recreate, set down, strip of its addresses or withdraw the routes through (repeatable)",
		func(v string) error {
			if v == "" {
				return fmt.Errorf("empty link name")
			}
			p.links = append(p.links, v)
			return nil
		})
	if force {
		fs.BoolVar(&p.force, "force", false, "apply even what would disrupt a protected link, and delete the orphans an intent left out")
	}
	return p
}

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

// printRefused prints the refusals of res: forced, or what stops the
// command.
func printRefused(g *globals, res *oneshot.Guarded, prefix string) {
	if len(res.Refused) == 0 {
		return
	}
	if res.Force {
		for _, r := range res.Refused {
			fmt.Fprintf(g.stderr, "%sforced: %s\n", prefix, r.Why)
		}
		return
	}
	fmt.Fprintf(g.stderr, "%srefused: the apply would disrupt a protected link; nothing was changed (--force to apply anyway):\n", prefix)
	for _, r := range res.Refused {
		fmt.Fprintf(g.stderr, "%s  %s\n", prefix, r.Why)
	}
}

// orphansJSON lists the orphans for a JSON document (none when forced:
// they go).
func orphansJSON(res *oneshot.Guarded) []orphanJSON {
	if res == nil || res.Force || res.Guarded == nil {
		return nil
	}
	out := make([]orphanJSON, 0, len(res.Orphans))
	for _, o := range res.Orphans {
		out = append(out, orphanJSON{Item: o.Ref.String(), Link: o.Link, Reason: o.Reason})
	}
	return out
}

// orphanLines prints one line per orphan (forced: that they go).
func orphanLines(g *globals, res *oneshot.Guarded, prefix string) {
	if res.Force {
		for _, o := range res.Orphans {
			fmt.Fprintf(g.stdout, "%s%s: deleted (--force): %s\n", prefix, o.Ref, o.Reason)
		}
		return
	}
	for _, o := range res.Orphans {
		fmt.Fprintf(g.stdout, "%s%s\n", prefix, o)
	}
}
