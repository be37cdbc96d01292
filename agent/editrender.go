package agent

import (
	"context"
	"maps"
	"reflect"
	"time"

	"github.com/netagent/netagent/agent/host"
	"github.com/netagent/netagent/agent/intent"
	"github.com/netagent/netagent/agent/render"
	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/internal/graphwalk"
)

// adoptEdit adopts next by rendering only what changed, when that is one
// document's routes (render.RenderRouteEdit): at 100k routes a one-route
// edit then costs the reconciler, the Guard and the drift policies the
// changed items, not a merge, validation and render of every object and a
// walk of the intended graph to sync it. It reports false, having changed
// nothing, when the edit is anything else or the state is one the full
// path (adopt) must handle: a renderer of the Config's (not the agent's
// own, with its leases), not a source's change (a trial's revert, a
// reload, the socket API), a pending trial, a rollback in force, orphans
// kept by the Guard, a conflict, a document new or gone, or an edit the
// Guard refuses or would keep orphans for. Both paths give the same
// intended graph (TestAdoptEditMatchesFullRender).
func (a *Agent) adoptEdit(next *docSet, reason string) bool {
	s := a.st
	if !a.ownRender || reason != reasonIntent || !next.rendered || s.current == nil || s.trial != nil || a.hist.override != nil || len(s.orphans) > 0 {
		return false
	}
	if !maps.Equal(s.renderedWith, s.leases.V4.Used()) {
		return false // the leases changed since the graph was rendered
	}
	cand := next.candidates()
	name, ok := onlyEdited(next, cand)
	if !ok {
		return false
	}
	facts := a.leaseFacts(cand)
	if !reflect.DeepEqual(hostFacts(facts), a.renderedFacts) {
		return false // the target's facts changed since the graph was rendered
	}
	edit, ok := render.RenderRouteEdit(cand, name, next.docs[name].good, facts, s.intended.Contains)
	if !ok {
		return false
	}
	undo := keepBefore(s.intended, edit)
	edit.Apply(s.intended)
	if !a.judgeEdit(cand) {
		undo()
		return false
	}
	s.policy.rendered = editedPolicies(s.policy.adopted, edit)
	next.commit(cand, map[string][]string{}, time.Now())
	a.log.WithFields(map[string]any{"file": name, "removed": len(edit.Removed), "added": len(edit.Added)}).
		Debug("intent edit rendered on its own")
	a.adoptResolved(next, resolution{changed: true, graph: s.intended}, reason)
	return true
}

// onlyEdited returns the one document whose candidate is a new parse of an
// accepted one, when no other document changed and none has a conflict.
func onlyEdited(next *docSet, cand map[string]*intent.Intent) (string, bool) {
	name := ""
	for n, d := range next.docs {
		if len(d.conflicts) > 0 {
			return "", false
		}
		if !next.fresh(cand, n) {
			continue
		}
		if name != "" || d.good == nil || d.parsed == nil || cand[n] != d.parsed {
			return "", false
		}
		name = n
	}
	return name, name != ""
}

// judgeEdit has the Guard judge the intended graph with an edit applied,
// as the full path does, and keeps its Judgement for adopted. It reports
// false when the Guard fails, refuses or keeps orphans: the full path
// handles those.
func (a *Agent) judgeEdit(files map[string]*intent.Intent) bool {
	s := a.st
	if a.cfg.Guard == nil {
		return true
	}
	j, err := a.cfg.Guard.Judge(context.Background(), s.current, s.intended, render.ProtectedLinks(files))
	if err != nil || len(j.Refused) > 0 || len(j.Orphans) > 0 || (j.Intended != nil && j.Intended != s.intended) {
		return false
	}
	s.judged = &host.Guarded{Intended: s.intended, Protected: j.Protected}
	return true
}

// keepBefore returns a function that puts back into g what it holds now
// at the references an edit touches.
func keepBefore(g *dg.Graph, edit render.RouteEdit) (undo func()) {
	type before struct {
		ref   dg.ItemRef
		item  dg.Item
		scope string
	}
	var kept []before
	keep := func(ref dg.ItemRef) {
		it, _ := g.Get(ref)
		scope, _ := g.ScopeOf(ref)
		kept = append(kept, before{ref, it, scope})
	}
	for _, ref := range edit.Removed {
		keep(ref)
	}
	for _, it := range edit.Added {
		keep(dg.Ref(it))
	}
	return func() {
		for i := len(kept) - 1; i >= 0; i-- {
			b := kept[i]
			if b.item == nil {
				g.Delete(b.ref)
				continue
			}
			graphwalk.Into(g, b.scope).PutAt(g.NodeFor(b.ref), b.item, dg.StateData{State: dg.StateCreated})
		}
	}
}

// editedPolicies returns the drift policies adopted with an edit applied.
func editedPolicies(adopted render.DriftPolicies, edit render.RouteEdit) render.DriftPolicies {
	if len(adopted) == 0 && len(edit.Drifts) == 0 {
		return nil
	}
	out := maps.Clone(adopted)
	if out == nil {
		out = render.DriftPolicies{}
	}
	for _, ref := range edit.Removed {
		delete(out, ref)
	}
	maps.Copy(out, edit.Drifts)
	return out
}

// hostFacts is facts without the DHCPv4 leases (adoptEdit compares those
// with the leases in use): what the full render last saw of the target.
func hostFacts(facts render.Facts) render.Facts {
	facts.Leases = nil
	return facts
}
