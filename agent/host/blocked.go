package host

import (
	"errors"
	"strings"

	"github.com/netagent/netagent/configurators/link"
	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/items"
)

// linkWaits tells, for blocked items, whether each waits for something a
// link event can bring: an external item (a link's presence, carrier or
// state), directly or through other blocked items, following the
// reconciler's own record of what each waits for (Status.BlockedOn). An
// item blocked only behind a failed item, one in transition or a
// dependency cycle waits for nothing that a link event changes, so Apply
// does not wait for it.
type linkWaits struct {
	intended, cur *dg.Graph
	// on returns what the item ref waits for; blocked false: it is not
	// blocked.
	on BlockedOn
	// blocked is how many items are blocked: no walk along them is
	// longer, but one that goes round a cycle of them.
	blocked int
	memo    map[dg.ItemRef]verdict
}

// BlockedOn returns what the blocked item ref waits for (the reconciler's
// record of it); blocked false for an item that is not blocked.
type BlockedOn func(ref dg.ItemRef) (on dg.ItemRef, blocked bool)

type verdict uint8

const (
	unknown verdict = iota
	visiting
	waits
	waitsNot
)

func newLinkWaits(intended, cur *dg.Graph, on BlockedOn, blocked int) *linkWaits {
	if cur == nil {
		cur = dg.New("current")
	}
	return &linkWaits{intended: intended, cur: cur, on: on, blocked: blocked, memo: map[dg.ItemRef]verdict{}}
}

// MissingNICReason says why the blocked item ref waits, given the
// reconciler's reason for it, when what it waits for (directly or through
// other blocked items) is a NIC that does not exist on this host and that
// nothing in the intent brings; ok false otherwise. blocked is how many
// items are blocked. Apply's result and the daemon's status say it in the
// same words.
func MissingNICReason(intended, cur *dg.Graph, on BlockedOn, blocked int, ref dg.ItemRef, reason string) (nic, why string, ok bool) {
	w := newLinkWaits(intended, cur, on, blocked)
	nic = w.missingNIC(ref)
	if nic == "" {
		return "", reason, false
	}
	waited, _ := on(ref)
	return nic, missingNICReason(strings.TrimPrefix(reason, "blocked: "), nic, waited), true
}

// of reports whether the blocked item ref waits for an external item.
func (w *linkWaits) of(ref dg.ItemRef) bool {
	switch w.memo[ref] {
	case waits:
		return true
	case waitsNot, visiting: // visiting: a cycle, which no link event breaks
		return false
	}
	w.memo[ref] = visiting
	v := waitsNot
	if on, _ := w.on(ref); w.waitsFor(on) {
		v = waits
	}
	w.memo[ref] = v
	return v == waits
}

// waitsFor reports whether on, what a blocked item waits for, is an
// external item (or one neither graph holds: a link that does not exist
// yet), or a blocked item that itself waits for one.
func (w *linkWaits) waitsFor(on dg.ItemRef) bool {
	if on == (dg.ItemRef{}) || items.IsDHCP4AddressRef(on) { // a lease's address: render, not a link, brings it
		return false
	}
	if _, blocked := w.on(on); blocked {
		return w.of(on)
	}
	have, _, exists := w.cur.Lookup(on)
	want, wanted := w.intended.Get(on)
	return exists && have.External() || wanted && want.External() || !wanted && !exists
}

// root follows the blocked item ref through the blocked items it waits
// for to the last of them (last) and what that one waits for (on), which
// is not blocked; ok false for a cycle of blocked items.
func (w *linkWaits) root(ref dg.ItemRef) (last, on dg.ItemRef, ok bool) {
	for range w.blocked + 1 { // bounded: a cycle of blocked items ends it
		on, _ := w.on(ref)
		if _, blocked := w.on(on); !blocked {
			return ref, on, true
		}
		ref = on
	}
	return ref, dg.ItemRef{}, false
}

// missingNIC returns the name of the NIC that the blocked item ref waits
// for, directly or through other blocked items, when that NIC does not
// exist on the host and nothing in the intent creates it (a link ref
// neither graph holds, or a physical interface whose match found no NIC):
// only a hotplug brings it. "" otherwise.
func (w *linkWaits) missingNIC(ref dg.ItemRef) string {
	_, on, ok := w.root(ref)
	if !ok {
		return ""
	}
	_, st, exists := w.cur.Lookup(on)
	if exists && st.State == dg.StateFailed && errors.Is(st.LastErr, link.ErrNoMatch) {
		return on.Name // a physical interface whose match finds no NIC
	}
	if _, wanted := w.intended.Get(on); on.Type != items.TypeLink || exists || wanted {
		return ""
	}
	if w.intentBrings(on.Name) {
		return ""
	}
	return on.Name
}

// intentBrings reports whether the intent brings a link named name that
// the kernel has not got yet: an interface it creates (a bridge, a VLAN),
// or a physical one it matches by what the NIC is (MAC, permanent MAC,
// driver, path), whose NIC apply renames name, unless its match has found
// no NIC. A physical interface found by its name brings nothing: only a
// hotplug does.
func (w *linkWaits) intentBrings(name string) bool {
	ref := items.InterfaceRef(name)
	want, wanted := w.intended.Get(ref)
	if !wanted {
		return false
	}
	ifc, ok := want.(*items.Interface)
	if !ok || ifc.Kind != items.KindPhysical {
		return true
	}
	if ifc.Match == nil {
		return false
	}
	_, st, exists := w.cur.Lookup(ref)
	return !exists || st.State != dg.StateFailed || !errors.Is(st.LastErr, link.ErrNoMatch)
}

// stateOf returns the name of the link whose state (a MustSatisfy
// predicate: its carrier) the blocked item ref waits for, directly or
// through other blocked items; "" otherwise.
func (w *linkWaits) stateOf(ref dg.ItemRef) string {
	last, on, ok := w.root(ref)
	if !ok || on.Type != items.TypeLink {
		return ""
	}
	_, deps, _ := w.intended.LookupDeps(last)
	for _, d := range deps {
		if d.RequiredItem == on && d.MustSatisfy != nil {
			return on.Name
		}
	}
	return ""
}
