package main

// The output of the commands for people and for programs: the JSON shapes
// (each with "format": outputFormat, documented in the README), the
// operations apply ran, its progress on a terminal, and the status stream.

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/netagent/netagent/agent/api"
	"github.com/netagent/netagent/agent/host"
	"github.com/netagent/netagent/agent/intent"
	"github.com/netagent/netagent/agent/oneshot"
	"github.com/netagent/netagent/agent/status"
	"github.com/netagent/netagent/agent/versions"
	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/internal/disrupt"
	"github.com/netagent/netagent/internal/plural"
	"github.com/netagent/netagent/internal/progress"
	"github.com/netagent/netagent/internal/termsafe"
	"github.com/netagent/netagent/reconciler"
	"golang.org/x/sys/unix"
)

// outputFormat is the version of the JSON shapes of apply, check,
// validate and status (and of the events of status --watch).
const outputFormat = oneshot.OutputFormat

// statusJSON is what `status --json` prints: the daemon's status with the
// format.
type statusJSON struct {
	Format int `json:"format"`
	*status.Status
}

// watchStatus follows the daemon's status (status --watch): a headline,
// then one line per change, or one JSON object per line with --json,
// until SIGINT/SIGTERM (exit 0) or the daemon goes (exit 4).
func watchStatus(g *globals, socket string, asJSON bool) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return watchEvents(ctx, g, socket, asJSON)
}

func watchEvents(ctx context.Context, g *globals, socket string, asJSON bool) int {
	w, err := api.Watch(ctx, socket)
	if err != nil {
		fmt.Fprintf(g.stderr, "netagent: %v\n", err)
		return exitInternal
	}
	defer w.Close()
	enc := json.NewEncoder(g.stdout)
	for {
		e, err := w.Next()
		switch {
		case ctx.Err() != nil:
			return exitOK
		case errors.Is(err, io.EOF):
			fmt.Fprintln(g.stderr, "netagent: the daemon ended the stream (stopped?)")
			return exitInternal
		case err != nil:
			fmt.Fprintf(g.stderr, "netagent: status --watch: %v\n", err)
			return exitInternal
		}
		if asJSON {
			if enc.Encode(e) != nil {
				return exitInternal
			}
			continue
		}
		termsafe.Sanitize(&e)
		if e.Kind == api.EventStatus && e.Status != nil {
			statusPrintHeadline(g.stdout, e.Status, e.Time)
			fmt.Fprintln(g.stdout, "watching for changes (Ctrl-C ends)")
			continue
		}
		fmt.Fprintf(g.stdout, "%s %s\n", e.Time.Format(time.RFC3339), e)
	}
}

// opsShown is how many operations apply prints unless --all-ops: an
// operator reads a few hundred; 100k routes would be 300k lines (--json
// lists every one).
const opsShown = 1000

// printAppliedOps prints the operations an apply ran as plan prints them:
// numbered, with the item and what the operation does to traffic (preds,
// aligned with ops: predicted as plan predicts, from the state the apply
// read back before it changed anything; an operation without one has no
// traffic line), and a failed one with its error. Unless all, it stops
// after opsShown and says how many more ran.
//
// The lines go through one buffer: unbuffered, each would cost a write(2).
func printAppliedOps(g *globals, ops reconciler.OperationLog, preds []disrupt.Prediction, adopted map[dg.ItemRef]host.Adoption, all bool) {
	w := bufio.NewWriterSize(g.stdout, 64<<10)
	defer w.Flush()
	for i, e := range ops {
		if !all && i == opsShown {
			fmt.Fprintf(w, "     ... and %d more operations (--all-ops prints every one)\n", len(ops)-i)
			return
		}
		fmt.Fprintf(w, "%3d. %s\n       %s\n", i+1, host.OpText(e, adopted), e.Item)
		if i < len(preds) {
			fmt.Fprintf(w, "       %s\n", oneshot.DisruptionLine(preds[i]))
		}
	}
}

// applyTally is the end of apply's summary: the operations done and
// failed, the items blocked and how long it took.
func applyTally(res *host.Result, took time.Duration) string {
	t := oneshot.TallyApply(res)
	s := fmt.Sprintf(": %d done, %d failed, %d blocked", t.Done, t.Failed, t.Blocked)
	if took >= 0 {
		s += " in " + took.Round(time.Millisecond).String()
	}
	return s
}

// reportApplyJSON prints the outcome of an apply as oneshot.ApplyDoc; the exit
// code is reportApply's.
func reportApplyJSON(g *globals, res *host.Applied, took time.Duration) int {
	return reportApplyJSONLeases(g, res, took, nil, nil)
}

// reportApplyJSONLeases is reportApplyJSON with the DHCPv4 leases and
// the orphans of protected links.
func reportApplyJSONLeases(g *globals, applied *host.Applied, took time.Duration, leases []oneshot.LeaseReport, orphans []oneshot.OrphanDoc) int {
	if writeJSON(g, oneshot.ApplyDocOf(applied, took, leases, orphans)) != nil {
		return exitInternal
	}
	if !applied.Converged() {
		return exitFailed
	}
	return exitOK
}

