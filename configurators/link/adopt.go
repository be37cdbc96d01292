package link

import (
	"errors"
	"fmt"

	"github.com/vishvananda/netlink"

	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/internal/netnsx"
	"github.com/netagent/netagent/items"
	"github.com/netagent/netagent/reconciler"
)

// Options change how the configurators treat the kernel's links.
type Options struct {
	// Adopt takes over a virtual link of an intended interface's name
	// that someone else made, instead of refusing it (ErrNotOwned): the
	// mark is written on it (its alias, takeOver) and it is converged as
	// a link of netagent's is; one that differs in what cannot change in
	// place (its kind, a VXLAN's VNI, a veth's peer, ...) is refused
	// (errAdoptRecreates): adopt never deletes someone else's link. A physical interface is never marked, and a NIC
	// whose originals are recorded is never taken over. Adoptions says
	// which creates adopt.
	Adopt bool
}

// RegisterWith is Register with opts.
func RegisterWith(reg *reconciler.TypeRegistry, t *netnsx.Target, stateDir string, opts Options) error {
	ifaces, err := NewInterfaceConfigurator(t, stateDir)
	if err != nil {
		return err
	}
	ifaces.adopt = opts.Adopt
	return registerAll(reg, ifaces, NewPortConfigurator(t), NewBridgeVLANConfigurator(t))
}

// registerAll registers the three configurators of the package.
func registerAll(reg *reconciler.TypeRegistry, ifaces *InterfaceConfigurator, ports *PortConfigurator, vlans *BridgeVLANConfigurator) error {
	if err := reg.Register(items.TypeInterface, ifaces); err != nil {
		return err
	}
	if err := reg.Register(items.TypePort, ports); err != nil {
		return err
	}
	return reg.Register(items.TypeBridgeVLANs, vlans)
}

// takeOver makes someone else's link l, of want's name, netagent's (the
// create of want with Options.Adopt). When want can be had in place, the
// mark alone is written (the alias netagent's own links carry, with
// want's alias), and on a veth's peer in this namespace (with the alias
// it has), then l is converged as any link of netagent's: nothing more is
// written when l equals want. Otherwise (only a re-create would make l
// want) l is left as it is and the create fails (notOwnedLink), as plan
// predicts (clashes).
func (k *kernel) takeOver(l netlink.Link, want *items.Interface) error {
	obs, err := k.observe(l, k.nameOf, true)
	if err != nil {
		return err
	}
	if items.InterfaceNeedsRecreate(mask(obs, want), want) {
		return notOwnedLink(obs, want)
	}
	marked := markedAlias(want.Alias)
	if err := k.nl.LinkSetAlias(l, marked); err != nil {
		return fmt.Errorf("marking %s %s to adopt it: %w", want.Kind, want.IfName, err)
	}
	l.Attrs().Alias = marked
	if v, ok := obs.Attrs.(*items.VethAttrs); ok && v.PeerNetns == "" && v.Peer != "" {
		if err := k.markForeign(v.Peer); err != nil {
			return err
		}
	}
	return k.converge(l, want)
}

// errAdoptRecreates: someone else's link differs from the item in what
// only a delete and a create would change.
var errAdoptRecreates = errors.New("the kernel changes a link's kind and its kind's fixed settings " +
	"(a VXLAN's VNI or port, a VLAN's id or parent, a veth's peer, a macvlan's parent, ...) only by deleting and re-creating the link, " +
	"and --adopt never deletes someone else's link: delete it by hand and apply again, or make the intent's as the link is")

// notOwnedLink is the error the create of want fails with over someone
// else's link that it leaves, observed as obs (nil: not read):
// ErrNotOwned, saying, for a link that only a re-create would make want,
// what differs and why adopt does not take it (errAdoptRecreates).
// clashes predicts the same error.
func notOwnedLink(obs, want *items.Interface) error {
	err := fmt.Errorf("creating %s %s: %w", want.Kind, want.IfName, ErrNotOwned)
	if obs == nil || !items.InterfaceNeedsRecreate(mask(obs, want), want) {
		return err
	}
	return fmt.Errorf("%w, as %s (the intent's: %s): %w", err, kindText(obs), kindText(want), errAdoptRecreates)
}

