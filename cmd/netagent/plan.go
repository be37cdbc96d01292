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
		summary: "print the exact operations an apply would run now and what would fail; changes nothing",
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
		if err := printPlanJSON(g, res); err != nil {
			return exitInternal
		}
	} else {
		printPlanText(g, res)
	}
	if len(res.Problems) > 0 || res.Err != nil {
		return exitFailed
	}
	return exitOK
}

// printPlanText prints one numbered line per operation (an operation
// predicted to fail with its error), then the items an apply would leave
// failed or blocked, and a summary line. "no changes" means exactly that:
// no operation, and nothing blocked or predicted to fail.
func printPlanText(g *globals, res *runtime.Result) {
	for i, e := range res.Ops {
		fmt.Fprintf(g.stdout, "%3d. %s\n       %s\n", i+1, e, e.Item)
	}
	for _, p := range res.Problems {
		fmt.Fprintf(g.stdout, "  !  %s: %s: %s\n", p.Ref, problemState(p), p.Reason)
	}
	if len(res.Problems) == 0 && res.Err != nil {
		fmt.Fprintf(g.stdout, "  !  %v\n", res.Err)
	}
	switch failed := len(res.Problems); {
	case len(res.Ops) == 0 && failed == 0 && res.Err == nil:
		fmt.Fprintln(g.stdout, "no changes: the kernel already matches the intent")
	case failed == 0 && res.Err == nil:
		fmt.Fprintf(g.stdout, "plan: %d operations\n", len(res.Ops))
	default:
		fmt.Fprintf(g.stdout, "plan: %d operations; %d items would not converge (predicted to fail or blocked)\n", len(res.Ops), failed)
	}
}

// problemState names what an apply would leave an item in: blocked, or
// failed (a plan predicts the failure: nothing ran).
func problemState(p runtime.Problem) string {
	if p.Blocked {
		return "blocked"
	}
	return "predicted to fail"
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
	// Error is the error the operation is predicted to fail with.
	Error string `json:"error,omitempty"`
}

// problemJSON is an item an apply would leave failed or blocked: State is
// "predicted to fail" or "blocked".
type problemJSON struct {
	Item    string `json:"item"`
	State   string `json:"state"`
	Blocked bool   `json:"blocked"`
	Reason  string `json:"reason"`
}

func printPlanJSON(g *globals, res *runtime.Result) error {
	doc := planJSON{Operations: opsJSON(res.Ops)}
	for _, p := range res.Problems {
		doc.Problems = append(doc.Problems, problemJSON{Item: p.Ref.String(), State: problemState(p), Blocked: p.Blocked, Reason: p.Reason})
	}
	return writeJSON(g, doc)
}

func opsJSON(log reconciler.OperationLog) []opJSON {
	out := make([]opJSON, 0, len(log))
	for _, e := range log {
		o := opJSON{Op: e.Op.String(), Item: e.Ref.String(), Recreate: e.Recreate, Description: e.Item.String()}
		if e.Err != nil {
			o.Error = e.Err.Error()
		}
		out = append(out, o)
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
