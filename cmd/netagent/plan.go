package main

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/netagent/netagent/agent/host"
	"github.com/netagent/netagent/agent/oneshot"
	"github.com/netagent/netagent/internal/termsafe"
	"github.com/netagent/netagent/reconciler"
)

func init() {
	register(&command{
		name:    "plan",
		summary: "print the exact operations an apply would run now and what would fail; changes nothing",
		usage:   "[--netns NAME] [--resolv-conf PATH] [--json] [--via-daemon] [--protect LINK]... [--force] FILE...",
		run:     runPlan,
	})
}

func runPlan(g *globals, args []string) int {
	fs := newFlagSet(g, "plan", "FILE...")
	k := kernelFlags(g, fs)
	asJSON := fs.Bool("json", false, "print the plan as JSON")
	resolvConfFlag(fs, k)
	k.gateFlags(fs, false, planViaDaemon(g))
	prot := protectFlags(fs, true)
	o, code, ok := k.parse(g, fs, args, prot)
	if !ok {
		return code
	}
	res, err := oneshot.Plan(context.Background(), o, fs.Args())
	if err != nil {
		return k.failed(g, err, fs.Args())
	}
	return printPlanned(g, res, *asJSON)
}

// printPlanned prints a plan, as text or JSON, then the refusals, and
// returns its exit code.
func printPlanned(g *globals, res *oneshot.Planned, asJSON bool) int {
	gd := res.Guarded
	if asJSON {
		if err := printPlanJSONGuarded(g, res.PlanResult, gd); err != nil {
			return exitInternal
		}
	} else {
		printPlanTextGuarded(g, res.PlanResult, gd.ProtectedTouched())
		orphanLines(g, gd, "  =  ")
	}
	printRefused(g, gd, "netagent: plan: ")
	return exitOf(res.Outcome())
}

// exitOf is the exit code of an outcome.
func exitOf(o oneshot.Outcome) int {
	switch o {
	case oneshot.Refused:
		return exitRefused
	case oneshot.NotConverged:
		return exitFailed
	}
	return exitOK
}

// printPlanText prints what the plan does to traffic (printDisruption),
// one numbered operation per entry (an operation predicted to fail with
// its error) with the item and what it does to traffic, a header before
// each follow-up pass, then the items an apply would leave failed or blocked, what the kernel
// changes by itself as the operations run, and a summary line. "no
// changes" means exactly that: no operation, and nothing blocked or
// predicted to fail.
func printPlanText(g *globals, res *host.PlanResult) { printPlanTextGuarded(g, res, nil) }

// printPlanTextGuarded is printPlanText naming the protected links the plan
// touches in its summary.
func printPlanTextGuarded(g *globals, res *host.PlanResult, protected []string) {
	printDisruption(g, res, protected)
	for i, e := range res.Ops {
		if pass := passOf(res, i); pass > 1 && passStart(res, pass) == i {
			fmt.Fprintf(g.stdout, "  -- pass %d: apply reads the kernel back and writes again what it changed by itself:\n", pass)
		}
		fmt.Fprintf(g.stdout, "%3d. %s\n       %s\n", i+1, termsafe.String(e.String()), termsafe.String(fmt.Sprint(e.Item)))
		if line := disruptionLine(res, i); line != "" {
			fmt.Fprintf(g.stdout, "       %s\n", line)
		}
	}
	for _, p := range res.Problems {
		fmt.Fprintf(g.stdout, "  !  %s: %s: %s\n", termsafe.String(p.Ref.String()), problemState(p), termsafe.String(p.Reason))
	}
	if len(res.Problems) == 0 && res.Err != nil {
		fmt.Fprintf(g.stdout, "  !  %s\n", termsafe.String(res.Err.Error()))
	}
	for _, e := range res.SideEffects {
		fmt.Fprintf(g.stdout, "  ~  %s\n", oneshot.SideEffectText(e))
	}
	if note := waitNote(res); note != "" {
		fmt.Fprintf(g.stdout, "  ~  %s\n", note)
	}
	passes := ""
	if len(res.FollowUps) > 0 {
		passes = fmt.Sprintf(" in %d passes", len(res.FollowUps)+1)
	}
	switch failed := len(res.Problems); {
	case len(res.Ops) == 0 && failed == 0 && res.Err == nil:
		fmt.Fprintln(g.stdout, "no changes: the kernel already matches the intent")
	case failed == 0 && res.Err == nil:
		fmt.Fprintf(g.stdout, "plan: %d operations%s\n", len(res.Ops), passes)
	default:
		fmt.Fprintf(g.stdout, "plan: %d operations%s; %d items would not converge (predicted to fail or blocked)\n", len(res.Ops), passes, failed)
	}
}