// kindText is i's kind and settings, `ip link` style.
func kindText(i *items.Interface) string {
	s := string(i.Kind)
	if i.Attrs != nil && i.Attrs.String() != "" {
		s += " " + i.Attrs.String()
	}
	return s
}

// foreignClash is the error the create of want fails with over l,
// someone else's link of its name (notOwnedLink).
func (k *kernel) foreignClash(l netlink.Link, want *items.Interface, nameOf func(int) string) error {
	obs, err := k.observe(l, nameOf, true)
	if err != nil {
		obs = nil // read as ErrNotOwned alone
	}
	return notOwnedLink(obs, want)
}

// markForeign marks the link name of this namespace, keeping its alias,
// unless it carries the mark already.
func (k *kernel) markForeign(name string) error {
	l, err := k.nl.LinkByName(name)
	if err != nil {
		return fmt.Errorf("finding veth peer %s: %w", name, err)
	}
	if owned(l) {
		return nil
	}
	if err := k.nl.LinkSetAlias(l, markedAlias(l.Attrs().Alias)); err != nil {
		return fmt.Errorf("marking veth peer %s to adopt it: %w", name, err)
	}
	return nil
}

// Adoptions finds the interfaces of hint whose name a virtual link that
// netagent does not own has, which a create with Options.Adopt takes
// over, and returns for each that link as the read-back of a link of
// netagent's describes it (the fields the item leaves unset read back
// unset): Equal to the item when the adoption writes only the mark. A
// link that only a re-create would make the item is not adopted (its
// create fails: notOwnedLink, a clash). It
// finds too the physical interfaces whose match finds, alone, the NIC
// that has their name and is not recorded yet (matchedAdoption): their
// modify records the match and writes nothing else when Equal.
func Adoptions(t *netnsx.Target, stateDir string, hint *dg.Graph) (map[dg.ItemRef]dg.Item, error) {
	if hint == nil {
		return nil, nil
	}
	k, err := newKernel(t, stateDir)
	if err != nil {
		return nil, err
	}
	return k.adoptions(hint)
}

func (k *kernel) adoptions(hint *dg.Graph) (map[dg.ItemRef]dg.Item, error) {
	now, err := k.readLinksNow()
	if err != nil {
		return nil, err
	}
	out := make(map[dg.ItemRef]dg.Item)
	for it := range hint.Items() {
		want, ok := it.(*items.Interface)
		if !ok {
			continue
		}
		if want.Kind == items.KindPhysical {
			got, err := k.matchedAdoption(want, now)
			if err != nil {
				return nil, err
			}
			if got != nil {
				out[dg.Ref(it)] = got
			}
			continue
		}
		l, exists := now.byName[want.IfName]
		if !exists || now.owns(l) || now.st.originalOf(l) != nil {
			continue
		}
		obs, err := k.observe(l, now.nameOf, true)
		if err != nil {
			return nil, err
		}
		if got := mask(obs, want); !items.InterfaceNeedsRecreate(got, want) {
			out[dg.Ref(it)] = got // else refused: a clash (notOwnedLink)
		}
	}
	if err := k.portAdoptions(hint, now, out); err != nil {
		return nil, err
	}
	return out, k.vlanAdoptions(hint, now, out)
}

