package status

import (
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/netagent/netagent/agent/host"
	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/reconciler"
)

// Snapshot is what the status is built from: the daemon's state as its
// loop holds it, gathered on the loop. Build and the other functions of
// the package read it and never change it (the graphs and records are
// the loop's own, shared, not copied: a build runs on the loop).
type Snapshot struct {
	// Docs are the intent documents, by name.
	Docs map[string]Document
	// Intended and Current are the intended and the current graph.
	Intended, Current *dg.Graph
	Records           Records
	// Orphans are the items kept although no document holds them, with
	// why (the guard's).
	Orphans map[dg.ItemRef]string
	// Refusals are the lease items the intent refuses in part or whole,
	// with why (render.LeaseRefused).
	Refusals map[dg.ItemRef]string
	Notes    Notes

	// Runs counts the reconciles; LastErr is the last one's error.
	Runs           int
	LastReconcile  time.Time
	LastReasons    []string
	LastErr        error
	NextRetry      time.Time
	NextDriftCheck time.Time

	// Version and Digest are the current version of the intent (0: none
	// kept); OverrideVersion the version a rollback applies instead of
	// the documents (0: none).
	Version         int
	Digest          string
	OverrideVersion int

	// Trial is the pending trial (nil: none), LastTrial how the last one
	// ended (nil: none known); Build copies them.
	Trial     *TrialStatus
	LastTrial *TrialOutcome

	// Reported are the report items the last drift check found drifted.
	Reported map[dg.ItemRef]host.Drift
	// Leases are the leases in use (built by the lease schedulers).
	Leases []LeaseStatus
}

// Document is one intent document as the status sees it.
type Document struct {
	Source string
	// Errors say why the source's content is not applied (none: it is);
	// Conflicts are the objects of the applied version that another
	// document defines too (applied from neither).
	Errors    []string
	Conflicts []string
	// Gone: the source no longer has the document.
	Gone bool
	// Kept: a version accepted before (at AcceptedAt) stays applied.
	Kept       bool
	AcceptedAt time.Time
}

// Accepted reports whether the source's content is what is applied.
func (d Document) Accepted() bool { return len(d.Errors) == 0 && !d.Gone }

// Notes are the errors the loop met outside any item.
type Notes struct {
	// Sources says why a source cannot be read, by source; Unreachable
	// are those among them that cannot be reached (a store: its
	// documents stay applied).
	Sources     map[string]string
	Unreachable map[string]bool
	// Intent is why the accepted intents could not be resolved or
	// rendered ("": they could).
	Intent string
}

// List lists the notes, sources first, in order.
func (n Notes) List() []string {
	var out []string
	for _, src := range slices.Sorted(maps.Keys(n.Sources)) {
		out = append(out, fmt.Sprintf("source %s: %s", src, n.Sources[src]))
	}
	if n.Intent != "" {
		out = append(out, n.Intent)
	}
	return out
}

// Records are what the loop records of its items besides the graphs: the
// reconciler's records of the current graph (failures in a row, blocked
// notes, each since when) and the Verifier's changes the kernel did not
// keep.
type Records struct {
	Reconciler *reconciler.Records
	Verifier   *host.Verifier
}

// Failures returns how many operations on ref failed in a row, if the
// item is failed now.
func (r Records) Failures(current *dg.Graph, ref dg.ItemRef) int {
	f, ok := r.Reconciler.Failure(ref)
	if !ok {
		return 0
	}
	if st, ok := current.State(ref); !ok || st.State != dg.StateFailed {
		return 0
	}
	return f.Count
}

// Failed returns the items failed now.
func (r Records) Failed(current *dg.Graph) []dg.ItemRef {
	var out []dg.ItemRef
	for _, ref := range r.Reconciler.Failed() {
		if r.Failures(current, ref) > 0 {
			out = append(out, ref)
		}
	}
	return out
}

// Block returns why ref is blocked, if it is (an item intended or
// current: the records may hold notes of items since gone).
func (r Records) Block(current, intended *dg.Graph, ref dg.ItemRef) (reconciler.Block, bool) {
	b, ok := r.Reconciler.Block(ref)
	if !ok || !intended.Contains(ref) && !current.Contains(ref) {
		return reconciler.Block{}, false
	}
	return b, true
}

// Blocked counts the items blocked now.
func (r Records) Blocked(current, intended *dg.Graph) int {
	n := 0
	for _, ref := range r.Reconciler.Blocked() {
		if _, ok := r.Block(current, intended, ref); ok {
			n++
		}
	}
	return n
}

// Unkept returns the Verifier's record of ref if the item is held (not
// converging), or nil.
func (r Records) Unkept(ref dg.ItemRef) *host.Unkept {
	if u := r.Verifier.Unkept(ref); u != nil && u.Held() {
		return u
	}
	return nil
}

// NotConverging counts the items under the backoff of unkept changes.
func (r Records) NotConverging() int { return r.Verifier.NotConverging() }
