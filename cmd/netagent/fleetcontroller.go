//go:build !nofleet

package main

// `netagent fleet controller`: the long-running rollout controller
// (rollout.Supervisor): it runs every rollout whose state says running or
// aborting, each under its lease, until SIGTERM or SIGINT, and serves the
// netagent_rollout_* metrics on --metrics-listen.

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/netagent/netagent/agent/metrics"
	"github.com/netagent/netagent/agent/rollout"
)

func init() {
	fleetSubs["controller"] = fleetSub{
		"run every running rollout until SIGTERM (each under its lease), serving netagent_rollout_* metrics",
		"[--metrics-listen ADDR] [--poll D]", runFleetController}
}

func runFleetController(g *globals, args []string) int {
	fs := newFlagSet(g, "fleet controller", fleetSubs["controller"].usage)
	c := &fleetConn{}
	c.connFlags(fs)
	listen := fs.String("metrics-listen", "", "serve the controller's metrics at http://ADDR/metrics (\"\": none)")
	poll := fs.Duration("poll", rolloutPoll, "how often to look for rollouts to run, and for a bake's or a trial's end")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() > 0 {
		return usageError(g, fs, "unexpected arguments")
	}
	if err := c.check(false, false); err != nil {
		return usageError(g, fs, err.Error())
	}
	if *poll < 10*time.Millisecond {
		return usageError(g, fs, "--poll: at least 10ms")
	}
	m := metrics.NewRollouts()
	srv, err := metrics.Listen(*listen, m)
	if err != nil {
		fmt.Fprintf(g.stderr, "netagent: fleet controller: %v\n", err)
		return exitInternal
	}
	_, done, code, ok := c.open(g, fs)
	if !ok {
		return code
	}
	defer done()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	served := make(chan struct{})
	go func() { srv.Serve(ctx, g.log); close(served) }()
	v := &rollout.Supervisor{Store: c.client.Store(), Layout: c.client.Layout(), Owner: rolloutOwner(), Clock: wallClock{},
		Poll: *poll, Sleep: sleepCtx, Log: g.log, Metrics: m, Preflight: rolloutPreflight(c)}
	g.log.WithField("prefix", c.client.Layout().Rollouts()).Info("fleet controller: running the rollouts that are running")
	err = v.Run(ctx)
	<-served
	if err != nil {
		return c.fail(g, "controller", err)
	}
	g.log.Info("fleet controller: stopped")
	return exitOK
}
