package agent

import (
	"context"
	"maps"

	"github.com/netagent/netagent/agent/intent"
	dg "github.com/netagent/netagent/depgraph"
)

// Guard judges every set of intent documents the agent would adopt (from
// its sources or the socket API), after rendering and before anything
// changes: it returns the graph to adopt (intended, or a copy with the
// objects to keep as orphans added) and the orphans with why each is kept,
// or an error that rejects the change like an invalid document: the
// changed documents keep their previous version, and the error is their
// problem in status. current is the agent's current state, nil before
// the first read-back (the guard then reads the kernel itself). The daemon
// backs it with the protected links (agent/target.Protection).
type Guard func(ctx context.Context, current, intended *dg.Graph) (*dg.Graph, map[dg.ItemRef]string, error)

// metaOrphans is the graph Meta key under which render leaves the orphans
// the Guard kept, for adoptResolved to take into the loop's state.
const metaOrphans = "agent.orphans"

// renderer is the Renderer resolve uses: Config.Render, then the Guard.
func (a *Agent) renderer() Renderer {
	if a.cfg.Guard == nil {
		return a.cfg.Render
	}
	return func(files map[string]*intent.Intent) (*dg.Graph, error) {
		g, err := a.cfg.Render(files)
		if err != nil {
			return nil, err
		}
		var cur *dg.Graph
		if a.st != nil {
			cur = a.st.current
		}
		kept, orphans, err := a.cfg.Guard(context.Background(), cur, g)
		if err != nil {
			return nil, err
		}
		if kept == g && len(orphans) > 0 {
			kept = g.Root().Clone()
		}
		if len(orphans) > 0 {
			kept.SetMeta(metaOrphans, maps.Clone(orphans))
		}
		return kept, nil
	}
}

// orphansOf returns the orphans the Guard kept in g.
func orphansOf(g *dg.Graph) map[dg.ItemRef]string {
	if g == nil {
		return nil
	}
	o, _ := g.Meta(metaOrphans).(map[dg.ItemRef]string)
	return o
}
