package agent

// Versions of the daemon's intent (package agent/versions): every change
// of the accepted documents' merged intent is recorded as a version, with
// the source "daemon: files a.json,b.json" (the socket API's document is
// "api" among them), or "api" when an apply over the socket brought it.
//
// Rollback through the daemon is an override: version N's merged intent
// takes the place of the documents' (files and API) as the intended state,
// recorded as a new version "rollback N", without touching the intent
// directory, which the daemon does not own. The override lasts while the
// documents' merged intent is the one it set aside: the next change of any
// document (a file edited, an API apply) ends it, and the documents apply
// again as a new version. It is kept in <state dir>/override.json, so that
// it survives a restart of the daemon with the same files.

import (
	"context"
	"errors"
	"fmt"

	"github.com/netagent/netagent/agent/api"
	"github.com/netagent/netagent/agent/intent"
	"github.com/netagent/netagent/agent/versions"
	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/internal/graphwalk"
	"github.com/netagent/netagent/internal/statefile"
	"github.com/sirupsen/logrus"
)

// override is a rollback through the daemon in force, with its graph.
type override struct {
	versions.Override
	graph *dg.Graph
}

// history is the daemon's versions: the recorder (its store nil without a
// state directory), the current version, and the override in force.
type history struct {
	rec      versions.Recorder
	stateDir string
	current  *versions.Meta
	override *override
}

func newHistory(stateDir string, keep int, log logrus.FieldLogger) *history {
	if stateDir == "" {
		return &history{}
	}
	return &history{rec: versions.Recorder{Store: versions.Open(stateDir, keep), Log: log}, stateDir: stateDir}
}

// load reads the current version and the override in force, at start.
func (a *Agent) loadHistory() error {
	h := a.hist
	if h.rec.Store == nil {
		return nil
	}
	cur, err := versions.Current(h.rec.Store)
	if err != nil {
		return err
	}
	h.current = cur
	o, err := versions.LoadOverride(h.stateDir)
	switch {
	case errors.Is(err, statefile.ErrDamaged):
		return err
	case err == nil && o == nil:
		return nil
	case err == nil:
		// Not judged here: the Guard judges it when it is adopted
		// (intendedFor), against the kernel read back by then.
		h.override = &override{Override: *o}
		h.override.graph, err = a.renderVersionWith(a.cfg.Render, o.Version, o.Intent)
	}
	if err != nil {
		h.override = nil
		a.log.WithError(err).Warn("ignoring the stored rollback override")
	}
	return nil
}

// renderVersion renders a version's merged intent as one document, judged
// by the Guard like any intent the agent adopts (a refusal is an error).
func (a *Agent) renderVersion(n int, raw []byte) (*dg.Graph, error) {
	return a.renderVersionWith(a.renderer(), n, raw)
}

func (a *Agent) renderVersionWith(render Renderer, n int, raw []byte) (*dg.Graph, error) {
	in, err := intent.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("version %d: %w", n, err)
	}
	g, err := render(map[string]*intent.Intent{fmt.Sprintf("rollback-%d", n): in})
	if err != nil {
		return nil, fmt.Errorf("version %d no longer renders: %w", n, err)
	}
	return g, nil
}

// intendedFor returns the graph to adopt for the documents next (resolved
// into graph): graph, or the override's while it holds. It ends an
// override the documents' change makes void and records the version.
func (a *Agent) intendedFor(next *docSet, graph *dg.Graph, reason string) *dg.Graph {
	if t := a.st.trial; t != nil {
		// The trial is a version once confirmed; a change beside it is
		// one now (trial.go).
		if reason != reasonTry {
			a.trialBaseChanged(t, next, reason)
		}
		return graph
	}
	h := a.hist
	v, err := a.versionOf(next, reason)
	if err != nil {
		a.log.WithError(err).Warn("recording the version of the intent")
		return graph
	}
	if o := h.override; o != nil {
		if v.Digest == o.SetAside {
			// A crash between storing the override and its version
			// leaves another version current: record it now.
			back := o.Back()
			if h.current == nil || h.current.Digest != back.Digest {
				if err := a.recordVersion(versions.RollbackTo(back), versions.Any); err != nil {
					a.log.WithError(err).Warn("recording the version of the rollback")
				}
			}
			// Judged again against the current state, so that the
			// orphans it keeps are adopted with it.
			if g, err := a.renderVersion(o.Version, o.Intent); err != nil {
				a.log.WithError(err).Warn("judging the rollback in force; keeping it as it was")
			} else {
				o.graph = g
			}
			return o.graph
		}
		a.log.WithField("version", o.Version).Info("the intent documents changed: the rollback ends; they apply again")
		a.endOverride()
	}
	a.recordVersion(v, versions.Any)
	return graph
}

