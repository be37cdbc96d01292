package metrics

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/sirupsen/logrus"
)

// Server serves a daemon's metrics over HTTP at /metrics (run's
// --metrics-listen). It listens in the network namespace the process runs
// in, not the one the daemon manages: the daemon acts on that one through
// netlink handles, and stays where it was started.
type Server struct {
	ln  net.Listener
	srv *http.Server
}

// Registry is what a Server serves: an agent's Metrics, a controller's
// Rollouts.
type Registry interface {
	Register(cs ...prometheus.Collector) error
	Handler() http.Handler
}

// Listen adds the Go runtime's and the process's collectors to m, and
// listens on addr (""; no server: a nil *Server, whose Serve returns at
// once).
func Listen(addr string, m Registry) (*Server, error) {
	if err := m.Register(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{})); err != nil {
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
	mux.Handle("GET /metrics", m.Handler())
	return &Server{ln: ln, srv: &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}}, nil
}

// Serve serves until ctx ends, then shuts the server down.
func (s *Server) Serve(ctx context.Context, log logrus.FieldLogger) {
	if s == nil {
		return
	}
	stop := context.AfterFunc(ctx, func() {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		s.srv.Shutdown(sctx)
	})
	defer stop()
	log.WithField("metrics_listen", s.ln.Addr().String()).Info("serving metrics at /metrics")
	if err := s.srv.Serve(s.ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		log.WithError(err).Error("the metrics server stopped")
	}
}
