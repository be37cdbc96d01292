package main

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/netagent/netagent/agent/runtime"
	"github.com/netagent/netagent/reconciler"
)

func init() {
	register(&command{
		name:    "plan",
		summary: "print the exact operations an apply would run now; changes nothing",
		usage:   "[--netns NAME] [--json] FILE...",
		run:     runPlan,
	})
}

func runPlan(g *globals, args []string) int {
	fs := newFlagSet(g, "plan", "FILE...")
	k := kernelFlags(g, fs)
	asJSON := fs.Bool("json", false, "print the plan as JSON")
	k.gateFlags(fs, false, planViaDaemon(g))
	intended, rt, code := k.prepare(g, fs, args)
	if rt == nil {
		return code
	}
	defer rt.Close()
	res, err := rt.Plan(context.Background(), intended)
	if err != nil {
		fmt.Fprintf(g.stderr, "netagent: plan: %v\n", err)
		return exitInternal
	}
	if *asJSON {
		return printPlanJSON(g, res)
	}
	printPlanText(g, res)
	return exitOK
}

// printPlanText prints one numbered line per operation, then the items
// that could not be created now.
func printPlanText(g *globals, res *runtime.Result) {
	if len(res.Ops) == 0 {
		fmt.Fprintln(g.stdout, "no changes: the kernel already matches the intent")
	}
	for i, e := range res.Ops {
		fmt.Fprintf(g.stdout, "%3d. %s\n       %s\n", i+1, e, e.Item)
	}
	for _, p := range res.Problems {
		fmt.Fprintf(g.stdout, "  !  %s\n", p)
	}
}

// planJSON is the document `plan --json` prints.
type planJSON struct {
	Operations []opJSON      `json:"operations"`
	Problems   []problemJSON `json:"problems,omitempty"`
}

type opJSON struct {
	Op          string `json:"op"`
	Item        string `json:"item"`
	Recreate    bool   `json:"recreate,omitempty"`
	Description string `json:"description"`
}

type problemJSON struct {
	Item    string `json:"item"`
	Blocked bool   `json:"blocked"`
	Reason  string `json:"reason"`
}

func printPlanJSON(g *globals, res *runtime.Result) int {
	doc := planJSON{Operations: opsJSON(res.Ops)}
	for _, p := range res.Problems {
		doc.Problems = append(doc.Problems, problemJSON{Item: p.Ref.String(), Blocked: p.Blocked, Reason: p.Reason})
	}
	if err := writeJSON(g, doc); err != nil {
		return exitInternal
	}
	return exitOK
}

func opsJSON(log reconciler.OperationLog) []opJSON {
	out := make([]opJSON, 0, len(log))
	for _, e := range log {
		out = append(out, opJSON{Op: e.Op.String(), Item: e.Ref.String(), Recreate: e.Recreate, Description: e.Item.String()})
	}
	return out
}

// writeJSON prints v as indented JSON on stdout.
func writeJSON(g *globals, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		fmt.Fprintf(g.stderr, "netagent: %v\n", err)
		return err
	}
	_, err = fmt.Fprintf(g.stdout, "%s\n", data)
	return err
}
