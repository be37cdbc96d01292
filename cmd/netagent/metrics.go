package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/sirupsen/logrus"

	"github.com/netagent/netagent/agent"
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
	socket := fs.String("socket", defaultSocket, "unix socket of the daemon's API")
	timeout := fs.Duration("timeout", 30*time.Second, "how long to wait for the daemon")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() > 0 {
		return usageError(g, fs, "unexpected arguments")
	}
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	resp, err := api.Call(ctx, *socket, api.Request{Command: api.CmdMetrics})
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

// metricsServer serves the daemon's metrics over HTTP at /metrics
// (--metrics-listen). It listens in the network namespace the process runs
// in, not the one --netns manages: the daemon acts on that one through
// netlink handles, and stays where it was started.
type metricsServer struct {
	ln  net.Listener
	srv *http.Server
}

// listenMetrics adds the Go runtime's and the process's collectors to a's
// metrics, and listens on addr ("": no server).
func listenMetrics(addr string, a *agent.Agent) (*metricsServer, error) {
	if err := a.Metrics().Register(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{})); err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	if addr == "" {
		return nil, nil
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", a.Metrics().Handler())
	return &metricsServer{ln: ln, srv: &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}}, nil
}

// serve serves until ctx ends, then shuts the server down.
func (m *metricsServer) serve(ctx context.Context, log logrus.FieldLogger) {
	if m == nil {
		return
	}
	stop := context.AfterFunc(ctx, func() {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		m.srv.Shutdown(sctx)
	})
	defer stop()
	log.WithField("metrics_listen", m.ln.Addr().String()).Info("serving metrics at /metrics")
	if err := m.srv.Serve(m.ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		log.WithError(err).Error("the metrics server stopped")
	}
}
