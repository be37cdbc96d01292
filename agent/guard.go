package agent

import (
	"context"
	"errors"
	"slices"

	"github.com/netagent/netagent/agent/host"
	"github.com/netagent/netagent/agent/intent"
	"github.com/netagent/netagent/agent/render"
	"github.com/netagent/netagent/agent/status"
	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/internal/graphwalk"
)

// Guard judges every set of intent documents the agent would adopt (from
// its sources or the socket API), after rendering and before anything
// changes. The daemon backs it with the protected links
// (oneshot.NewDaemonGuard over agent/host's judgement).
type Guard interface {
	// Judge judges intended, rendered from documents that mark the links
	// protected "protected": true. current is the agent's current state,
	// nil before the first read-back (Judge then reads the kernel
	// itself). Judge must not remember anything: a plan or a check judges
	// too. The judgement's Intended is the graph to adopt (nil: intended
	// as it is); its Refused reject the change like an invalid document:
	// the document that holds (or held) each refused item keeps its
	// previous version, and the refusal is its problem in status.
	Judge(ctx context.Context, current, intended *dg.Graph, protected []string) (*host.Guarded, error)
	// Adopted is told when the agent adopts the graph of a judgement;
	// current is the agent's current state (nil before the first
	// read-back).
	Adopted(current *dg.Graph, j *host.Guarded)
}

// renderer is the Renderer resolve uses: Config.Render, then the Guard.
// The Judgement of the last graph it returned is kept (a.st.judged), for
// adopted to take when the loop adopts that graph: resolve returns the
// graph of its last render.
func (a *Agent) renderer() Renderer { return a.driftRenderer(a.guardRenderer()) }

func (a *Agent) guardRenderer() Renderer {
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
		j, err := a.cfg.Guard.Judge(context.Background(), cur, g, render.ProtectedLinks(files))
		if err != nil {
			return nil, err
		}
		if len(j.Refused) > 0 {
			return nil, a.blameRefusals(g, j.Refused)
		}
		j = &host.Guarded{Intended: j.Intended, Orphans: slices.Clone(j.Orphans), Refused: j.Refused, Protected: j.Protected}
		if j.Intended == nil {
			j.Intended = g
		}
		if a.st != nil {
			a.st.judged = j
		}
		return j.Intended, nil
	}
}

// blameRefusals turns refusals into errors naming the document that holds
// the item in the new graph g, or held it in the adopted one (a removal),
// so that resolve takes back only that document's change.
func (a *Agent) blameRefusals(g *dg.Graph, refused []host.Refusal) error {
	errs := make([]error, 0, len(refused))
	for _, r := range refused {
		file := status.FileOf(g, r.Ref)
		if file == "" && a.st != nil {
			file = status.FileOf(a.st.intended, r.Ref)
		}
		errs = append(errs, &intent.FieldError{File: file, Msg: "refused: " + r.Why + " (it would disrupt a protected link)"})
	}
	return errors.Join(errs...)
}

// adopted takes in the orphans of g, the graph the loop adopted, and
// tells the Guard. The orphans g declares again are read back with g as
// the hint: the current state holds them as read back without one (after
// a restart), spelled differently from the intent, which would make the
// reconcile modify them for nothing.
func (a *Agent) adopted(g *dg.Graph) {
	s := a.st
	a.adoptDrift(g)
	if a.cfg.Guard == nil {
		return
	}
	prev := s.orphans
	s.orphans = nil
	j := s.judged
	s.judged = nil
	if j == nil || j.Intended != g {
		return // not judged (a rollback in force the Guard failed to judge, history.go): no orphans
	}
	s.orphans = j.OrphanReasons()
	a.cfg.Guard.Adopted(s.current, j)
	var back []dg.ItemRef
	for ref := range prev {
		if _, still := s.orphans[ref]; !still && g.Contains(ref) {
			back = append(back, ref)
		}
	}
	if len(back) == 0 || s.current == nil {
		return
	}
	fresh, err := a.cfg.Kernel.ReadCurrent(context.Background(), g)
	if err != nil {
		a.log.WithError(err).Warn("reading back the orphans the intent declares again")
		return
	}
	for _, ref := range back {
		it, ok := fresh.Get(ref)
		st, had := s.current.State(ref)
		if !ok || !had {
			continue
		}
		scope, _ := s.current.Root().ScopeOf(ref)
		graphwalk.Into(s.current, scope).PutWithState(it, st)
	}
}