// versionOf is the version of the accepted documents of next.
func (a *Agent) versionOf(next *docSet, reason string) (versions.Version, error) {
	files := next.acceptedFiles()
	return versions.NewParsed(versions.DaemonSource(files, reason == reasonAPI), files)
}

// recordVersion writes v, if the agent keeps versions.
//
// It is synchronous, before the reconcile that applies v, on purpose: the
// version is the accepted intent (issue 9), so the kernel never carries an
// intent that is not a version, --if-version is checked against a number
// already on disk, and a crash right after the apply loses nothing. Moving
// the durable write after the apply would need the next start to record
// what the kernel carries before anything else (the documents would give
// it back, but not a socket apply whose document was not yet stored, nor
// the number a client was told). At 100k routes it costs about 0.1 s of the
// loop (merge and marshal once, one 9 MB write and fsync; see
// versions.BenchmarkRecord100kRoutes).
func (a *Agent) recordVersion(v versions.Version, expect int) error {
	h := a.hist
	if h.rec.Store == nil {
		return nil
	}
	m, _, err := h.rec.Write(v, expect)
	if err != nil {
		return err
	}
	h.current = &m
	return nil
}

func (a *Agent) endOverride() {
	h := a.hist
	h.override = nil
	if err := versions.RemoveOverride(h.stateDir); err != nil {
		a.log.WithError(err).Warn("removing the rollback override")
	}
}

// checkVersion refuses a write that expects another current version.
func (a *Agent) checkVersion(expect *int) error {
	if expect == nil {
		return nil
	}
	if a.hist.rec.Store == nil {
		return errors.New("the daemon keeps no versions (no state directory): --if-version cannot be checked")
	}
	return versions.CheckCurrent(a.hist.current, *expect)
}

// rollback makes version n (0: the one before the current) the intended
// state in place of the documents' (see above) and reconciles. The Guard
// judges it before anything is recorded: a refused rollback is an error
// and no version.
func (a *Agent) rollbackTo(n int, expect *int) (*dg.Graph, error) {
	h := a.hist
	if h.rec.Store == nil {
		return nil, errors.New("the daemon keeps no versions (no state directory)")
	}
	if err := a.checkVersion(expect); err != nil {
		return nil, err
	}
	sources, err := a.versionOf(a.st.docs, "")
	if err != nil {
		return nil, err
	}
	v, err := versions.Pick(h.rec.Store, n)
	if err != nil {
		return nil, err
	}
	graph, err := a.renderVersion(v.Number, v.Intent)
	if err != nil {
		return nil, err // before anything is recorded
	}
	if graph, err = a.override(v, sources.Digest, graph); err != nil {
		return nil, err
	}
	_, m, err := h.rec.Rollback(v.Number, versions.Any)
	if err != nil {
		a.endOverride()
		return nil, err
	}
	h.current = &m
	return graph, nil
}

// override puts version v (rendered: graph) in force in place of the
// documents whose digest is setAside, and returns the graph to adopt.
// The override is on disk before the version that says it is in force: a
// crash between leaves the documents' version current and an override
// that the next start ends or keeps as their digest says.
func (a *Agent) override(v *versions.Version, setAside string, graph *dg.Graph) (*dg.Graph, error) {
	if setAside == v.Digest { // back to what the documents say: no override
		a.endOverride()
		graph, _, err := renderWithout(a.st.docs.acceptedFiles(), a.renderer())
		return graph, err
	}
	o := &override{Override: versions.Override{Version: v.Number, Intent: v.Intent, SetAside: setAside}, graph: graph}
	if err := versions.SaveOverride(a.hist.stateDir, &o.Override); err != nil {
		return nil, err
	}
	a.hist.override = o
	return graph, nil
}

// rollback answers CmdRollback.
func (a *Agent) rollback(ctx context.Context, req api.Request) api.Response {
	graph, err := a.rollbackTo(req.Version, req.IfVersion)
	if err != nil {
		return errorResponse(err)
	}
	graphwalk.Sync(a.st.intended, graph)
	a.adopted(graph)
	a.st.want(reasonRollback)
	rs := a.reconcile(ctx)
	st := a.status()
	return api.Response{Operations: api.OpResults(rs.OperationLog), Blocked: api.BlockedItems(rs.Blocked), Status: &st}
}

// errorResponse answers a request refused with err.
func errorResponse(err error) api.Response {
	return api.Response{Error: err.Error(), Conflict: errors.Is(err, versions.ErrConflict)}
}
