package host

import (
	"fmt"
	"slices"
	"time"

	dg "github.com/netagent/netagent/depgraph"
)

// A change the kernel did not keep: netagent wrote an item, and the
// read-back that followed found it otherwise (the kernel clamped a sysctl
// or an MTU, a bridge dropped a setting, a port could not be enslaved,
// another program took a chain's position back, an object came back or
// went away). The one-shot apply (Converge) and the daemon's drift check
// follow one rule, Verifier's:
//
//   - The first time in a row, the item is written again at once, like any
//     drift: the kernel may have undone it once as a side effect of another
//     change (a bridge flushes its neighbours when a port joins).
//   - From the second time in a row (Unkept.Held), it is not: writing it
//     again at once would undo nothing but the kernel's answer. The item is
//     reported as not converging with the reason ("the kernel did not keep
//     the change: <item> was written as <value>, the kernel holds
//     <value>"): a Problem of the apply (Unkept set), the state
//     not-converging in the daemon's status.
//   - A read-back that finds the change kept forgets the count.
//
// The one-shot apply then stops; the daemon adds only its timing: it writes
// a held item again after the backoff of a failed item (doubling), and
// reads it back after each write.

// RewritesAtOnce is how many times in a row a change the kernel did not
// keep is written again at once, before it is reported as not converging.
const RewritesAtOnce = 1

// Drift is one difference between a current state and the kernel's.
type Drift struct {
	Ref      dg.ItemRef
	Old, New dg.Item // nil: absent (Old: in the current state; New: in the kernel)
}

// What says "gone", "found" or "changed".
func (d Drift) What() string {
	switch {
	case d.New == nil:
		return "gone"
	case d.Old == nil:
		return "found"
	}
	return "changed"
}

// Describe says what the kernel holds instead of what was written.
func (d Drift) Describe() string {
	switch {
	case d.New == nil:
		return fmt.Sprintf("%s was written, then gone from the kernel", d.Ref)
	case d.Old == nil:
		return fmt.Sprintf("%s was deleted, then found in the kernel again: %s", d.Ref, d.New)
	}
	msg := fmt.Sprintf("%s was written as %s, the kernel holds %s", d.Ref, d.Old, d.New)
	if d.Old.String() == d.New.String() {
		msg += "; " + hiddenDifference(d.Old, d.New)
	}
	return msg
}

// hiddenDifference says what differs between two items whose text is
// the same: their dependencies (a route's on the address it goes from,
// read back only where that address is netagent's), or else a field the
// text leaves out.
func hiddenDifference(old, cur dg.Item) string {
	refs := func(it dg.Item) []string {
		var out []string
		for _, dep := range it.Dependencies() {
			out = append(out, dep.RequiredItem.String())
		}
		slices.Sort(out)
		return out
	}
	if o, c := refs(old), refs(cur); !slices.Equal(o, c) {
		return fmt.Sprintf("they differ in their dependencies: written depending on %v, read back depending on %v", o, c)
	}
	return "they differ in a field the text leaves out"
}

// Apply puts the kernel's version into g, so that a reconcile writes the
// item again.
func (d Drift) Apply(g *dg.Graph, now time.Time) { put(g, d.Ref, d.New, now) }

// Hold puts back into g what was written, so that a reconcile leaves the
// item alone.
func (d Drift) Hold(g *dg.Graph, now time.Time) { put(g, d.Ref, d.Old, now) }

func put(g *dg.Graph, ref dg.ItemRef, it dg.Item, now time.Time) {
	if it == nil {
		g.Delete(ref)
		return
	}
	g.PutWithState(it, dg.StateData{State: dg.StateCreated, Since: now})
}

// DiffReadBack compares the settled items of current (failed items and
// items in transition are retried, or settle, anyway) with a fresh
// read-back, in ref order (sorted at the end: walking the items in order
// sorted both graphs, 0.1 s at 100k routes).
func DiffReadBack(current, rb *dg.Graph) []Drift {
	var out []Drift
	for c, r := range eachPairUnordered(current, rb) {
		switch {
		case c == nil:
			out = append(out, Drift{Ref: r.Ref(), New: r.Item()})
		case c.State().State != dg.StateCreated:
		case r == nil:
			out = append(out, Drift{Ref: c.Ref(), Old: c.Item()})
		case !identical(r.Item(), c.Item()) && !r.Item().Equal(c.Item()):
			out = append(out, Drift{Ref: c.Ref(), Old: c.Item(), New: r.Item()})
		}
	}
	slices.SortFunc(out, func(a, b Drift) int { return a.Ref.Compare(b.Ref) })
	return out
}

// Unkept is the record of an item whose change the kernel did not keep.
type Unkept struct {
	// Count is the read-backs in a row that found the change undone.
	Count int
	// Reason is "the kernel did not keep the change: " and what it holds.
	Reason string
	// Since is when the first of them found it.
	Since time.Time
	// Want is the intended value written (nil: the item was deleted).
	Want dg.Item
}

