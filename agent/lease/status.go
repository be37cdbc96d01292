package lease

import (
	"maps"
	"slices"

	"github.com/netagent/netagent/agent/render"
	"github.com/netagent/netagent/agent/status"
	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/reconciler"
)

// Statuses lists the leases in use, by interface.
func (s *Scheduler[L]) Statuses() []status.LeaseStatus {
	if s == nil {
		return nil
	}
	var out []status.LeaseStatus
	for _, name := range slices.Sorted(maps.Keys(s.used)) {
		l := s.used[name]
		ls := s.fam.Row(l)
		ls.Interface, ls.RenewAt, ls.RebindAt, ls.Expires = name, l.RenewAt(), l.RebindAt(), l.Expires()
		ls.Held, ls.LastError, ls.Refused = s.book.Get(name) == l, s.lastError[name], s.refused[name]
		out = append(out, ls)
	}
	return out
}

// Refusals takes from g, the graph being adopted, what it leaves out of
// each lease in use (render.LeaseRefused: the server offered what would
// take over the intent's own networks), by lease item, and logs each new
// reason once. It reads g's own lease items: the intended graph keeps an
// item that is Equal, and Refused is no part of that.
func (s *Scheduler[L]) Refusals(g *dg.Graph) map[dg.ItemRef]string {
	if s == nil {
		return nil
	}
	out, seen := map[dg.ItemRef]string{}, map[string]string{}
	for name := range s.used {
		ref := s.info.Ref(name)
		why := render.LeaseRefused(g, ref)
		if why == "" {
			continue
		}
		if s.refused[name] != why {
			s.cfg.Log.WithField("item", ref.String()).Warn("lease refused in part or whole: " + why)
		}
		out[ref], seen[name] = why, why
	}
	s.refused = seen
	return out
}

// CountUnusable counts, as the lease event invalid, each acquisition of
// a reconcile's operations that a server answered with a lease no host
// can take (Family.Unusable): the lease item failed, and status names the
// address.
func (s *Scheduler[L]) CountUnusable(ops []reconciler.OpLogEntry) {
	if s == nil {
		return
	}
	kind := s.info.Ref("").Type
	for _, e := range ops {
		if e.Ref.Type == kind && s.fam.Unusable(e.Err) {
			s.cfg.Observe(e.Ref.Name, "invalid")
		}
	}
}
