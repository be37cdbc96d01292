package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/netagent/netagent/agent/oneshot"
	"github.com/netagent/netagent/agent/status"
	"github.com/netagent/netagent/agent/trial"
	"github.com/netagent/netagent/agent/versions"
	"github.com/netagent/netagent/internal/plural"
	"github.com/netagent/netagent/internal/termsafe"
)

func init() {
	register(&command{
		name:    "status",
		summary: "show the daemon's status: per intent file and per item (asks it over the socket)",
		usage:   "[--socket PATH] [--json] [--all] [--watch]",
		run:     runStatus,
	})
}

func runStatus(g *globals, args []string) int {
	fs := newFlagSet(g, "status", "[--socket PATH] [--json] [--all] [--watch]")
	socket := socketFlag(fs)
	asJSON := fs.Bool("json", false, "print the status as JSON")
	all := fs.Bool("all", false, "list every item, not only those that are not created")
	timeout := fs.Duration("timeout", 30*time.Second, "how long to wait for the daemon")
	watch := fs.Bool("watch", false, "stream the daemon's status changes, one line (--json: one JSON object) each, until interrupted")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() > 0 {
		return usageError(g, fs, "unexpected arguments")
	}
	h, err := findDaemon(g, *socket)
	var none *oneshot.NoDaemonError
	switch {
	case errors.As(err, &none):
		fmt.Fprintf(g.stderr, "netagent: %v\n", err)
		return oneShotTrialStatus(g, *asJSON) // no daemon: the one-shot try's trial, if any
	case err != nil:
		fmt.Fprintf(g.stderr, "netagent: %v\n", err)
		return exitInternal
	case *watch:
		return watchStatus(g, h.Socket, *asJSON)
	}
	return showStatus(g, h.Socket, *timeout, *asJSON, *all)
}

// showStatus prints the status of the daemon on socket (with asJSON as
// JSON; with all every item), or the one-shot's trial when no daemon
// answers; exitFailed unless the daemon is Ready.
func showStatus(g *globals, socket string, timeout time.Duration, asJSON, all bool) int {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	st, err := oneshot.DaemonStatus(ctx, socket, g.stateDir)
	var refused *oneshot.DaemonRefusedError
	switch {
	case errors.As(err, &refused):
		fmt.Fprintf(g.stderr, "netagent: the daemon answered: %s\n", termsafe.String(refused.Resp.Error))
		return exitInternal
	case err != nil:
		fmt.Fprintf(g.stderr, "netagent: %v\n", err)
		return oneShotTrialStatus(g, asJSON) // no daemon: the one-shot try's trial, if any
	}
	if asJSON {
		if writeJSON(g, statusJSON{Format: outputFormat, Status: st}) != nil {
			return exitInternal
		}
	} else {
		termsafe.Sanitize(st) // names and messages from outside: never lines or escapes of their own
		statusPrint(g.stdout, st, all, time.Now())
	}
	if !st.Ready {
		return exitFailed
	}
	return exitOK
}

// statusPrint writes the status as a headline and two tables: the intent
// files with their conditions, and the items (those not created, or all).
func statusPrint(w io.Writer, st *status.Status, all bool, now time.Time) {
	statusPrintHeadline(w, st, now)
	if st.Override != "" {
		fmt.Fprintf(w, "  %s\n", st.Override)
	}
	statusPrintTrial(w, st.Trial, st.LastTrial, now)
	for _, e := range st.Errors {
		fmt.Fprintf(w, "  error: %s\n", e)
	}
	fmt.Fprintln(w)
	statusPrintFiles(w, st.Files, now)
	fmt.Fprintln(w)
	statusPrintItems(w, st.Items, all, now)
	statusPrintDrifted(w, st.Drifted)
	statusPrintLeases(w, st.Leases, now)
}