// Held reports whether the item is not converging: undone more than
// RewritesAtOnce times in a row, it is not written again at once.
func (u *Unkept) Held() bool { return u.Count > RewritesAtOnce }

// Finding is one difference a read-back found.
type Finding struct {
	Drift
	// Unkept is the record of the item if the difference undoes a change
	// netagent made (nil: someone else's change, to repair).
	Unkept *Unkept
	// Again: this read-back counted it (the item was written since the
	// last one); otherwise it is still held from an earlier one.
	Again bool
}

// Held reports whether the difference is held rather than repaired.
func (f Finding) Held() bool { return f.Unkept != nil && f.Unkept.Held() }

// Verifier keeps, across read-backs, the records of the changes the kernel
// did not keep, and applies the rule above. The zero value is not usable:
// use NewVerifier. It is not safe for concurrent use.
type Verifier struct {
	unkept map[dg.ItemRef]*Unkept
}

// NewVerifier returns a Verifier with no records.
func NewVerifier() *Verifier { return &Verifier{unkept: map[dg.ItemRef]*Unkept{}} }

// Unkept returns the record of ref, or nil.
func (v *Verifier) Unkept(ref dg.ItemRef) *Unkept { return v.unkept[ref] }

// NotConverging counts the held items.
func (v *Verifier) NotConverging() int {
	n := 0
	for _, u := range v.unkept {
		if u.Held() {
			n++
		}
	}
	return n
}

// Verify compares current, the state netagent holds, with rb, the kernel's
// read back now. A difference in an item of written (written since the
// last Verify) is a change the kernel did not keep: its count goes up. An
// item with a record that the read-back finds as current holds it is kept
// now: its record is forgotten, and listed in kept with its count.
func (v *Verifier) Verify(current, rb, intended *dg.Graph, written map[dg.ItemRef]bool, now time.Time) (found []Finding, kept map[dg.ItemRef]int) {
	return v.verify(current, rb, intended, func(ref dg.ItemRef) bool { return written[ref] }, now)
}

// VerifyItems is Verify with the read-back as the list of its items, in
// the order read (Kernel.ReadItems): when it holds exactly what current
// holds (holdsExactly), nothing is found without building its graph (at
// 100k routes the daemon's drift check built and dropped 40 MB each time);
// otherwise its graph is built and compared.
func (v *Verifier) VerifyItems(current *dg.Graph, list []dg.Item, intended *dg.Graph, written map[dg.ItemRef]bool, now time.Time) (found []Finding, kept map[dg.ItemRef]int) {
	if holdsExactly(list, current, intended) {
		return v.verify(current, nil, intended, nil, now)
	}
	rb, _ := currentGraph(list, intended)
	return v.Verify(current, rb, intended, written, now)
}

// verify is Verify with written asked item by item, and only for the
// items the read-back found changed. rb nil: the read-back found nothing
// changed.
func (v *Verifier) verify(current, rb, intended *dg.Graph, written func(dg.ItemRef) bool, now time.Time) (found []Finding, kept map[dg.ItemRef]int) {
	var drifts []Drift
	if rb != nil {
		drifts = DiffReadBack(current, rb)
	}
	undone := make(map[dg.ItemRef]bool, len(drifts))
	for _, d := range drifts {
		undone[d.Ref] = true
		f := Finding{Drift: d, Unkept: v.unkept[d.Ref]}
		if written(d.Ref) {
			f.Unkept, f.Again = v.notKept(d, intended, now), true
		}
		found = append(found, f)
	}
	for ref, u := range v.unkept {
		if !undone[ref] {
			if kept == nil {
				kept = map[dg.ItemRef]int{}
			}
			kept[ref] = u.Count
			delete(v.unkept, ref)
		}
	}
	return found, kept
}

func (v *Verifier) notKept(d Drift, intended *dg.Graph, now time.Time) *Unkept {
	u := v.unkept[d.Ref]
	if u == nil {
		u = &Unkept{Since: now}
		v.unkept[d.Ref] = u
	}
	u.Count++
	u.Want, _ = intended.Get(d.Ref)
	u.Reason = "the kernel did not keep the change: " + d.Describe()
	return u
}

// Prune forgets the records of items whose intended value changed (or
// went): what netagent writes now is another change. It returns their
// references.
func (v *Verifier) Prune(intended *dg.Graph) []dg.ItemRef {
	var out []dg.ItemRef
	for ref, u := range v.unkept {
		want, ok := intended.Get(ref)
		if ok == (u.Want != nil) && (!ok || want.Equal(u.Want)) {
			continue
		}
		delete(v.unkept, ref)
		out = append(out, ref)
	}
	return out
}
