package main

import (
	"context"
	"fmt"

	"github.com/netagent/netagent/agent/host"
	"github.com/netagent/netagent/agent/oneshot"
	"github.com/netagent/netagent/internal/plural"
	"github.com/netagent/netagent/internal/termsafe"
)

func init() {
	register(&command{
		name:    "plan",
		summary: "print the exact operations an apply would run now and what would fail; changes nothing",
		usage:   "[--netns NAME] [--against SNAPSHOT] [--resolv-conf PATH] [--json] [--via-daemon] [--adopt] [--protect LINK]... [--force] [--detailed-exitcode] FILE...",
		run:     runPlan,
	})
}

func runPlan(g *globals, args []string) int {
	fs := newFlagSet(g, "plan", "FILE...")
	k := kernelFlags(g, fs)
	asJSON := fs.Bool("json", false, "print the plan as JSON")
	resolvConfFlag(fs, k)
	k.gateFlags(fs, false, planViaDaemon(g))
	adoptFlag(fs, k, "plan to")
	prot := protectFlags(fs, true)
	against := fs.String("against", "", "plan against the namespace of the `SNAPSHOT` file (netagent snapshot) instead of the kernel: the same planner over fakes loaded from it")
	detailed := fs.Bool("detailed-exitcode", false, "for CI, as terraform's: exit 0 when there is nothing to change, 2 when an apply would change something and converge (1, 3 and 4 as without it; a bad command line also exits 2)")
	o, code, ok := k.parse(g, fs, args, prot)
	if !ok {
		return code
	}
	if *against != "" && k.viaDaemon {
		return usageError(g, fs, "--against plans offline: it takes no --via-daemon")
	}
	if *detailed && k.viaDaemon {
		return usageError(g, fs, "--detailed-exitcode plans here: it takes no --via-daemon")
	}
	var res *oneshot.Planned
	var err error
	if *against != "" {
		res, err = oneshot.PlanAgainst(context.Background(), o, *against, fs.Args())
	} else {
		res, err = oneshot.Plan(context.Background(), o, fs.Args())
	}
	if err != nil {
		return k.failed(g, err, fs.Args())
	}
	code = printPlanned(g, res, *asJSON)
	if *detailed && code == exitOK && len(res.Ops) > 0 {
		return exitChangesPending
	}
	return code
}

// exitChangesPending is plan --detailed-exitcode's: an apply would change
// something, and converge.
const exitChangesPending = 2

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
// changes by itself as the operations run, the warnings (an apply runs, but
// another owner may undo what it means), and a summary line. "no
// changes" means exactly that: no operation, and nothing blocked or
// predicted to fail.
func printPlanText(g *globals, res *host.PlanResult) { printPlanTextGuarded(g, res, nil) }

// printPlanTextGuarded is printPlanText naming the protected links the plan
// touches in its summary.
func printPlanTextGuarded(g *globals, res *host.PlanResult, protected []string) {
	printDisruption(g, res, protected)
	for i, e := range res.Ops {
		if pass := oneshot.PassOf(res, i); pass > 1 && oneshot.PassStart(res, pass) == i {
			fmt.Fprintf(g.stdout, "  -- pass %d: apply reads the kernel back and writes again what it changed by itself:\n", pass)
		}
		fmt.Fprintf(g.stdout, "%3d. %s\n       %s\n", i+1, termsafe.String(host.OpText(e, res.Adoptions)), termsafe.String(fmt.Sprint(e.Item)))
		if line := disruptionLine(res, i); line != "" {
			fmt.Fprintf(g.stdout, "       %s\n", line)
		}
	}
	for _, p := range res.Problems {
		fmt.Fprintf(g.stdout, "  !  %s: %s: %s\n", termsafe.String(p.Ref.String()), oneshot.ProblemState(p), termsafe.String(p.Reason))
	}
	if len(res.Problems) == 0 && res.Err != nil {
		fmt.Fprintf(g.stdout, "  !  %s\n", termsafe.String(res.Err.Error()))
	}
	for _, e := range res.SideEffects {
		fmt.Fprintf(g.stdout, "  ~  %s\n", oneshot.SideEffectText(e))
	}
	for _, w := range res.Warnings {
		fmt.Fprintf(g.stdout, "  ~  warning: %s\n", termsafe.String(w.Text))
	}
	if note := oneshot.WaitNote(res); note != "" {
		fmt.Fprintf(g.stdout, "  ~  %s\n", note)
	}
	if note := oneshot.MissingNICNote(res.Problems); note != "" {
		fmt.Fprintf(g.stdout, "  ~  %s\n", termsafe.String(note))
	}
	passes := ""
	if len(res.FollowUps) > 0 {
		passes = fmt.Sprintf(" in %d passes", len(res.FollowUps)+1)
	}
	switch failed := len(res.Problems); {
	case len(res.Ops) == 0 && failed == 0 && res.Err == nil:
		fmt.Fprintln(g.stdout, "no changes: the kernel already matches the intent")
	case failed == 0 && res.Err == nil:
		fmt.Fprintf(g.stdout, "plan: %s%s\n", plural.N(len(res.Ops), "operation"), passes)
	case res.Err == nil && oneshot.CarrierWaits(res) != nil:
		fmt.Fprintf(g.stdout, "plan: %s%s; %s for the carrier of a link it sets up (apply waits for it)\n", plural.N(len(res.Ops), "operation"), passes, plural.Of(failed, "item waits", "items wait"))
	default:
		fmt.Fprintf(g.stdout, "plan: %s%s; %s would not converge (predicted to fail or blocked)\n", plural.N(len(res.Ops), "operation"), passes, plural.N(failed, "item"))
	}
}

func printPlanJSON(g *globals, res *host.PlanResult) error {
	return printPlanJSONGuarded(g, res, &oneshot.Guarded{Guarded: &host.Guarded{}})
}

// printPlanJSONGuarded prints the plan with what the protection of links
// decided.
func printPlanJSONGuarded(g *globals, res *host.PlanResult, gd *oneshot.Guarded) error {
	return writeJSON(g, oneshot.PlanDocOf(res, gd))
}
