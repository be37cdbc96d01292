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
	"sync"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/netagent/netagent/agent"
	"github.com/netagent/netagent/agent/api"
	"github.com/netagent/netagent/agent/host"
	"github.com/netagent/netagent/agent/intent"
	"github.com/netagent/netagent/agent/oneshot"
	"github.com/netagent/netagent/agent/render"
	"github.com/netagent/netagent/agent/status"
	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/internal/disrupt"
	"github.com/netagent/netagent/internal/termsafe"
	"github.com/netagent/netagent/reconciler"
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
	w, err := agent.Watch(ctx, socket)
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
func printAppliedOps(g *globals, ops reconciler.OperationLog, preds []disrupt.Prediction, all bool) {
	w := bufio.NewWriterSize(g.stdout, 64<<10)
	defer w.Flush()
	for i, e := range ops {
		if !all && i == opsShown {
			fmt.Fprintf(w, "     ... and %d more operations (--all-ops prints every one)\n", len(ops)-i)
			return
		}
		fmt.Fprintf(w, "%3d. %s\n       %s\n", i+1, e, e.Item)
		if i < len(preds) {
			fmt.Fprintf(w, "       %s\n", disruptionLineOf(preds[i]))
		}
	}
}

// applyTally is the end of apply's summary: the operations done and
// failed, the items blocked and how long it took.
func applyTally(res *host.Result, took time.Duration) string {
	t := tallyApply(res)
	s := fmt.Sprintf(": %d done, %d failed, %d blocked", t.done, t.failed, t.blocked)
	if took >= 0 {
		s += " in " + took.Round(time.Millisecond).String()
	}
	return s
}

type applyCounts struct{ done, failed, blocked int }

func tallyApply(res *host.Result) applyCounts {
	var c applyCounts
	for _, e := range res.Ops {
		if e.Err != nil {
			c.failed++
		} else {
			c.done++
		}
	}
	for _, p := range res.Problems {
		if p.Blocked {
			c.blocked++
		}
	}
	return c
}

// applyJSON is what `apply --json` prints.
type applyJSON struct {
	Format    int    `json:"format"`
	Converged bool   `json:"converged"`
	Done      int    `json:"done"`
	Failed    int    `json:"failed"`
	Blocked   int    `json:"blocked"`
	Duration  string `json:"duration"`
	// Disruption is what the operations run did to traffic, in short, as
	// plan's "disruption" (the links that went down, the routes the
	// operations withdrew; protectedTouched is empty: apply refuses to
	// disrupt a protected link unless forced). Absent when the operations
	// could not be lined up with their predictions.
	Disruption *disruptionJSON `json:"disruption,omitempty"`
	// Operations are those run, in order, with what each does to traffic
	// (as plan's) and the error of a failed one.
	Operations []opJSON      `json:"operations"`
	Problems   []problemJSON `json:"problems,omitempty"`
	Error      string        `json:"error,omitempty"`
	// Leases: per interface with dhcp4, the lease held or why none is.
	Leases []oneshot.LeaseReport `json:"leases,omitempty"`
	// Orphans are the objects kept although the intent left them out,
	// because deleting them would disrupt a link it protected (as plan's).
	Orphans []orphanJSON `json:"orphans,omitempty"`
}

// reportApplyJSON prints the outcome of an apply as applyJSON; the exit
// code is reportApply's.
func reportApplyJSON(g *globals, res *host.Applied, took time.Duration) int {
	return reportApplyJSONLeases(g, res, took, nil, nil)
}

// reportApplyJSONLeases is reportApplyJSON with the DHCPv4 leases and
// the orphans of protected links.
func reportApplyJSONLeases(g *globals, applied *host.Applied, took time.Duration, leases []oneshot.LeaseReport, orphans []orphanJSON) int {
	res := &applied.Result
	c := tallyApply(res)
	doc := applyJSON{Format: outputFormat, Converged: res.Converged(), Done: c.done, Failed: c.failed,
		Blocked: c.blocked, Duration: took.Round(time.Millisecond).String(), Operations: opsJSON(res.Ops), Leases: leases, Orphans: orphans}
	for i, p := range applied.Disruptions {
		if i < len(doc.Operations) {
			doc.Operations[i].Disruption = opDisruption(p)
		}
	}
	if applied.Disruptions != nil {
		d := disruptionDocOf(host.SummarizeDisruption(res.Ops, applied.Disruptions, nil), nil)
		doc.Disruption = &d
	}
	for _, p := range res.Problems {
		state := "failed"
		if p.Blocked {
			state = "blocked"
		}
		doc.Problems = append(doc.Problems, problemJSON{Item: p.Ref.String(), State: state, Blocked: p.Blocked, Reason: p.Reason})
	}
	if res.Err != nil && len(res.Problems) == 0 {
		doc.Error = res.Err.Error()
	}
	if writeJSON(g, doc) != nil {
		return exitInternal
	}
	if !res.Converged() {
		return exitFailed
	}
	return exitOK
}