// vlanAdoptions adds to out the bridge VLAN settings of hint that the
// kernel holds already, on a bridge the adoption takes over (in out) or
// netagent owns, for the bridge itself or a member enslaved to it: they
// carry no mark of their own, and their create writes nothing (see
// convergeVLANs), so the plan lists them as adopted, not created.
func (k *kernel) vlanAdoptions(hint *dg.Graph, now *linksNow, out map[dg.ItemRef]dg.Item) error {
	var all map[int]items.VLANSet
	for it := range hint.Items() {
		want, ok := it.(*items.BridgeVLANs)
		if !ok {
			continue
		}
		bridge, ok := now.byName[want.Bridge]
		if !ok || bridge.Type() != string(items.KindBridge) {
			continue
		}
		if _, adopted := out[items.InterfaceRef(want.Bridge)]; !adopted && !now.owns(bridge) {
			continue
		}
		member := bridge
		if !want.Self() {
			if member, ok = now.byName[want.IfName]; !ok || member.Attrs().MasterIndex != bridge.Attrs().Index {
				continue
			}
		}
		if all == nil {
			var err error
			if all, err = k.raw.bridgeVLANs(); err != nil {
				return fmt.Errorf("reading vlans of %s: %w", want.IfName, err)
			}
		}
		if add, del := vlanDiff(all[member.Attrs().Index], want.VLANs); len(add) == 0 && len(del) == 0 {
			out[dg.Ref(it)] = want
		}
	}
	return nil
}

// matchedAdoption is, for a physical interface with a match (an
// import's permanent MAC), the NIC of its name that netagent has not
// recorded yet and that the match finds, and finds alone, as read back
// once its match is recorded: its modify then writes nothing to the
// kernel (the NIC has the name already), only the match in the state
// directory, which is a NIC's mark. nil for any other.
func (k *kernel) matchedAdoption(want *items.Interface, now *linksNow) (dg.Item, error) {
	l, exists := now.byName[want.IfName]
	if want.Match.Empty() || !exists || now.st.originalOf(l) != nil {
		return nil, nil
	}
	if nic, err := k.findNIC(want); err != nil || nic.Attrs().Index != l.Attrs().Index {
		return nil, nil // not found, or found twice: the modify fails as without adopt
	}
	obs, err := k.observe(l, now.nameOf, false)
	if err != nil {
		return nil, err
	}
	got := mask(obs, want)
	got.Match = want.Match
	return got, nil
}

// portAdoptions adds to out the ports of hint whose link is enslaved to
// their intended master already, a link the adoption takes over (in
// out) or one netagent owns by now (the master's adoption ran in an
// earlier wave: a trial's journal asks wave by wave): the port is then
// netagent's with its master, as it reads back (cost and priority of a
// bridge port).
func (k *kernel) portAdoptions(hint *dg.Graph, now *linksNow, out map[dg.ItemRef]dg.Item) error {
	for it := range hint.Items() {
		want, ok := it.(*items.Port)
		if !ok {
			continue
		}
		l, ok := now.byName[want.IfName]
		if !ok {
			continue
		}
		master, ok := now.byIndex[l.Attrs().MasterIndex]
		if !ok || master.Attrs().Name != want.Master {
			continue
		}
		if _, adopted := out[items.InterfaceRef(want.Master)]; !adopted && !now.owns(master) {
			continue
		}
		p := &items.Port{IfName: want.IfName, Master: want.Master, MasterKind: kindOf(master)}
		if p.MasterKind == items.KindBridge {
			cost, prio, err := k.portSettings(l.Attrs().Index)
			if err != nil {
				return fmt.Errorf("reading port %s: %w", p.IfName, err)
			}
			p.Cost, p.Priority = cost, &prio
		}
		out[dg.Ref(it)] = maskPort(p, want)
	}
	return nil
}

// Adoptions finds, as Adoptions does in a namespace, the intended links
// that a create with Options.Adopt takes over in the fake.
func (f *FakeKernel) Adoptions(stateDir string, hint *dg.Graph) (map[dg.ItemRef]dg.Item, error) {
	if hint == nil {
		return nil, nil
	}
	return f.kernel(stateDir).adoptions(hint)
}

// RegisterWith is Register with opts, as RegisterWith over a namespace.
func (f *FakeKernel) RegisterWith(reg *reconciler.TypeRegistry, stateDir string, opts Options) error {
	return registerAll(reg, &InterfaceConfigurator{k: f.kernel(stateDir), adopt: opts.Adopt},
		&PortConfigurator{k: &kernel{nl: f, raw: f, ns: f}}, &BridgeVLANConfigurator{k: &kernel{nl: f, raw: f, ns: f}})
}
