package main

import (
	"context"
	"fmt"

	"github.com/netagent/netagent/agent/oneshot"
	"github.com/netagent/netagent/internal/termsafe"
)

func init() {
	register(&command{
		name:    "diff",
		summary: "compare two versions of the intent: what changed, and the operations going from A to B runs",
		usage:   "[--netns NAME] [--json] [A [B]]",
		run:     runDiff,
	})
}

func runDiff(g *globals, args []string) int {
	fs := newFlagSet(g, "diff", "[A [B]] (default: the previous version and the current one; A alone: A and the current one)")
	k := kernelFlags(g, fs)
	asJSON := fs.Bool("json", false, "print the versions, the changes and the plan as JSON")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() > 2 {
		return usageError(g, fs, "at most two versions")
	}
	nums := make([]int, fs.NArg())
	for i, a := range fs.Args() {
		n, err := parseVersion(a)
		if err != nil || n == 0 {
			return usageError(g, fs, fmt.Sprintf("%q: want a version number (see netagent history)", a))
		}
		nums[i] = n
	}
	res, err := oneshot.Diff(context.Background(), k.options(g), nums)
	switch {
	case res != nil && *asJSON:
		if res.FoundErr != nil {
			fmt.Fprintf(g.stderr, "netagent: %v\n", res.FoundErr)
		}
		if writeJSON(g, oneshot.DiffDocOf(res, err)) != nil {
			return exitInternal
		}
	case res != nil:
		printDiffed(g, res)
	}
	if err != nil {
		return versionError(g, err)
	}
	return exitOK
}

// printDiffed prints what diff found: the two versions, what changed, and
// the operations going from A to B runs, as plan prints them.
func printDiffed(g *globals, d *oneshot.Diffed) {
	fmt.Fprintf(g.stdout, "intent: version %d (%s) -> version %d (%s)\n", d.A.Number, termsafe.String(d.A.Source), d.B.Number, termsafe.String(d.B.Source))
	if d.Compared && len(d.Changes) == 0 {
		fmt.Fprintln(g.stdout, "  no differences")
	}
	for _, c := range d.Changes {
		fmt.Fprintf(g.stdout, "  %s\n", termsafe.String(fmt.Sprint(c)))
	}
	if d.Plan == nil {
		return
	}
	fmt.Fprintf(g.stdout, "operations from version %d to version %d:\n", d.A.Number, d.B.Number)
	if d.FoundErr != nil {
		fmt.Fprintf(g.stderr, "netagent: %v\n", d.FoundErr)
	}
	if len(d.Plan.Ops) == 0 && len(d.Plan.Problems) == 0 {
		fmt.Fprintln(g.stdout, "no operations: the two versions render the same items")
	} else {
		printPlanText(g, d.Plan)
	}
	for _, o := range d.Orphans {
		fmt.Fprintf(g.stdout, "  =  %s\n", termsafe.String(fmt.Sprint(o)))
	}
}
