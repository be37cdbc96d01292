package main

import (
	"fmt"

	"github.com/netagent/netagent/internal/termsafe"

	"github.com/netagent/netagent/agent/host"
	"github.com/netagent/netagent/agent/intent"
	"github.com/netagent/netagent/agent/render"
	"github.com/netagent/netagent/agent/status"
)

func init() {
	register(&command{
		name:    "check",
		summary: "compare the running state with the intent files, attribute by attribute",
		usage:   "[--netns NAME] [--resolv-conf PATH] [--all] [--json] [--via-daemon] [--protect LINK]... FILE...",
		run:     runCheck,
	})
}

func runCheck(g *globals, args []string) int {
	fs := newFlagSet(g, "check", "FILE...")
	k := kernelFlags(g, fs)
	all := fs.Bool("all", false, "list every item, passing ones too: ok, differs, missing, extra or foreign (like ifquery --check)")
	asJSON := fs.Bool("json", false, "print the result as JSON (see the README's JSON shapes)")
	resolvConfFlag(fs, k)
	k.gateFlags(fs, false, checkViaDaemon(g, all, asJSON))
	prot := protectFlags(fs, false)
	t, code := k.prepare(g, fs, args)
	if t == nil {
		return code
	}
	defer t.Close()
	rt, intended := t.Runtime, t.Graph
	t.Leases.TrustKept(rt) // the kept leases are held: no server is asked
	gd, code := prot.guard(g, t)
	if gd == nil {
		return code
	}
	if !*asJSON {
		orphanLines(g, gd, "note: ") // kept on purpose: not a difference
	}
	rep, err := rt.Check(gd.Apply)
	if err != nil {
		fmt.Fprintf(g.stderr, "netagent: check: %v\n", err)
		return exitInternal
	}
	// A lease's address or routes the intent refused (they would take
	// over its own networks) are not in the kernel: the host is not as
	// the intent asks, even when the kernel matches what was rendered.
	refused := t.Leases.Refusals()
	if *asJSON || *all {
		return printCheckAll(g, intended, rep, t.Intent.Drift, refused, *asJSON)
	}
	for _, f := range rep.Foreign {
		fmt.Fprintf(g.stdout, "note: %s: left alone\n", f)
	}
	rep.Diffs = checkDriftPolicies(g, t.Intent.Drift, rep.Diffs)
	if rep.Converged() && len(refused) == 0 {
		fmt.Fprintf(g.stdout, "ok: running matches intended (%d items)\n", intended.Len())
		return exitOK
	}
	for _, d := range rep.Diffs {
		if p := t.Intent.Drift.Of(d.Ref); p == intent.DriftReport {
			fmt.Fprintf(g.stdout, "%s (drift: report)\n", d)
			continue
		}
		fmt.Fprintln(g.stdout, d)
	}
	printRefusals(g, refused)
	fmt.Fprintf(g.stdout, "%d items differ from the intent%s\n", len(rep.Diffs), refusedTally(len(refused)))
	return exitFailed
}

// checkDriftPolicies leaves out of diffs, as notes, the differences of the
// items whose drift policy is ignore: the operator asked not to hear of
// them. An ignore item missing from the kernel is still a difference: an
// apply creates it.
func checkDriftPolicies(g *globals, policies render.DriftPolicies, diffs []host.Difference) []host.Difference {
	if len(policies) == 0 {
		return diffs
	}
	out := diffs[:0]
	for _, d := range diffs {
		if d.Kind == host.Differs && policies.Of(d.Ref) == intent.DriftIgnore {
			fmt.Fprintf(g.stdout, "note: %s: differs, ignored (drift: ignore)\n", d.Ref)
			continue
		}
		out = append(out, d)
	}
	return out
}

// printRefusals prints check's line of each lease refusal, escaped for a
// terminal (the reasons name what a DHCP server sent).
func printRefusals(g *globals, refused []status.LeaseRefusal) {
	for _, r := range refused {
		fmt.Fprintln(g.stdout, termsafe.String(r.String()))
	}
}

// refusedTally is check's count of the leases refused in part or whole.
func refusedTally(n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf(", %d leases refused in part or whole", n)
}
