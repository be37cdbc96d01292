package host

import (
	"fmt"
	"maps"

	"github.com/netagent/netagent/configurators"
	"github.com/netagent/netagent/configurators/link"
	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/internal/disrupt"
	"github.com/netagent/netagent/items"
	"github.com/netagent/netagent/reconciler"
)

// Options change how a Runtime acts on its namespace.
type Options struct {
	// Adopt takes over the objects someone else made at the places of
	// intended items (configurators.Options.Adopt): `apply --adopt`, and
	// the daemon's first reconcile with `run --adopt`. Such an object
	// equal to its item gets only netagent's mark (an interface's alias,
	// the protocol of an address, route, rule or neighbour), written
	// without a moment where the object is missing; one that differs is
	// changed as netagent's own would be. Objects no intended item names
	// stay someone else's.
	Adopt bool
}

// SetAdopt builds the Runtime's configurators anew, taking over what
// others made (Options.Adopt) or not: the daemon adopts in its first
// reconcile only.
func (r *Runtime) SetAdopt(on bool) error {
	reg, err := r.ns.NewRegistryWith(r.stateDir, configurators.Options{Adopt: on})
	if err != nil {
		return err
	}
	if r.target != nil { // over fakes there is no DHCP (OpenFake)
		reg.Register(items.TypeDHCP4Lease, r.dhcp)
		reg.Register(items.TypeDHCP6Lease, r.dhcp6)
	}
	r.reg, r.adopt = reg, on
	return nil
}

// Adopting reports whether the configurators take over what others made.
func (r *Runtime) Adopting() bool { return r.adopt }

// Adoption is a create of a plan that takes over someone else's object
// (Runtime.Plan with Options.Adopt).
type Adoption struct {
	// Found is the object as an item of the intended one's name, as the
	// kernel holds it before the adoption.
	Found dg.Item
	// MarkOnly: Found equals the intended item; the adoption writes only
	// netagent's mark.
	MarkOnly bool
}

// OpText is how a plan names its operation e: "adopt (mark only)" and
// "adopt and modify" for the operations that take over someone else's
// object (AdoptionOf), the reconciler's words otherwise.
func OpText(e reconciler.OpLogEntry, adoptions map[dg.ItemRef]Adoption) string {
	a, ok := AdoptionOf(e, adoptions)
	if !ok {
		return e.String()
	}
	verb := "adopt and modify"
	if a.MarkOnly {
		verb = "adopt (mark only)"
	}
	s := verb + " " + e.Ref.String()
	if e.Err != nil {
		s += fmt.Sprintf(": %v", e.Err)
	}
	return s
}

// AdoptionOf returns the adoption the operation e runs: a create that
// takes over someone else's object, or the modify of a physical
// interface whose NIC is found by its match and not recorded yet (the
// kernel reads it back as an external NIC, so the reconciler modifies it;
// see link.Adoptions).
func AdoptionOf(e reconciler.OpLogEntry, adoptions map[dg.ItemRef]Adoption) (Adoption, bool) {
	a, ok := adoptions[e.Ref]
	switch {
	case !ok || e.Recreate:
		return a, false
	case e.Op == reconciler.OpCreate:
		return a, true
	}
	i, nic := a.Found.(*items.Interface)
	return a, e.Op == reconciler.OpModify && nic && i.Kind == items.KindPhysical
}

// adoptions finds, when the Runtime adopts, the intended items whose
// create takes over someone else's object (configurators.Adoptions), and
// takes them out of clashes: they are no failures. nil when it does not
// adopt.
func (r *Runtime) adoptions(intended *dg.Graph, clashes map[dg.ItemRef]error) (map[dg.ItemRef]Adoption, error) {
	if !r.adopt {
		return nil, nil
	}
	found, err := r.ns.Adoptions(r.stateDir, intended)
	if err != nil {
		return nil, err
	}
	out := make(map[dg.ItemRef]Adoption, len(found))
	for ref, f := range found {
		want, _ := intended.Get(ref)
		out[ref] = Adoption{Found: f, MarkOnly: want != nil && f.Equal(want)}
	}
	maps.DeleteFunc(clashes, func(ref dg.ItemRef, _ error) bool { _, ok := out[ref]; return ok }) // nil clashes: nothing to do
	return out, nil
}

// unmarked reports whether it is a kind of object that carries no mark of
// its own: a bridge's VLAN settings and a port are netagent's with their
// bridge or master (link.Adoptions), so adopting one equal to the intent
// writes nothing.
func unmarked(it dg.Item) bool {
	switch it.(type) {
	case *items.BridgeVLANs, *items.Port:
		return true
	}
	return false
}

// predictAdoptions puts, in preds (what each operation of ops does to
// traffic), the predictions of the creates that adopt: none for a mark
// alone (written in place, the object never missing), and for one that
// differs what changing Found into the item does, as a modify (or the
// recreate the change needs) of netagent's own would.
func predictAdoptions(ops reconciler.OperationLog, preds []disrupt.Prediction, adoptions map[dg.ItemRef]Adoption, found link.Found) {
	for i, e := range ops {
		a, ok := AdoptionOf(e, adoptions)
		if !ok || i >= len(preds) {
			continue
		}
		if a.MarkOnly {
			why := "adopted: only netagent's mark is written, in place; the object is never missing"
			if unmarked(e.Item) {
				why = "adopted: nothing is written (it carries no mark of its own and equals the intent)"
			}
			preds[i] = disrupt.Certainly(disrupt.None, why)
			continue
		}
		m := e
		m.Op, m.Recreate = reconciler.OpModify, items.NeedsRecreate(a.Found, e.Item)
		if m.Recreate {
			m.Op = reconciler.OpCreate
		}
		preds[i] = configurators.PredictFound(m, dg.New("adopted", a.Found), found)
		preds[i].Why = "adopted and changed: " + preds[i].Why
	}
}
