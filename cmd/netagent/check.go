package main

import (
	"context"
	"fmt"

	"github.com/netagent/netagent/internal/termsafe"

	"github.com/netagent/netagent/agent/intent"
	"github.com/netagent/netagent/agent/oneshot"
	"github.com/netagent/netagent/agent/status"
	"github.com/netagent/netagent/internal/plural"
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
	fs.Lookup("via-daemon").Usage = "when a daemon serves the namespace, have it compare the kernel with the files " +
		"(without files: with its own intent); read-only, the files become no document of the daemon's"
	prot := protectFlags(fs, false)
	o, code, ok := k.parse(g, fs, args, prot)
	if !ok {
		return code
	}
	res, err := oneshot.Check(context.Background(), o, fs.Args(), *all || *asJSON)
	if err != nil {
		return k.failed(g, err, fs.Args())
	}
	if !*asJSON {
		orphanLines(g, res.Guarded, "note: ") // kept on purpose: not a difference
	}
	if *asJSON || *all {
		return printCheckItems(g, res.Items, res.Refused, *asJSON)
	}
	return printChecked(g, res)
}

// printChecked prints check's text: the notes, then every difference, or
// that the kernel matches.
func printChecked(g *globals, res *oneshot.Checked) int {
	for _, f := range res.Report.Foreign {
		fmt.Fprintf(g.stdout, "note: %s: left alone\n", f)
	}
	for _, ref := range res.Ignored {
		fmt.Fprintf(g.stdout, "note: %s: differs, ignored (drift: ignore)\n", ref)
	}
	if res.Outcome() == oneshot.Converged {
		fmt.Fprintf(g.stdout, "ok: running matches intended (%d items)\n", res.Intended.Len())
		return exitOK
	}
	for _, d := range res.Report.Diffs {
		if res.Drift.Of(d.Ref) == intent.DriftReport {
			fmt.Fprintf(g.stdout, "%s (drift: report)\n", d)
			continue
		}
		fmt.Fprintln(g.stdout, d)
	}
	printRefusals(g, res.Refused)
	fmt.Fprintf(g.stdout, "%s from the intent%s\n", differ(len(res.Report.Diffs)), refusedTally(len(res.Refused)))
	return exitFailed
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
	return fmt.Sprintf(", %s refused in part or whole", plural.N(n, "lease"))
}

// differ is "1 item differs" or "N items differ".
func differ(n int) string {
	if n == 1 {
		return "1 item differs"
	}
	return plural.N(n, "item") + " differ"
}
