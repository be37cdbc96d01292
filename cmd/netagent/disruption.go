package main

// What a plan does to traffic: the summary that heads `plan` (and `diff`),
// the line under each operation, and their JSON.

import (
	"fmt"
	"strings"

	"github.com/netagent/netagent/agent/api"
	"github.com/netagent/netagent/agent/host"
	"github.com/netagent/netagent/agent/oneshot"
	"github.com/netagent/netagent/agent/status"
	"github.com/netagent/netagent/internal/disrupt"
)

// withdrawnShown is how many withdrawn routes the text summary names.
const withdrawnShown = 3

// printDisruption prints the summary of what the plan does to traffic:
// the links that go down and by which operations, the routes withdrawn
// (how many, and the first few), and the protected links touched.
// A result without predictions (Disruptions nil) has no summary.
func printDisruption(g *globals, res *host.PlanResult, protected []string) {
	if len(res.Ops) == 0 || res.Disruptions == nil {
		return
	}
	printSummary(g, status.SummaryOf(host.SummarizeDisruption(res.Ops, res.Disruptions, res.SideEffects)), protected)
}

// printSummary prints the summary d of what a plan does to traffic
// (printDisruption), the one-shot plan's or the daemon's.
func printSummary(g *globals, d status.DisruptionSummary, protected []string) {
	if len(d.LinksDown) == 0 && len(d.RoutesWithdrawn) == 0 && len(d.NeighborsWithdrawn) == 0 && len(protected) == 0 {
		fmt.Fprintln(g.stdout, "disruption: none: no link goes down, no route or neighbour is withdrawn")
		return
	}
	if len(d.LinksDown) == 0 {
		fmt.Fprintln(g.stdout, "disruption: no link goes down")
	}
	for _, l := range d.LinksDown {
		p := disrupt.Prediction{Effect: disrupt.Effect(l.Effect), Certain: true}
		verb := "goes down"
		if !l.Certain {
			verb = "may go down"
		}
		fmt.Fprintf(g.stdout, "disruption: link %s %s (%s): %s\n", l.Link, verb, p.Label(), strings.Join(l.Operations, ", "))
	}
	if len(d.RoutesWithdrawn) == 0 {
		fmt.Fprintln(g.stdout, "disruption: no route is withdrawn")
	}
	var routes, neighbours []string
	for _, w := range d.RoutesWithdrawn {
		routes = append(routes, w.Route)
	}
	for _, w := range d.NeighborsWithdrawn {
		neighbours = append(neighbours, w.Neighbor)
	}
	printWithdrawn(g, routes, "route", "routes")
	printWithdrawn(g, neighbours, "neighbour", "neighbours")
	if len(protected) > 0 {
		fmt.Fprintf(g.stdout, "disruption: protected links touched: %s\n", strings.Join(protected, ", "))
	}
}

// printWithdrawn prints the summary line of what is withdrawn: how many,
// and the first few (none: no line).
func printWithdrawn(g *globals, names []string, one, many string) {
	n := len(names)
	if n == 0 {
		return
	}
	more := ""
	if n > withdrawnShown {
		more = fmt.Sprintf(", and %d more", n-withdrawnShown)
	}
	noun := many
	if n == 1 {
		noun = one
	}
	fmt.Fprintf(g.stdout, "disruption: %d %s withdrawn: %s%s\n", n, noun, strings.Join(names[:min(n, withdrawnShown)], ", "), more)
}

// disruptionLine is the line under an operation: what it does to traffic.
func disruptionLine(res *host.PlanResult, i int) string {
	if i >= len(res.Disruptions) {
		return ""
	}
	return oneshot.DisruptionLine(res.Disruptions[i])
}

// daemonDisruption prints, before the daemon's planned operations, what
// they do to traffic: the daemon's summary as the one-shot plan prints
// its own (printSummary), or, from a daemon that sent none, the links
// they take down.
func daemonDisruption(g *globals, resp *api.Response) {
	if resp.Disruption != nil {
		printSummary(g, *resp.Disruption, nil)
		return
	}
	for _, l := range oneshot.DaemonLinksDown(resp.Operations) {
		fmt.Fprintf(g.stdout, "disruption: link %s goes down: %s\n", l.Link, strings.Join(l.Operations, ", "))
	}
}

// daemonDisruptionLine is the line under one of the daemon's planned
// operations: what it does to traffic.
func daemonDisruptionLine(op api.OpResult) string {
	d := op.Disruption
	if d == nil {
		return ""
	}
	p := disrupt.Prediction{Effect: disrupt.Effect(d.Effect), Certain: d.Certain, Why: d.Why, LinksDown: d.LinksDown}
	return oneshot.DisruptionLine(p)
}
