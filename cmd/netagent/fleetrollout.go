//go:build !nofleet

package main

// `netagent fleet rollout`: the rollout controller (package agent/rollout)
// and its operator commands. start writes the rollout's state (and with
// --follow runs the controller until the rollout ends); status, approve,
// halt, resume and abort read or change the state in etcd.

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/netagent/netagent/agent/rollout"
	"github.com/netagent/netagent/internal/termsafe"
)

func init() {
	fleetSubs["rollout"] = fleetSub{
		"push a document to the fleet's hosts in waves of trials that halt themselves (docs/fleet.md, Rollouts)",
		"start [--follow] FILE | status [ID] [--json] | approve|halt|resume|abort ID | exclude ID HOST", runFleetRollout}
}

// rolloutPoll is how often a following controller looks at the hosts
// (a variable for tests).
var rolloutPoll = 2 * time.Second

// rolloutOps are the commands that change a rollout's state.
var rolloutOps = map[string]func(context.Context, *fleetConn, string) (*rollout.State, error){
	"approve": func(ctx context.Context, c *fleetConn, id string) (*rollout.State, error) {
		return rollout.Approve(ctx, c.client.Store(), c.client.Layout(), id)
	},
	"halt": func(ctx context.Context, c *fleetConn, id string) (*rollout.State, error) {
		return rollout.Halt(ctx, c.client.Store(), c.client.Layout(), id)
	},
	"resume": func(ctx context.Context, c *fleetConn, id string) (*rollout.State, error) {
		return rollout.Resume(ctx, c.client.Store(), c.client.Layout(), id)
	},
	"abort": func(ctx context.Context, c *fleetConn, id string) (*rollout.State, error) {
		return rollout.Abort(ctx, c.client.Store(), c.client.Layout(), id)
	},
}

func runFleetRollout(g *globals, args []string) int {
	fs := newFlagSet(g, "fleet rollout", fleetSubs["rollout"].usage)
	c := &fleetConn{}
	c.connFlags(fs)
	follow := fs.Bool("follow", false, "start: run the controller until the rollout completes (exit 0), halts or is aborted (exit 1)")
	asJSON := fs.Bool("json", false, "status: print the rollouts as JSON")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() == 0 {
		return usageError(g, fs, "which? start, status, approve, halt, resume or abort")
	}
	verb, rest := fs.Arg(0), fs.Args()[1:]
	if err := c.check(false, false); err != nil {
		return usageError(g, fs, err.Error())
	}
	switch {
	case verb == "start" && len(rest) == 1:
		return rolloutStart(g, fs, c, rest[0], *follow)
	case verb == "status" && len(rest) <= 1:
		return rolloutStatus(g, fs, c, rest, *asJSON)
	case rolloutOps[verb] != nil && len(rest) == 1:
		return rolloutOp(g, fs, c, verb, rest[0], "")
	case verb == "exclude" && len(rest) == 2:
		return rolloutOp(g, fs, c, verb, rest[0], rest[1])
	}
	return usageError(g, fs, fmt.Sprintf("%q with %d arguments: want start FILE, status [ID], approve|halt|resume|abort ID, or exclude ID HOST", verb, len(rest)))
}

func rolloutStart(g *globals, fs *flag.FlagSet, c *fleetConn, file string, follow bool) int {
	spec, data, err := rollout.ReadFile(file)
	if err != nil {
		fmt.Fprintf(g.stderr, "netagent: fleet rollout: %v\n", err)
		return exitFailed
	}
	ctx, done, code, ok := c.open(g, fs)
	if !ok {
		return code
	}
	defer done()
	s, err := rollout.Start(ctx, c.client.Store(), c.client.Layout(), spec, data, time.Now())
	if err != nil {
		return rolloutFail(g, c, err)
	}
	if !follow {
		rolloutPrint(g.stdout, rollout.Summarize(s, time.Now()))
		return exitOK
	}
	return rolloutFollow(g, c, spec.Rollout)
}

// rolloutFollow runs the controller until the rollout ends or stops.
func rolloutFollow(g *globals, c *fleetConn, id string) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctrl := &rollout.Controller{Store: c.client.Store(), Layout: c.client.Layout(), ID: id, Owner: rolloutOwner(), Clock: wallClock{},
		Watch: rollout.WatchStatuses(ctx, c.client.Store(), c.client.Layout()), Preflight: rolloutPreflight(c)}
	var last string
	r, err := ctrl.Run(ctx, rolloutPoll, sleepCtx, func(r rollout.Result) {
		if r.State == nil {
			return
		}
		line := rolloutLine(rollout.Summarize(r.State, time.Now()))
		if line != last {
			fmt.Fprintln(g.stdout, line)
			last = line
		}
	})
	release, cancel := context.WithTimeout(context.Background(), c.timeout)
	ctrl.Release(release) // best effort: else the lease expires by itself
	cancel()
	if err != nil && ctx.Err() != nil {
		fmt.Fprintf(g.stderr, "netagent: fleet rollout: %s stopped by a signal in phase %s; start it again to resume\n", id, r.Phase)
		return exitFailed
	}
	if err != nil {
		return rolloutFail(g, c, err)
	}
	if r.Phase != rollout.PhaseCompleted {
		return exitFailed
	}
	return exitOK
}

