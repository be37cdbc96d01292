package oneshot

import (
	"context"

	"github.com/netagent/netagent/agent/host"
	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/items"
)

// Guarded is what the protection of links decided about a command's
// intent (host.Runtime.Guard), and what to apply.
type Guarded struct {
	*host.Guarded
	Protection host.Protection
	// Apply is the graph to apply: with the orphans, or, forced, the
	// intent as given.
	Apply *dg.Graph
	// Force: the refusals do not stop the command, and the orphans go.
	Force bool
}

// Stops reports whether the refusals stop the command (they are not
// forced).
func (gd *Guarded) Stops() bool { return len(gd.Refused) > 0 && !gd.Force }

// ProtectedTouched lists the protected links that operations disrupt
// (refused, or forced).
func (gd *Guarded) ProtectedTouched() []string {
	if gd == nil || gd.Guarded == nil {
		return nil
	}
	var out []string
	seen := map[string]bool{}
	for _, r := range gd.Refused {
		if !seen[r.Link] {
			seen[r.Link] = true
			out = append(out, r.Link)
		}
	}
	return out
}

// Guard works out the protection of intended (the links of o.Protect and
// those the intent protects) and what it decides.
func Guard(ctx context.Context, o *Options, rt *host.Runtime, protected []string, intended *dg.Graph) (*Guarded, error) {
	prot, err := rt.Protection(o.Protect, protected, host.Declares(intended))
	if err != nil {
		return nil, err
	}
	res, err := rt.Guard(ctx, intended, prot)
	if err != nil {
		return nil, err
	}
	out := &Guarded{Guarded: res, Protection: prot, Apply: res.Intended, Force: o.Force}
	if o.Force {
		out.Apply = intended
	}
	return out, nil
}

// DaemonGuard is the daemon's Guard (agent.Guard): every set of intent
// documents is judged against the protected links (--protect, and
// "protected" in the intent) before the daemon adopts it. A disruption
// rejects the change (the documents keep their previous version; status
// says why); the daemon has no --force. Orphans are kept in the intended
// graph. The links an adopted intent protects are remembered in the state
// directory.
type DaemonGuard struct {
	rt    *host.Runtime
	links []string
}

// NewDaemonGuard returns the daemon's Guard on rt, with the links of
// --protect.
func NewDaemonGuard(rt *host.Runtime, links []string) DaemonGuard {
	return DaemonGuard{rt: rt, links: links}
}

// Judge judges intended against the protected links; current nil: it
// reads the kernel itself.
func (d DaemonGuard) Judge(ctx context.Context, current, intended *dg.Graph, protected []string) (*host.Guarded, error) {
	j := &host.Guarded{Intended: intended, Protected: protected}
	prot, err := d.rt.Protection(d.links, protected, host.Declares(intended))
	if err != nil || prot.Empty() {
		return j, err
	}
	if current == nil {
		if current, err = d.rt.ReadCurrent(intended); err != nil {
			return j, err
		}
	}
	gd := d.rt.GuardCurrent(ctx, current, intended, prot)
	gd.Protected = protected
	return gd, nil
}

// Adopted remembers the links the adopted intent protects (its orphans
// are not declarations).
func (d DaemonGuard) Adopted(current *dg.Graph, j *host.Guarded) {
	orphans := j.OrphanReasons()
	declared := func(name string) bool {
		ref := items.InterfaceRef(name)
		_, orphan := orphans[ref]
		return j.Intended.Contains(ref) && !orphan
	}
	prot, err := d.rt.Protection(d.links, j.Protected, declared)
	if err == nil {
		err = d.rt.Remember(prot, declared, current, false)
	}
	if err != nil {
		d.rt.Log().WithError(err).Warn("remembering the protected links")
	}
}