// statusPrintLeases lists the DHCP leases in use (DHCPv4, then DHCPv6):
// what each grants, how it was obtained, when it renews and expires, and
// under each what of the server's answer was not used and why its last
// exchange failed (quoted: a server's text never starts a line).
func statusPrintLeases(w io.Writer, list []status.LeaseStatus, now time.Time) {
	if len(list) == 0 {
		return
	}
	const row = "%-10s %-6s %-26s %-15s %-15s %-20s %-9s %-10s %s\n"
	fmt.Fprintf(w, "\n"+row, "LEASE", "FAMILY", "ADDRESS", "SERVER", "GATEWAY", "DNS", "OBTAINED", "RENEW IN", "EXPIRES IN")
	for _, l := range list {
		how := l.Obtained
		if !l.Held {
			how += " (asking)"
		}
		server := l.Server
		if l.Family == "ipv6" && len(server) > 15 {
			server = "duid " + server[len(server)-10:] // a DUID in hex: its end tells servers apart
		}
		fmt.Fprintf(w, row, l.Interface, l.Family, l.Address, orDash(server), orDash(l.Gateway),
			orDash(strings.Join(l.DNS, ",")), orDash(how), until(l.RenewAt, now), until(l.Expires, now))
		for _, d := range l.Dropped {
			fmt.Fprintf(w, "  %s: not used: %s\n", l.Interface, strconv.Quote(d))
		}
		if l.LastError != "" {
			fmt.Fprintf(w, "  %s: last exchange failed: %s\n", l.Interface, strconv.Quote(l.LastError))
		}
	}
	for _, l := range list {
		if l.Refused != "" {
			fmt.Fprintf(w, "lease %s (%s) refused: %s\n", l.Interface, l.Family, l.Refused)
		}
	}
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// until is how long from now to t, "due" when past.
func until(t, now time.Time) string {
	if !t.After(now) {
		return "due"
	}
	return t.Sub(now).Round(time.Second).String()
}

// statusPrintDrifted lists the items left drifted by their policy
// (report): one line per attribute, with the intended and running value.
func statusPrintDrifted(w io.Writer, list []status.DriftStatus) {
	if len(list) == 0 {
		return
	}
	fmt.Fprintf(w, "\n%s drifted, left as they are (drift: report):\n", plural.N(len(list), "item"))
	for _, d := range list {
		if len(d.Fields) == 0 {
			fmt.Fprintf(w, "  %s (%s): %s\n", d.Item, d.File, d.What)
		}
		for _, f := range d.Fields {
			fmt.Fprintf(w, "  %s (%s): %s: intended %s, running %s\n", d.Item, d.File, f.Field, f.Intended, f.Running)
		}
	}
}

func statusPrintHeadline(w io.Writer, st *status.Status, now time.Time) {
	state := "READY"
	if !st.Ready {
		state = "NOT READY"
	}
	fmt.Fprintf(w, "netagent: %s, %d reconciles", state, st.Reconciles)
	if st.Version > 0 {
		fmt.Fprintf(w, ", intent version %d (%s)", st.Version, versions.Short(st.Digest))
	}
	if !st.LastReconcile.IsZero() {
		fmt.Fprintf(w, ", last %s ago (%s)", statusAgo(now, st.LastReconcile), strings.Join(st.LastReasons, ", "))
	}
	if !st.NextRetry.IsZero() {
		fmt.Fprintf(w, ", next retry in %s", statusAgo(st.NextRetry, now))
	}
	fmt.Fprintln(w)
}

func statusPrintFiles(w io.Writer, files []status.FileStatus, now time.Time) {
	if len(files) == 0 {
		fmt.Fprintln(w, "no intent files")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "FILE\tVALID\tCONVERGED\tDEGRADED\tREADY\tITEMS\tSINCE\tMESSAGE")
	for _, f := range files {
		c := f.Conditions
		ready := c[len(c)-1]
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%s\t%s\n", f.Name, statusYesNo(c[0].Status), statusYesNo(c[1].Status),
			statusYesNo(c[2].Status), statusYesNo(ready.Status), f.Items, statusAgo(now, ready.Since), status.FirstMessage(c))
	}
	tw.Flush()
	for _, f := range files {
		for _, e := range f.Errors {
			fmt.Fprintf(w, "  %s\n", e)
		}
	}
}

