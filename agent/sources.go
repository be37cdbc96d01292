package agent

import (
	"context"
	"errors"
	"maps"
	"slices"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/netagent/netagent/agent/source"
	"github.com/netagent/netagent/internal/graphwalk"
)

// apiDocName names the socket API's one document among the documents of
// every source. Intent files end in ".json", so it cannot clash with one.
const apiDocName = "api"

// apiSource is the socket API as a source: one in-memory document that
// every apply replaces. It lives in the loop: apply sets it and loads it at
// once, so it needs no Watch.
type apiSource struct {
	raw []byte // nil: no document
}

func (s *apiSource) Name() string { return "api" }

func (s *apiSource) set(raw []byte) { s.raw = raw }

func (s *apiSource) Load() (map[string][]byte, error) {
	if s.raw == nil {
		return map[string][]byte{}, nil
	}
	return map[string][]byte{apiDocName: s.raw}, nil
}

func (s *apiSource) Watch(ctx context.Context, _ chan<- string) { <-ctx.Done() }

// source returns the source called name, or nil.
func (a *Agent) source(name string) source.IntentSource {
	if name == a.api.Name() {
		return a.api
	}
	for _, src := range a.cfg.Sources {
		if src.Name() == name {
			return src
		}
	}
	return nil
}

// loadSources reads the named sources and applies what changed.
func (a *Agent) loadSources(names []string, reason string) {
	next := a.st.docs.clone()
	for _, name := range names {
		a.loadInto(next, name)
	}
	if next.holdUnclaimed && a.everySourceRead() {
		next.holdUnclaimed = false
	}
	a.adopt(next, reason)
}

// loadInto reads one source into next, remembering a failure to read it.
func (a *Agent) loadInto(next *docSet, name string) {
	src := a.source(name)
	if src == nil {
		return
	}
	contents, err := src.Load()
	var refused *source.RefusedError
	if err != nil && !errors.As(err, &refused) {
		a.log.WithError(err).WithField("source", name).Error("reading intent source; keeping its documents as they were")
		a.st.notes.sources[name] = err.Error()
		return
	}
	delete(a.st.notes.sources, name)
	a.st.read[name] = true
	next.update(name, contents)
	if refused != nil {
		for _, doc := range slices.Sorted(maps.Keys(refused.Docs)) {
			next.refuse(name, doc, refused.Docs[doc])
		}
	}
}

// everySourceRead reports whether every source has been read once.
func (a *Agent) everySourceRead() bool {
	for _, name := range a.sourceNames() {
		if !a.st.read[name] {
			return false
		}
	}
	return true
}

// reload reads every source again, and the kernel back, so that what
// someone changed is repaired with it (SIGHUP).
func (a *Agent) reload(ctx context.Context) {
	a.notify("reloading", a.cfg.Notifier.Reloading)
	a.log.Info("reloading every intent source and reading the kernel back")
	a.loadSources(a.sourceNames(), reasonReload)
	a.checkDrift(ctx) // a full read-back: what someone changed is repaired by this reconcile
	a.st.want(reasonReload)
	a.reconcile(ctx)
	a.notify("ready", a.cfg.Notifier.Ready)
}

// adopt resolves next (see resolve) and adopts it; an edit of one
// document's routes is rendered on its own (adoptEdit).
func (a *Agent) adopt(next *docSet, reason string) {
	if a.adoptEdit(next, reason) {
		return
	}
	res, err := next.resolve(time.Now(), a.renderer())
	if err != nil {
		a.log.WithError(err).Error("resolving intents; keeping the running configuration")
		a.st.notes.setIntent(err)
		return
	}
	a.adoptResolved(next, res, reason)
}

// adoptResolved makes next the loop's document set and, if the accepted
// documents changed, their graph the intended one, asking for a reconcile
// for reason.
func (a *Agent) adoptResolved(next *docSet, res resolution, reason string) {
	s := a.st
	a.logRejected(next)
	if res.changed {
		// The Guard judged next inside resolve: a refused document kept
		// its previous version, so what intendedFor records as a version
		// is only what is adopted.
		g := a.intendedFor(next, res.graph, reason)
		if g != s.intended { // adoptEdit edited it in place
			graphwalk.Sync(s.intended, g)
		}
		s.renderedWith = maps.Clone(s.leases.V4.Used())
		a.refusals = s.leases.Refusals(g) // agent/lease: logs each new refusal once
		a.adopted(g)
		s.want(reason)
		a.logAccepted(next)
	}
	s.notes.setIntent(nil)
	s.docs = next
	a.saveDocs()
	if s.current != nil && !res.changed {
		// Valid changes without a reconcile. A change is reconciled at
		// the end of this turn, which observes them (at 100k items a
		// walk of every item costs 0.1 s or more).
		a.observeConditions()
	}
}

// logRejected logs the problems of every document whose new content was
// not applied, once per new set of problems.
func (a *Agent) logRejected(next *docSet) {
	for name, d := range next.docs {
		if old := a.st.docs.docs[name]; !d.gone && (old == nil || !slices.Equal(d.conflicts, old.conflicts)) {
			for _, c := range d.conflicts {
				a.log.WithFields(logrus.Fields{"file": name, "source": d.source, "problem": c}).
					Warn("intent conflict: an object defined in two files is applied from neither")
			}
		}
		if d.accepted() || slices.Equal(d.errs, a.st.docs.errsOf(name)) {
			continue
		}
		log := a.log.WithFields(logrus.Fields{"file": name, "source": d.source})
		if d.good != nil {
			log = log.WithField("kept", d.goodAt.Format(time.RFC3339))
		}
		for _, e := range d.errs {
			log.WithField("problem", e).Warn("intent rejected; its last good version stays applied")
		}
	}
}

func (a *Agent) logAccepted(next *docSet) {
	for name, d := range next.docs {
		old := a.st.docs.docs[name]
		if d.good != nil && (old == nil || old.good != d.good) {
			a.log.WithFields(logrus.Fields{"file": name, "source": d.source}).Info("intent accepted")
		}
	}
	for name, old := range a.st.docs.docs {
		if _, still := next.docs[name]; !still && old.good != nil {
			a.log.WithFields(logrus.Fields{"file": name, "source": old.source}).Info("intent removed")
		}
	}
}

func (s *docSet) errsOf(name string) []string {
	if d := s.docs[name]; d != nil {
		return d.errs
	}
	return nil
}

// saveDocs writes the accepted documents to the state directory. While a
// trial is pending, those without it (the API's document before it): a
// restart during the trial starts from them.
func (a *Agent) saveDocs() {
	if a.store == nil {
		return
	}
	docs := a.st.docs
	if t := a.st.trial; t != nil {
		docs = t.base(docs)
	}
	if err := a.store.save(docs); err != nil {
		a.log.WithError(err).Warn("saving the accepted intents to the state directory")
	}
}
