package link

import (
	"bytes"
	"fmt"

	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/internal/disrupt"
	"github.com/netagent/netagent/items"
	"github.com/netagent/netagent/reconciler"
)

// kindDisruption is implemented by the kinds whose own converge can take
// the link down (in their kind_<kind>.go, next to converge): it predicts
// what converge does to traffic turning obs into want. Kinds without it
// change their settings in place.
type kindDisruption interface {
	disruption(obs, want *items.Interface) disrupt.Prediction
}

// downWith is implemented by the kinds whose links take others down with
// them (a veth its peer): the links that go down, or away, when want is
// set down, deleted or recreated.
type downWith interface {
	downWith(want *items.Interface) []string
}

// companions are the links that go down with want (see downWith).
func companions(want *items.Interface) []string {
	if d, ok := linkKinds[want.Kind].(downWith); ok {
		return d.downWith(want)
	}
	return nil
}

// liveMAC is implemented by the kinds whose links take a new MAC while up
// (IFF_LIVE_ADDR_CHANGE, or an ndo_set_mac_address that never answers
// EBUSY): convergeMAC then never sets them down. For the others (a NIC
// whose driver refuses a live change) whileDown sets the link down for
// the change.
type liveMAC interface{ liveMAC() }

// Predict says what an operation on an interface does to traffic, as the
// configurator runs it: old is the interface as the kernel holds it
// before (nil for a create), want the operation's item (the new value; the
// old one for a delete); recreate marks the delete and create of a
// recreate. found is what the physical links had before netagent
// (ReadFound; nil: not known): the delete of a physical interface gives
// them back (see PredictRestore).
func Predict(op reconciler.Operation, recreate bool, old, want *items.Interface, found Found) disrupt.Prediction {
	return PredictNIC(op, recreate, old, want, found, nil)
}

// PredictNIC is Predict knowing nic, the NIC a matched interface's match
// finds (MatchedLink; nil: not known): its rename is then certain to flap
// it when it is up (netagent sets it down for the rename and up again),
// and flaps nothing when it is down or has the name already.
func PredictNIC(op reconciler.Operation, recreate bool, old, want *items.Interface, found Found, nic *items.Link) disrupt.Prediction {
	if nic != nil && want.Match != nil && !recreate && (op == reconciler.OpCreate || op == reconciler.OpModify && old != nil) {
		r := knownRename(want.IfName, nic)
		if op == reconciler.OpCreate {
			return r
		}
		return disrupt.Worse(convergeDisruption(old, found.converged(want)), r)
	}
	name := want.IfName
	switch {
	case recreate:
		return disrupt.Certainly(disrupt.Recreate, fmt.Sprintf("the kernel cannot change the %s's settings in place: it is deleted and created again with everything on it (new ifindex)", want.Kind), append([]string{name}, companions(want)...)...)
	case op == reconciler.OpCreate && want.Match != nil:
		return renameFlap(want.IfName, "the NIC the match finds is renamed "+want.IfName)
	case op == reconciler.OpCreate:
		return disrupt.In("new link")
	case op == reconciler.OpDelete && want.Kind == items.KindPhysical:
		return disrupt.Worse(PredictRestore(want, found), found.nameBack(want.IfName))
	case op == reconciler.OpDelete:
		return disrupt.Certainly(disrupt.Removed, "the link is deleted", append([]string{name}, companions(want)...)...)
	case old == nil:
		return disrupt.In("")
	case want.Kind == items.KindPhysical && want.Match != nil && !want.Match.Equal(old.Match):
		// The NIC of that name may not be the one the match finds.
		return disrupt.Worse(convergeDisruption(old, found.converged(want)), renameFlap(name, "the NIC the match finds may be another, renamed "+name))
	case want.Kind == items.KindPhysical:
		return convergeDisruption(old, found.converged(want))
	}
	return convergeDisruption(old, want)
}

// renameFlap: the kernel renames a link only while it is down, so a NIC
// that is up is set down for its rename and up again.
func renameFlap(name, why string) disrupt.Prediction {
	return disrupt.Maybe(disrupt.Flap, why+": the kernel renames only a link that is down, so a NIC that is up is set down and up again", name)
}