// passOf returns the 1-based pass of the i-th operation.
func passOf(res *host.PlanResult, i int) int {
	pass := 1
	for _, start := range res.FollowUps {
		if i >= start {
			pass++
		}
	}
	return pass
}

// passStart returns the index of the first operation of a pass (> 1).
func passStart(res *host.PlanResult, pass int) int { return res.FollowUps[pass-2] }

// waitNote says what apply does beyond the planned passes while items wait
// for a link: it waits for link events (--wait) and converges again at
// each, which retries the operations that failed; how often depends on the
// events, so a plan cannot list those. Items blocked only behind a failure
// are not waited for.
func waitNote(res *host.PlanResult) string {
	if !slices.ContainsFunc(res.Problems, func(p host.Problem) bool { return p.WaitsOnLink }) {
		return ""
	}
	note := "while items wait for a link, apply waits for link events (up to --wait) and converges again at each"
	if slices.ContainsFunc(res.Ops, func(e reconciler.OpLogEntry) bool { return e.Err != nil }) {
		note += "; the failed operations are retried then, and fail again unless what is in their way is gone"
	}
	return note
}

// problemState names what an apply would leave an item in: blocked, or
// failed (a plan predicts the failure: nothing ran).
func problemState(p host.Problem) string {
	if p.Blocked {
		return "blocked"
	}
	return "predicted to fail"
}

// planJSON is the document `plan --json` prints.
type planJSON struct {
	// Disruption is what the plan does to traffic, in short; each
	// operation's own is its "disruption".
	Disruption  disruptionJSON   `json:"disruption"`
	Operations  []opJSON         `json:"operations"`
	Problems    []problemJSON    `json:"problems,omitempty"`
	SideEffects []sideEffectJSON `json:"sideEffects,omitempty"`
	// Orphans are the objects kept in the kernel although the intent no
	// longer holds them (a link it protected); Refused the disruptions of
	// protected links that make apply refuse (with --force: that it runs
	// anyway, Forced).
	Orphans []orphanJSON `json:"orphans,omitempty"`
	Refused []string     `json:"refused,omitempty"`
	Forced  bool         `json:"forced,omitempty"`
}

type orphanJSON struct {
	Item   string `json:"item"`
	Link   string `json:"link"`
	Reason string `json:"reason"`
}

type opJSON struct {
	Op          string `json:"op"`
	Item        string `json:"item"`
	Recreate    bool   `json:"recreate,omitempty"`
	Description string `json:"description"`
	// Error is the error the operation is predicted to fail with.
	Error string `json:"error,omitempty"`
	// Pass is the apply pass that runs it: 1, or a follow-up pass that
	// writes again what the kernel changed by itself.
	Pass int `json:"pass"`
	// Disruption is what the operation does to traffic.
	Disruption *opDisruptionJSON `json:"disruption,omitempty"`
}

// problemJSON is an item an apply would leave failed or blocked: State is
// "predicted to fail" or "blocked".
type problemJSON struct {
	Item    string `json:"item"`
	State   string `json:"state"`
	Blocked bool   `json:"blocked"`
	Reason  string `json:"reason"`
}

// sideEffectJSON is an intended item the kernel changes by itself after
// an operation (Cause): certainly, or depending on what it decides then.
type sideEffectJSON struct {
	Item    string `json:"item"`
	Cause   string `json:"cause"`
	Reason  string `json:"reason"`
	Certain bool   `json:"certain"`
}

func printPlanJSON(g *globals, res *host.PlanResult) error {
	return printPlanJSONGuarded(g, res, &oneshot.Guarded{Guarded: &host.Guarded{}})
}

// printPlanJSONGuarded prints the plan with what the protection of links
// decided.
func printPlanJSONGuarded(g *globals, res *host.PlanResult, gd *oneshot.Guarded) error {
	doc := planJSON{Operations: opsJSON(res.Ops), Forced: gd.Force && len(gd.Refused) > 0,
		Disruption: disruptionDoc(res, gd.ProtectedTouched())}
	for _, r := range gd.Refused {
		doc.Refused = append(doc.Refused, r.Why)
	}
	doc.Orphans = orphansJSON(gd)
	for i := range doc.Operations {
		doc.Operations[i].Pass = passOf(res, i)
		if i < len(res.Disruptions) {
			doc.Operations[i].Disruption = opDisruption(res.Disruptions[i])
		}
	}
	for _, p := range res.Problems {
		doc.Problems = append(doc.Problems, problemJSON{Item: p.Ref.String(), State: problemState(p), Blocked: p.Blocked, Reason: p.Reason})
	}
	for _, e := range res.SideEffects {
		doc.SideEffects = append(doc.SideEffects, sideEffectJSON{Item: e.Ref.String(), Cause: e.Cause, Reason: e.Reason, Certain: e.Certain})
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
