package oneshot

import (
	"context"

	"github.com/netagent/netagent/agent/host"
	dg "github.com/netagent/netagent/depgraph"
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