func statusPrintItems(w io.Writer, list []status.ItemStatus, all bool, now time.Time) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ITEM\tFILE\tSTATE\tLAST OP\tSINCE\tDETAIL")
	hidden := 0
	for _, it := range list {
		if !all && it.State == "created" {
			hidden++
			continue
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", it.Item, it.File, it.State, it.LastOp, statusAgo(now, it.Since), it.Detail())
	}
	tw.Flush()
	if hidden > 0 {
		fmt.Fprintf(w, "%s created (--all lists them)\n", plural.N(hidden, "item"))
	}
}

func statusYesNo(b bool) string {
	if b {
		return "True"
	}
	return "False"
}

// statusAgo renders now-t for a table: "12s", "3m4s", "-" for a zero time.
func statusAgo(now, t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	d := now.Sub(t)
	if d < 0 {
		d = 0
	}
	return d.Round(time.Second).String()
}

// statusPrintTrial writes the pending trial and how the last one ended.
func statusPrintTrial(w io.Writer, t *status.TrialStatus, last *status.TrialOutcome, now time.Time) {
	if t != nil {
		fmt.Fprintf(w, "  trial pending since %s (%s ago), reverts at %s (in %s) unless confirmed",
			t.Since.Format(time.RFC3339), statusAgo(now, t.Since), t.Deadline.Format(time.RFC3339), statusAgo(t.Deadline, now))
		if t.Name != "" {
			fmt.Fprintf(w, "; confirming writes %s", t.Name)
		}
		if t.PID != 0 {
			fmt.Fprintf(w, "; run by pid %d", t.PID)
		}
		if len(t.Probes) > 0 {
			fmt.Fprintf(w, "; probes %s", strings.Join(t.Probes, ", "))
			if t.Probing {
				fmt.Fprint(w, " (running: confirm once they pass)")
			}
		}
		if len(t.FailingBefore) > 0 {
			fmt.Fprintf(w, "; failing before the change, not counted: %s", strings.Join(t.FailingBefore, "; "))
		}
		if t.Settling {
			fmt.Fprint(w, "; waiting for its blocked items")
		}
		if t.KeepPartial {
			fmt.Fprint(w, "; keeps failed items")
		}
		fmt.Fprintln(w)
	}
	if last != nil {
		fmt.Fprintf(w, "  last trial %s", last.Result)
		if !last.At.IsZero() {
			fmt.Fprintf(w, " at %s", last.At.Format(time.RFC3339))
		}
		if last.Reason != "" {
			fmt.Fprintf(w, ": %s", last.Reason)
		}
		if last.File != "" {
			fmt.Fprintf(w, " (%s)", last.File)
		}
		if last.Probe != "" && !last.ProbeFailedAt.IsZero() {
			fmt.Fprintf(w, "; %s failed at %s", last.Probe, last.ProbeFailedAt.Format(time.RFC3339))
			if !last.Deadline.IsZero() {
				fmt.Fprintf(w, ", reverted %s before the deadline", last.Deadline.Sub(last.At).Round(time.Second))
			}
		}
		if len(last.FailingBefore) > 0 {
			fmt.Fprintf(w, "; failing before the change, not counted: %s", strings.Join(last.FailingBefore, "; "))
		}
		fmt.Fprintln(w)
	}
}

// oneShotTrialStatus prints the pending trial and the last outcome of the
// state directory when no daemon answers; exitFailed when it printed them
// (no daemon: not ready), exitInternal when there is none (with --json
// after printing {"daemon": "not running"}).
func oneShotTrialStatus(g *globals, asJSON bool) int {
	st := trial.OneShotStatus(g.stateDir)
	if asJSON {
		code := exitFailed
		if st == nil {
			st, code = &trial.OneShot{Daemon: trial.NotRunning}, exitInternal
		}
		if writeJSON(g, st) != nil {
			return exitInternal
		}
		return code
	}
	if st == nil {
		return exitInternal
	}
	fmt.Fprintf(g.stdout, "netagent: no daemon; state directory %s\n", g.stateDir)
	termsafe.Sanitize(st)
	statusPrintTrial(g.stdout, st.Trial, st.LastTrial, time.Now())
	return exitFailed
}