// knownRename is what the rename of nic to name does: a flap when it is
// up, nothing when it is down or has the name.
func knownRename(name string, nic *items.Link) disrupt.Prediction {
	switch {
	case nic.IfName == name:
		return disrupt.In("")
	case nic.AdminUp:
		return disrupt.Certainly(disrupt.Flap, "the NIC the match finds, "+nic.IfName+", is renamed "+name+
			": it is up, and the kernel renames only a link that is down, so netagent sets it down and up again", name)
	}
	return disrupt.In("the NIC the match finds, " + nic.IfName + ", is renamed " + name + " (it is down)")
}

// MatchedLink is the NIC want's match finds among the links before holds
// that netagent does not own (its external Links), when the match can be
// told from them: keys mac and name only (the name a NIC came up with
// from found, for one netagent renamed); nil when it cannot, or when none
// or more than one is found (the create fails: see nicFor).
func MatchedLink(want *items.Interface, before *dg.Graph, found Found) *items.Link {
	m := want.Match
	if m == nil || before == nil || len(m.PermanentMAC) > 0 || m.Driver != "" || m.Path != "" {
		return nil
	}
	var hit *items.Link
	for it := range before.Unordered() {
		l, ok := it.(*items.Link)
		if !ok || l.IfName == "lo" {
			continue
		}
		n := items.NIC{Name: l.IfName, Index: l.Index, MAC: l.MAC}
		if o := found[l.IfName]; o != nil && o.Name != nil {
			n.Name = *o.Name
		}
		if m.Matches(n) {
			if hit != nil {
				return nil
			}
			hit = l
		}
	}
	return hit
}

// nameBack says what the delete of the physical interface name does to
// its NIC's name: one netagent renamed gets its own back (a flap).
func (f Found) nameBack(name string) disrupt.Prediction {
	if o := f[name]; o != nil && o.Name != nil && *o.Name != name && o.check(name) == nil {
		return renameFlap(name, "renamed back to "+*o.Name)
	}
	return disrupt.In("")
}

// restoredWhy is what the delete of a physical interface does.
const restoredWhy = "the NIC gets back the settings it had before netagent"

// PredictRestore says what the delete of a physical interface does to
// traffic: obs is the NIC as the kernel holds it; restorePhysical gives it
// back what found records, with converge's steps (a NIC found down is set
// down again). Without found (nil), a NIC that is up may be set down.
func PredictRestore(obs *items.Interface, found Found) disrupt.Prediction {
	if found == nil {
		if obs.AdminUp {
			return disrupt.Maybe(disrupt.Down, restoredWhy+": set down if it was down before netagent", obs.IfName)
		}
		return disrupt.In(restoredWhy)
	}
	restored, ok := found.Restored(obs)
	if !ok {
		return disrupt.In(restoredWhy + ": netagent changed none of them")
	}
	p := convergeDisruption(obs, restored)
	if p.Effect == disrupt.None {
		p.Why = restoredWhy
		return p
	}
	p.Why = restoredWhy + ": " + p.Why
	return p
}

// convergeDisruption follows converge's steps (runSteps): down, MTU, MAC,
// alias, the kind's settings, up.
func convergeDisruption(obs, want *items.Interface) disrupt.Prediction {
	name := want.IfName
	p := disrupt.In("changed in place")
	if !want.AdminUp && obs.AdminUp {
		p = disrupt.Worse(p, disrupt.Certainly(disrupt.Down, "set down", append([]string{name}, companions(want)...)...))
	}
	if want.MTU != 0 && want.MTU != obs.MTU && want.Kind == items.KindPhysical {
		p = disrupt.Worse(p, disrupt.Maybe(disrupt.Flap, fmt.Sprintf("mtu %d -> %d: many NIC drivers reset the link (carrier down and up) on an MTU change", obs.MTU, want.MTU), name))
	}
	if want.MAC != nil && !bytes.Equal(want.MAC, obs.MAC) && obs.AdminUp && want.AdminUp {
		if _, live := linkKinds[want.Kind].(liveMAC); !live {
			p = disrupt.Worse(p, disrupt.Maybe(disrupt.Flap, "mac "+want.MAC.String()+": set down for the change if the driver refuses it while up (EBUSY)", name))
		}
	}
	if kd, ok := linkKinds[want.Kind].(kindDisruption); ok && obs.Kind == want.Kind {
		p = disrupt.Worse(p, kd.disruption(obs, want))
	}
	return p
}

