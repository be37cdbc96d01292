package main

// A minimal parser of --probe, until agent/probe lands: that package
// replaces this file (parseProbe keeps its signature).

import (
	"context"
	"fmt"
	"net"
	"os/exec"
	"strings"
	"time"

	"github.com/netagent/netagent/agent/target"
	"github.com/netagent/netagent/configurators/netnsx"
)

// parseProbe parses "ping:HOST" or "tcp:HOST:PORT"; the probe runs inside
// the target namespace t.
func parseProbe(s string, t *netnsx.Target) (target.Prober, error) {
	kind, rest, ok := strings.Cut(s, ":")
	switch {
	case ok && kind == "ping" && rest != "":
		return &pingProbe{host: rest, t: t}, nil
	case ok && kind == "tcp":
		if _, _, err := net.SplitHostPort(rest); err != nil {
			return nil, fmt.Errorf("--probe %q: want tcp:HOST:PORT: %v", s, err)
		}
		return &tcpProbe{addr: rest, t: t}, nil
	}
	return nil, fmt.Errorf("--probe %q: want ping:HOST or tcp:HOST:PORT", s)
}

// probeAttempt bounds one attempt of a probe.
const probeAttempt = time.Second

type tcpProbe struct {
	addr string
	t    *netnsx.Target
}

func (p *tcpProbe) String() string { return "tcp:" + p.addr }

func (p *tcpProbe) Probe(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, probeAttempt)
	defer cancel()
	var conn net.Conn
	err := p.t.Do(func() error {
		var err error
		conn, err = (&net.Dialer{}).DialContext(ctx, "tcp", p.addr)
		return err
	})
	if err != nil {
		return fmt.Errorf("probe %s: %w", p, err)
	}
	return conn.Close()
}

type pingProbe struct {
	host string
	t    *netnsx.Target
}

func (p *pingProbe) String() string { return "ping:" + p.host }

func (p *pingProbe) Probe(ctx context.Context) error {
	return p.t.Do(func() error {
		out, err := exec.CommandContext(ctx, "ping", "-n", "-q", "-c", "1", "-W", "1", p.host).CombinedOutput()
		if err != nil {
			return fmt.Errorf("probe %s: %v: %s", p, err, strings.TrimSpace(string(out)))
		}
		return nil
	})
}
