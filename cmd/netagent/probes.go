package main

import (
	"context"

	"github.com/netagent/netagent/agent/host"
	"github.com/netagent/netagent/agent/probe"
	"github.com/netagent/netagent/internal/netnsx"
)

// parseProbe parses a --probe spec (agent/probe) into a check run inside
// the target namespace t.
func parseProbe(spec string, t *netnsx.Target) (host.Prober, error) {
	p, err := probe.Parse(spec)
	if err != nil {
		return nil, err
	}
	return inTarget{p: p, t: t}, nil
}

// inTarget runs a probe in the target namespace.
type inTarget struct {
	p probe.Probe
	t *netnsx.Target
}

func (p inTarget) Probe(ctx context.Context) error { return p.p.Run(ctx, p.t) }
func (p inTarget) String() string                  { return p.p.String() }