// PredictPort says what an operation on a port does to traffic: old is the
// port as the kernel holds it before (nil for a create), want the
// operation's item (the old one for a delete). A bond port is set down to
// be enslaved and up again, and the kernel closes it when released (the
// configurator sets it up again): it flaps. The kernel cycles a link that
// joins or leaves a vrf. A bridge port forwards in no bridge between its
// release and its enslave; the link itself stays up. A bridge or a bond
// whose last port leaves (none other in before, the state the operation
// starts from) loses its carrier until a port joins.
func PredictPort(op reconciler.Operation, recreate bool, old, want *items.Port, before *dg.Graph) disrupt.Prediction {
	if op == reconciler.OpCreate {
		return portJoins(recreate, want)
	}
	from := want
	if old != nil {
		from = old
	}
	p := portLeaves(op, recreate, old, want)
	if from.MasterKind == items.KindBridge || from.MasterKind == items.KindBond {
		if op == reconciler.OpDelete || from.Master != want.Master {
			p = disrupt.Worse(p, lastPortLeaves(from, before))
		}
	}
	return p
}

// portJoins: a port joins its master (again, for a recreate).
func portJoins(recreate bool, want *items.Port) disrupt.Prediction {
	if recreate {
		return masterFlap(want, disrupt.Certainly(disrupt.Detach, "joins "+want.Master+" again"))
	}
	return masterFlap(want, disrupt.In("joins "+want.Master))
}

// portLeaves: a port changes in place, moves, or leaves its master.
func portLeaves(op reconciler.Operation, recreate bool, old, want *items.Port) disrupt.Prediction {
	switch {
	case op == reconciler.OpModify && old != nil && old.Master == want.Master:
		return disrupt.In("bridge port settings changed in place")
	case op == reconciler.OpModify && old != nil:
		p := disrupt.Certainly(disrupt.Detach, fmt.Sprintf("moves from %s to %s: released, then enslaved", old.Master, want.Master))
		return masterFlap(old, masterFlap(want, p))
	case recreate:
		return masterFlap(want, disrupt.Certainly(disrupt.Detach, "leaves "+want.Master+" while it is recreated"))
	}
	p := disrupt.Certainly(disrupt.Removed, "leaves "+want.Master)
	return masterFlap(want, p)
}

// lastPortLeaves: a bridge or a bond without ports has no carrier. The
// master of port goes down when no other port of it is in before and it is
// up there.
func lastPortLeaves(port *items.Port, before *dg.Graph) disrupt.Prediction {
	if before == nil {
		return disrupt.In("")
	}
	if m, ok := before.Get(items.InterfaceRef(port.Master)); ok {
		if m, ok := m.(*items.Interface); ok && !m.AdminUp {
			return disrupt.In("")
		}
	}
	for it := range before.Items() {
		if o, ok := it.(*items.Port); ok && o.Master == port.Master && o.IfName != port.IfName {
			return disrupt.In("")
		}
	}
	return disrupt.Certainly(disrupt.Down, port.Master+" loses its carrier: its last port leaves", port.Master)
}

// masterFlap adds to p the flap of the port's link that its master's kind
// causes.
func masterFlap(port *items.Port, p disrupt.Prediction) disrupt.Prediction {
	switch port.MasterKind {
	case items.KindBond:
		return disrupt.Worse(p, disrupt.Certainly(disrupt.Flap, "a bond port is set down to be enslaved or released, and up again", port.IfName))
	case items.KindVRF:
		return disrupt.Worse(p, disrupt.Certainly(disrupt.Flap, "the kernel cycles a link that joins or leaves a vrf", port.IfName))
	}
	return p
}