// checkJSON is what `check --json` prints.
type checkJSON struct {
	Format int `json:"format"`
	// Converged: nothing differs (ignored drift aside).
	Converged bool               `json:"converged"`
	Counts    map[string]int     `json:"counts"`
	Items     []status.CheckItem `json:"items"`
	// LeasesRefused: the leases the intent refused in part or whole
	// (not converged: the kernel lacks what the intent asked of them).
	LeasesRefused []status.LeaseRefusal `json:"leasesRefused,omitempty"`
}

// printCheckItems prints every item with its state (check --all), or the
// checkJSON document (--json); exit 1 when something differs. The list
// is the one-shot check's, or the daemon's answer (--via-daemon).
func printCheckItems(g *globals, list []status.CheckItem, refused []status.LeaseRefusal, asJSON bool) int {
	counts, converged := oneshot.CheckCounts(list, refused)
	code := exitOK
	if !converged {
		code = exitFailed
	}
	if asJSON {
		if writeJSON(g, checkJSON{Format: outputFormat, Converged: converged, Counts: counts, Items: list, LeasesRefused: refused}) != nil {
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

// validateDoc is what `validate --json` prints.
type validateDoc struct {
	Format int  `json:"format"`
	Valid  bool `json:"valid"`
	Files  int  `json:"files"`
	// Items is the number of items the intent renders to (valid only).
	Items    int           `json:"items"`
	Problems []problemLine `json:"problems,omitempty"`
}

// problemLine is one problem of an intent: the file, the JSON path of the
// value ("" for the document as a whole) and what is wrong.
type problemLine struct {
	File    string `json:"file,omitempty"`
	Path    string `json:"path,omitempty"`
	Message string `json:"message"`
}

// validateJSON is validate --json: the same checks, the result as
// validateDoc on stdout; exit 1 for an invalid intent, 3 for a file that
// cannot be read (named in problems too).
func validateJSON(g *globals, paths []string) int {
	doc := validateDoc{Format: outputFormat, Files: len(paths)}
	files := make(map[string][]byte, len(paths))
	code := exitOK
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			doc.Problems = append(doc.Problems, problemLine{File: p, Message: err.Error()})
			code = exitInternal
			continue
		}
		files[p] = data
	}
	if code == exitOK {
		parsed, err := render.ParseFiles(files)
		var intended *dg.Graph
		if err == nil {
			intended, err = render.RenderFiles(parsed)
		}
		for _, fe := range intent.FieldErrors(err) {
			doc.Problems = append(doc.Problems, problemLine{File: fe.File, Path: fe.Path, Message: fe.Msg})
		}
		switch {
		case err != nil && len(doc.Problems) == 0:
			doc.Problems = append(doc.Problems, problemLine{Message: err.Error()})
			code = exitFailed
		case err != nil:
			code = exitFailed
		default:
			doc.Valid, doc.Items = true, intended.Len()
		}
	}
	if writeJSON(g, doc) != nil {
		return exitInternal
	}
	return code
}

// progressAfter is how long an apply runs before it shows its progress.
const progressAfter = time.Second

// applyProgress shows, on a terminal's stderr, how far a long apply is:
// the operations run and the items they touched out of the intent's, the
// time it has taken. Nothing when stderr is not a terminal (pipes, CI),
// nor for an apply shorter than progressAfter.
type applyProgress struct {
	w     io.Writer
	total int
	start time.Time
	mu    sync.Mutex
	ops   int
	items map[dg.ItemRef]struct{}
	shown bool
	last  time.Time
}

// progressFor observes an apply's operations when stderr is a terminal
// (nil otherwise); the stop it returns ends the line.
func progressFor(g *globals) oneshot.Progress {
	f, ok := g.stderr.(*os.File)
	if !ok || !isTerminal(f) {
		return nil
	}
	return func(rt *host.Runtime, intended *dg.Graph) func() {
		p := &applyProgress{w: f, total: intended.Len(), start: time.Now(), items: map[dg.ItemRef]struct{}{}}
		rt.ObserveOps(p.op)
		return func() {
			rt.ObserveOps(nil)
			p.end()
		}
	}
}

func (p *applyProgress) op(e reconciler.OpLogEntry) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if e.InProgress {
		return
	}
	p.ops++
	p.items[e.Ref] = struct{}{}
	now := time.Now()
	if now.Sub(p.start) < progressAfter || now.Sub(p.last) < 100*time.Millisecond {
		return
	}
	p.last, p.shown = now, true
	fmt.Fprintf(p.w, "\r%s\033[K", p.line(now))
}

// line is the progress: "apply: 1234 operations, 1200/5000 items, 3s".
func (p *applyProgress) line(now time.Time) string {
	return fmt.Sprintf("apply: %d operations, %d/%d items, %s", p.ops, min(len(p.items), p.total), p.total,
		now.Sub(p.start).Round(100*time.Millisecond))
}

// end clears the progress line, if one was shown.
func (p *applyProgress) end() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.shown {
		fmt.Fprint(p.w, "\r\033[K")
	}
}
