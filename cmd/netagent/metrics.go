package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/netagent/netagent/agent/api"
)

func init() {
	register(&command{
		name:    "metrics",
		summary: "print the daemon's metrics in the Prometheus text format (asks it over the socket)",
		usage:   "[--socket PATH]",
		run:     runMetrics,
	})
}

func runMetrics(g *globals, args []string) int {
	fs := newFlagSet(g, "metrics", "[--socket PATH]")
	socket := socketFlag(fs)
	timeout := fs.Duration("timeout", 30*time.Second, "how long to wait for the daemon")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() > 0 {
		return usageError(g, fs, "unexpected arguments")
	}
	h, err := findDaemon(g, *socket)
	if err != nil {
		fmt.Fprintf(g.stderr, "netagent: %v\n", err)
		return exitInternal
	}
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	resp, err := api.Call(ctx, h.Socket, api.Request{Command: api.CmdMetrics})
	if err != nil {
		fmt.Fprintf(g.stderr, "netagent: %v\n", err)
		return exitInternal
	}
	if resp.Error != "" || resp.Metrics == "" {
		fmt.Fprintf(g.stderr, "netagent: the daemon answered: %s\n", firstNonEmpty(resp.Error, "no metrics (a daemon older than the metrics command?)"))
		return exitInternal
	}
	if _, err := io.WriteString(g.stdout, resp.Metrics); err != nil {
		return exitInternal
	}
	return exitOK
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
