package main

import (
	"fmt"
)

func init() {
	register(&command{
		name:    "check",
		summary: "compare the running state with the intent files, attribute by attribute",
		usage:   "[--netns NAME] [--protect LINK]... FILE...",
		run:     runCheck,
	})
}

func runCheck(g *globals, args []string) int {
	fs := newFlagSet(g, "check", "FILE...")
	k := kernelFlags(g, fs)
	k.gateFlags(fs, false, checkViaDaemon(g))
	prot := protectFlags(fs, false)
	intended, rt, code := k.prepare(g, fs, args)
	if rt == nil {
		return code
	}
	defer rt.Close()
	gd, code := prot.guard(g, k, rt, intended)
	if gd == nil {
		return code
	}
	prot.orphanLines(g, gd, "note: ") // kept on purpose: not a difference
	rep, err := rt.Check(gd.apply)
	if err != nil {
		fmt.Fprintf(g.stderr, "netagent: check: %v\n", err)
		return exitInternal
	}
	for _, f := range rep.Foreign {
		fmt.Fprintf(g.stdout, "note: %s: left alone\n", f)
	}
	if rep.Converged() {
		fmt.Fprintf(g.stdout, "ok: running matches intended (%d items)\n", len(intended.Refs()))
		return exitOK
	}
	for _, d := range rep.Diffs {
		fmt.Fprintln(g.stdout, d)
	}
	fmt.Fprintf(g.stdout, "%d items differ from the intent\n", len(rep.Diffs))
	return exitFailed
}