// rolloutLine is one line of a following controller's progress.
func rolloutLine(s rollout.Summary) string {
	termsafe.Sanitize(&s)
	line := fmt.Sprintf("%s: %s", s.Rollout, s.Phase)
	for _, w := range s.Waves {
		if w.Name == s.Wave {
			line += fmt.Sprintf(", wave %s %s: %s", w.Name, w.State, w.CountsText())
			if w.BakeLeft != "" {
				line += ", bake left " + w.BakeLeft
			}
		}
	}
	if s.Reason != "" {
		line += " (" + s.Reason + ")"
	}
	return line
}

// rolloutPreflight plans each wave's hosts against the snapshots they
// publish before the wave starts.
func rolloutPreflight(c *fleetConn) *rollout.Preflight {
	return &rollout.Preflight{Snapshots: rollout.StoreSnapshots{Store: c.client.Store(), Layout: c.client.Layout()}, Planner: rollout.OfflinePlanner{}}
}

type wallClock struct{}

func (wallClock) Now() time.Time { return time.Now() }

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// rolloutOwner names this controller in the rollout's lease.
func rolloutOwner() string {
	host, _ := os.Hostname()
	b := make([]byte, 4)
	rand.Read(b)
	return fmt.Sprintf("%s/%d/%s", host, os.Getpid(), hex.EncodeToString(b))
}

func rolloutStatus(g *globals, fs *flag.FlagSet, c *fleetConn, ids []string, asJSON bool) int {
	ctx, done, code, ok := c.open(g, fs)
	if !ok {
		return code
	}
	defer done()
	var states []*rollout.State
	if len(ids) == 1 {
		s, _, err := rollout.Load(ctx, c.client.Store(), c.client.Layout(), ids[0])
		if err != nil {
			return rolloutFail(g, c, err)
		}
		states = append(states, s)
	} else {
		var err error
		if states, err = rollout.List(ctx, c.client.Store(), c.client.Layout()); err != nil {
			return rolloutFail(g, c, err)
		}
	}
	var sums []rollout.Summary
	for _, s := range states {
		sums = append(sums, rollout.Summarize(s, time.Now()))
	}
	if asJSON {
		if writeJSON(g, sums) != nil {
			return exitInternal
		}
		return exitOK
	}
	if len(sums) == 0 {
		fmt.Fprintln(g.stdout, "no rollouts")
	}
	for _, s := range sums {
		rolloutPrint(g.stdout, s)
	}
	return exitOK
}

// rolloutPrint writes a rollout's summary: a line, then a table of waves.
func rolloutPrint(w io.Writer, s rollout.Summary) {
	termsafe.Sanitize(&s)
	fmt.Fprintf(w, "rollout %s (%s): %s\n", s.Rollout, s.Document, s.Phase)
	if s.Reason != "" {
		fmt.Fprintln(w, "  "+s.Reason)
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "  WAVE\tSTATE\tHOSTS\tTOLERANCE\tBAKE LEFT\tPRE-FLIGHT\tCOUNTS")
	for _, ws := range s.Waves {
		fmt.Fprintf(tw, "  %s\t%s\t%d\t%d\t%s\t%s\t%s\n", ws.Name, ws.State, ws.Hosts, ws.Tolerance, ws.BakeLeft, ws.Preflight, ws.CountsText())
	}
	tw.Flush()
	for _, ws := range s.Waves {
		for _, f := range ws.Findings {
			fmt.Fprintf(w, "  pre-flight %s: %s %s: %s\n", ws.Name, f.Host, f.Verdict, f.Detail)
		}
		if len(ws.Excluded) > 0 {
			fmt.Fprintf(w, "  excluded from %s: %s\n", ws.Name, strings.Join(ws.Excluded, ", "))
		}
	}
}

func rolloutOp(g *globals, fs *flag.FlagSet, c *fleetConn, verb, id, host string) int {
	ctx, done, code, ok := c.open(g, fs)
	if !ok {
		return code
	}
	defer done()
	var s *rollout.State
	var err error
	if verb == "exclude" {
		s, err = rollout.Exclude(ctx, c.client.Store(), c.client.Layout(), id, host)
	} else {
		s, err = rolloutOps[verb](ctx, c, id)
	}
	if err != nil {
		return rolloutFail(g, c, err)
	}
	rolloutPrint(g.stdout, rollout.Summarize(s, time.Now()))
	return exitOK
}

// rolloutFail prints err and returns its exit code: 5 for a lease held
// by another controller or a state that changed, 1 for a rollout that
// does not exist, has ended or differs, 3 for etcd.
func rolloutFail(g *globals, c *fleetConn, err error) int {
	if errors.Is(err, rollout.ErrLeaseHeld) {
		fmt.Fprintf(g.stderr, "netagent: fleet rollout: %v\n", err)
		return exitConflict
	}
	if slices.ContainsFunc([]error{rollout.ErrNoRollout, rollout.ErrFinished, rollout.ErrExists, rollout.ErrNoGate, rollout.ErrNotInWave}, func(e error) bool { return errors.Is(err, e) }) {
		fmt.Fprintf(g.stderr, "netagent: fleet rollout: %v\n", err)
		return exitFailed
	}
	return c.fail(g, "rollout", err)
}
