package agent

import (
	"bytes"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/netagent/netagent/agent/intent"
	dg "github.com/netagent/netagent/depgraph"
)

// resolution is the outcome of resolve: whether the applied set changed
// (and then its rendered graph), and the documents whose new content was
// rejected, with why.
type resolution struct {
	changed  bool
	graph    *dg.Graph
	rejected map[string][]string
	// conflicts: per document, the objects it defines that another
	// document defines too, left out of both (intent.WithoutConflicts).
	conflicts map[string][]string
}

// resolve decides which version of every document to apply, so that the
// applied set is always valid as a whole:
//
//  1. Take every document's new content (a document that does not parse
//     keeps its last good version; a document that is gone is left out).
//  2. Render them together (merge, validate, render). If that fails, fall back to the last good
//     version (or to nothing, for a new document) of each changed document
//     the errors name, and try again.
//  3. If the errors name only unchanged documents (a change elsewhere broke
//     them: a deleted file that others refer to), fall back for every
//     changed document: the set that was applied before comes back.
//
// An object that two documents define is left out of both (neither version
// is applied; the rest of each is) and reported on both as a conflict,
// unless leaving it out breaks something: then step 2 or 3 takes back the
// changed document, with the conflict among its problems, and the set
// applied before stays.
//
// The rejected documents keep their errors for the status. Unchanged
// documents are never dropped: the agent never withdraws a good
// configuration because someone else's edit is wrong.
func (s *docSet) resolve(now time.Time, render Renderer) (resolution, error) {
	cand := s.candidates()
	res := resolution{rejected: map[string][]string{}}
	stale := s.stale
	s.stale = false
	if s.rendered && !stale && !s.anyFresh(cand) {
		s.commit(cand, res.rejected, now)
		return res, nil
	}
	g, conflicts, err := renderWithout(cand, render)
	for err != nil {
		if !s.fallBack(cand, err, res.rejected, conflicts) {
			return res, fmt.Errorf("the last accepted intents no longer render: %w", err)
		}
		g, conflicts, err = renderWithout(cand, render)
	}
	res.conflicts = conflicts
	for name, d := range s.docs {
		d.conflicts = conflicts[name]
	}
	res.changed = s.commit(cand, res.rejected, now) || !s.rendered || stale
	s.rendered = true
	if res.changed {
		res.graph = g
	}
	return res, nil
}

// renderWithout renders the candidates with every object that two of them
// define left out of both, and returns those conflicts by document.
func renderWithout(cand map[string]*intent.Intent, render Renderer) (*dg.Graph, map[string][]string, error) {
	files, cerr := intent.WithoutConflicts(cand)
	conflicts := map[string][]string{}
	for _, fe := range intent.FieldErrors(cerr) {
		conflicts[fe.File] = append(conflicts[fe.File], fe.Error())
	}
	g, err := render(files)
	return g, conflicts, err
}

// anyFresh reports whether some candidate differs from what is applied.
func (s *docSet) anyFresh(cand map[string]*intent.Intent) bool {
	for name := range s.docs {
		if s.fresh(cand, name) {
			return true
		}
	}
	return false
}

// candidates returns the version of each document to try first.
func (s *docSet) candidates() map[string]*intent.Intent {
	cand := make(map[string]*intent.Intent, len(s.docs))
	for n, d := range s.docs {
		switch {
		case d.parsed != nil:
			cand[n] = d.parsed
		case d.good != nil && (!d.gone || d.source == "" && s.holdUnclaimed):
			cand[n] = d.good
		}
	}
	return cand
}

// fresh reports whether the candidate of name differs from its last good
// version (a new or changed document, or a deleted one).
func (s *docSet) fresh(cand map[string]*intent.Intent, name string) bool {
	return cand[name] != s.docs[name].good
}

// fallBack reverts the changed documents that err blames (or all changed
// documents, if it blames none), recording why. It reports false when
// nothing is left to revert.
// The conflicts of a reverted document come first among its problems.
func (s *docSet) fallBack(cand map[string]*intent.Intent, err error, rejected, conflicts map[string][]string) bool {
	blamed := blame(err)
	var reverted bool
	for _, name := range slices.Sorted(maps.Keys(blamed)) {
		if s.docs[name] != nil && s.fresh(cand, name) {
			s.revert(cand, name)
			rejected[name] = append(rejected[name], conflicts[name]...)
			rejected[name] = append(rejected[name], blamed[name]...)
			reverted = true
		}
	}
	if reverted {
		return true
	}
	all := errStrings("", err)
	for _, name := range slices.Sorted(maps.Keys(s.docs)) {
		if s.fresh(cand, name) {
			s.revert(cand, name)
			rejected[name] = append(rejected[name], conflicts[name]...)
			rejected[name] = append(rejected[name], all...)
			reverted = true
		}
	}
	return reverted
}

func (s *docSet) revert(cand map[string]*intent.Intent, name string) {
	if g := s.docs[name].good; g != nil {
		cand[name] = g
		return
	}
	delete(cand, name)
}

// blame groups the problems of err by the document they name ("" for
// none).
func blame(err error) map[string][]string {
	out := map[string][]string{}
	for _, fe := range intent.FieldErrors(err) {
		out[fe.File] = append(out[fe.File], fe.Error())
	}
	if len(out) == 0 {
		out[""] = []string{err.Error()}
	}
	return out
}

// commit makes cand the applied set and reports whether it changed.
func (s *docSet) commit(cand map[string]*intent.Intent, rejected map[string][]string, now time.Time) bool {
	changed := false
	for name, d := range s.docs {
		v, ok := cand[name]
		switch {
		case !ok && d.gone:
			delete(s.docs, name)
			changed = changed || d.good != nil
		case !ok:
			changed = changed || d.good != nil
			d.good, d.goodRaw, d.goodAt = nil, nil, time.Time{}
		case v != d.good:
			if !bytes.Equal(d.raw, d.goodRaw) {
				d.goodAt = now // not when a restart parses the same bytes again
			}
			d.good, d.goodRaw = v, d.raw
			changed = true
		}
		if errs, bad := rejected[name]; bad {
			d.errs = errs
		} else if d.parsed != nil && cand[name] == d.parsed {
			d.errs = nil
		}
	}
	return changed
}