// printCheckItems prints every item with its state (check --all), or the
// oneshot.CheckDoc document (--json); exit 1 when something differs. The list
// is the one-shot check's, or the daemon's answer (--via-daemon).
func printCheckItems(g *globals, list []status.CheckItem, refused []status.LeaseRefusal, asJSON bool) int {
	counts, converged := oneshot.CheckCounts(list, refused)
	code := exitOK
	if !converged {
		code = exitFailed
	}
	if asJSON {
		if writeJSON(g, oneshot.CheckDoc{Format: outputFormat, Converged: converged, Counts: counts, Items: list, LeasesRefused: refused}) != nil {
			return exitInternal
		}
		return code
	}
	termsafe.Sanitize(&list)
	tw := tabwriter.NewWriter(g.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ITEM\tSTATE\tDETAIL")
	for _, ci := range list {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", ci.Item, ci.State, oneshot.CheckDetail(ci))
	}
	tw.Flush()
	printRefusals(g, refused)
	fmt.Fprintf(g.stdout, "%d items: %s%s\n", len(list), oneshot.CheckTally(counts), refusedTally(len(refused)))
	return code
}

// validateJSON is validate --json: the same checks, the result as
// oneshot.ValidateDoc on stdout; exit 1 for an invalid intent, 3 for a file that
// cannot be read (named in problems too).
func validateJSON(g *globals, paths []string) int {
	doc, err := oneshot.ValidateDocOf(paths)
	if writeJSON(g, doc) != nil {
		return exitInternal
	}
	var inv *oneshot.InvalidError
	switch {
	case errors.As(err, &inv):
		return exitFailed
	case err != nil:
		return exitInternal
	}
	return exitOK
}

// progressFor observes an apply's operations when stderr is a terminal
// (nil otherwise); the stop it returns ends the line.
func progressFor(g *globals) oneshot.Progress {
	f, ok := g.stderr.(*os.File)
	if !ok || !isTerminal(f) {
		return nil
	}
	return func(rt *host.Runtime, intended *dg.Graph) func() {
		p := progress.New(f, intended.Len())
		rt.ObserveOps(func(e reconciler.OpLogEntry) {
			if !e.InProgress {
				p.Op(e.Ref)
			}
		})
		return func() {
			rt.ObserveOps(nil)
			p.End()
		}
	}
}

// printRecovered says what the first step found of a pending trial.
func printRecovered(g *globals, r oneshot.Recovered) {
	if r.Recovery != nil {
		fmt.Fprintf(g.stderr, "netagent: %s\n", oneshot.RecoveryNote(r.Recovery))
	}
	if note := r.TrialNote(); note != "" {
		fmt.Fprintf(g.stderr, "netagent: %s\n", note)
	}
}

// printError prints err, prefixed ("apply: "), and returns its exit code:
// an invalid intent's every problem (exitFailed), a usage error, a
// failed revert of a pending trial; anything else is exitInternal.
func printError(g *globals, prefix string, err error) int {
	var inv *oneshot.InvalidError
	var use *oneshot.UsageError
	var rec *oneshot.RecoverError
	switch {
	case errors.Is(err, versions.ErrConflict), errors.Is(err, versions.ErrNotFound):
		return versionError(g, err)
	case errors.As(err, &inv):
		printIntentErrors(g, inv.Err)
		return exitFailed
	case errors.As(err, &use):
		fmt.Fprintf(g.stderr, "netagent: %v\n", use)
		return exitUsage
	case errors.As(err, &rec):
		fmt.Fprintf(g.stderr, "netagent: %v\n", rec)
		if rec.Record != nil {
			fmt.Fprintf(g.stderr, "netagent: recording the failed revert: %v\n", rec.Record)
		}
		return exitInternal
	}
	fmt.Fprintf(g.stderr, "netagent: %s%v\n", prefix, err)
	return exitInternal
}

// printIntentErrors prints every problem of an intent, one per line.
func printIntentErrors(g *globals, err error) {
	fes := intent.FieldErrors(err)
	for _, fe := range fes {
		fmt.Fprintln(g.stderr, fe)
	}
	if len(fes) == 0 {
		fmt.Fprintln(g.stderr, err)
	}
	fmt.Fprintf(g.stderr, "netagent: invalid intent: %s; nothing was changed\n", plural.N(max(len(fes), 1), "problem"))
}

// printRefused prints the refusals of res: forced, or what stops the
// command.
func printRefused(g *globals, res *oneshot.Guarded, prefix string) {
	if len(res.Refused) == 0 {
		return
	}
	if res.Force {
		for _, r := range res.Refused {
			fmt.Fprintf(g.stderr, "%sforced: %s\n", prefix, r.Why)
		}
		return
	}
	fmt.Fprintf(g.stderr, "%srefused: the apply would disrupt a protected link; nothing was changed (--force to apply anyway):\n", prefix)
	for _, r := range res.Refused {
		fmt.Fprintf(g.stderr, "%s  %s\n", prefix, r.Why)
	}
}

// orphansJSON lists the orphans for a JSON document (none when forced:
// they go).
func orphansJSON(res *oneshot.Guarded) []oneshot.OrphanDoc { return res.OrphanDocs() }

// orphanLines prints one line per orphan (forced: that they go).
func orphanLines(g *globals, res *oneshot.Guarded, prefix string) {
	if res.Force {
		for _, o := range res.Orphans {
			fmt.Fprintf(g.stdout, "%s%s: deleted (--force): %s\n", prefix, o.Ref, o.Reason)
		}
		return
	}
	for _, o := range res.Orphans {
		fmt.Fprintf(g.stdout, "%s%s\n", prefix, o)
	}
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

// jsonCode is the exit code of a command whose result writeJSON printed
// (err its error).
func jsonCode(err error) int {
	if err != nil {
		return exitInternal
	}
	return exitOK
}

func isTerminal(f *os.File) bool {
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}
