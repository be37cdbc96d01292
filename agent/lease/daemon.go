package lease

import (
	"context"
	"time"

	"github.com/netagent/netagent/agent/render"
	"github.com/netagent/netagent/agent/status"
	"github.com/netagent/netagent/configurators/dhcp"
	"github.com/netagent/netagent/configurators/dhcp6"
	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/items/lease4"
	"github.com/netagent/netagent/reconciler"
)

// Schedulers are the daemon's two: DHCPv4 and DHCPv6 (each nil when its
// family is not configured). The methods do for both what the Scheduler
// methods of the same name do for one.
type Schedulers struct {
	V4 *Scheduler[*lease4.Lease]
	V6 *Scheduler[*dhcp6.Lease]
}

// Families are what the daemon runs schedulers of: each family's book
// (nil: the family is not configured), client (nil: nothing extends its
// leases) and lease events' counter.
type Families struct {
	Leases4  *dhcp.Leases
	Client4  Client4
	Observe4 func(ifname, event string)
	Leases6  *dhcp6.Leases
	Client6  Client6
	Observe6 func(ifname, event string)
}

// NewSchedulers returns the schedulers of the families configured, with
// cfg (Observe from f), seeded with the leases kept at now (Seed).
func NewSchedulers(f Families, cfg Config, now time.Time) Schedulers {
	var s Schedulers
	if f.Leases4 != nil {
		cfg.Observe = f.Observe4
		s.V4 = New[*lease4.Lease](V4{Client: f.Client4}, f.Leases4, cfg)
		s.V4.Seed(now)
	}
	if f.Leases6 != nil {
		cfg.Observe = f.Observe6
		s.V6 = New[*dhcp6.Lease](V6{Client: f.Client6}, f.Leases6, cfg)
		s.V6.Seed(now)
	}
	return s
}

// Next returns when the soonest lease of either family is due.
func (s Schedulers) Next() time.Time {
	a, b := s.V4.Next(), s.V6.Next()
	if a.IsZero() || (!b.IsZero() && b.Before(a)) {
		return b
	}
	return a
}

func (s Schedulers) Due(ctx context.Context, g Graphs) Changes {
	return s.V4.Due(ctx, g).Or(s.V6.Due(ctx, g))
}

func (s Schedulers) TakeRestarts() []dg.ItemRef {
	return append(s.V4.TakeRestarts(), s.V6.TakeRestarts()...)
}

// Facts adds the leases in use to f, render's facts: the DHCPv4 leases,
// and, with DHCPv6 configured, the DHCPv6 addresses and DNS in place of
// f's own.
func (s Schedulers) Facts(f *render.Facts) {
	f.Leases = s.V4.Used()
	if s.V6 != nil {
		facts6(s.V6.Used(), f)
	}
}

func (s Schedulers) Statuses() []status.LeaseStatus {
	return append(s.V4.Statuses(), s.V6.Statuses()...)
}

// Refusals returns what g leaves out of the leases in use of both
// families, by lease item.
func (s Schedulers) Refusals(g *dg.Graph) map[dg.ItemRef]string {
	out := s.V4.Refusals(g)
	if out == nil {
		out = map[dg.ItemRef]string{}
	}
	for ref, why := range s.V6.Refusals(g) {
		out[ref] = why
	}
	return out
}

func (s Schedulers) CountUnusable(ops []reconciler.OpLogEntry) {
	s.V4.CountUnusable(ops)
	s.V6.CountUnusable(ops)
}
