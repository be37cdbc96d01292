package link

import (
	"errors"
	"fmt"

	"github.com/vishvananda/netlink"

	"github.com/netagent/netagent/configurators/netnsx"
	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/items"
)

// dumpAttempts is how often a link dump is tried when the kernel reports
// it was interrupted by a change.
const dumpAttempts = 5

// ReadBack reads the namespace's links into items:
//
//   - a Link (external) for every link netagent does not own;
//   - an Interface for every link netagent owns (bond, vlan, bridge, veth,
//     macvlan, vxlan), and for every link it does not own that hint declares
//     as a physical interface;
//   - a Port for every link enslaved to a bond or bridge netagent owns.
//
// hint is the intended graph (may be nil). For an item of hint, the fields
// it leaves unset are read back unset (see mask), so that the read-back item
// Equals the intended one when the kernel matches it. Without a hint every
// value is the kernel's. One end of a veth pair whose other end is declared
// in hint while it is not is left out: it is part of its peer's item.
func ReadBack(t *netnsx.Target, hint *dg.Graph) ([]dg.Item, error) {
	return newKernel(t).readBack(hint)
}

func (k *kernel) readBack(hint *dg.Graph) ([]dg.Item, error) {
	links, err := k.listLinks()
	if err != nil {
		return nil, err
	}
	r := &reader{k: k, hint: hint, byIndex: make(map[int]netlink.Link, len(links))}
	for _, l := range links {
		r.byIndex[l.Attrs().Index] = l
	}
	for _, l := range links {
		if err := r.read(l); err != nil {
			return nil, err
		}
	}
	return r.out, nil
}

func (k *kernel) listLinks() ([]netlink.Link, error) {
	var err error
	for range dumpAttempts {
		var links []netlink.Link
		if links, err = k.nl.LinkList(); err == nil {
			return links, nil
		}
		if !errors.Is(err, netlink.ErrDumpInterrupted) {
			break
		}
	}
	return nil, fmt.Errorf("listing links: %w", err)
}

// reader turns one dump into items.
type reader struct {
	k       *kernel
	hint    *dg.Graph
	byIndex map[int]netlink.Link
	out     []dg.Item
}

func (r *reader) nameOf(index int) string {
	if l, ok := r.byIndex[index]; ok {
		return l.Attrs().Name
	}
	return ""
}

func (r *reader) read(l netlink.Link) error {
	if err := r.readInterface(l); err != nil {
		return err
	}
	if !owned(l) {
		r.out = append(r.out, externalLink(l))
	}
	return r.readPort(l)
}

func (r *reader) readInterface(l netlink.Link) error {
	want := r.hintInterface(l.Attrs().Name)
	if !owned(l) && (want == nil || want.Kind != items.KindPhysical) {
		return nil
	}
	if owned(l) && (kindOf(l) == "" || r.isDeclaredPeer(l, want)) {
		return nil
	}
	obs, err := r.k.observe(l, r.nameOf)
	if err != nil {
		return err
	}
	r.out = append(r.out, mask(obs, want))
	return nil
}

// isDeclaredPeer reports whether l is the undeclared end of a veth pair
// whose other end (in this namespace) hint declares.
func (r *reader) isDeclaredPeer(l netlink.Link, want *items.Interface) bool {
	if r.hint == nil || want != nil || l.Type() != string(items.KindVeth) || l.Attrs().NetNsID >= 0 {
		return false
	}
	peer := r.hintInterface(r.nameOf(l.Attrs().ParentIndex))
	return peer != nil && peer.Kind == items.KindVeth
}

func (r *reader) readPort(l netlink.Link) error {
	master, ok := r.byIndex[l.Attrs().MasterIndex]
	if !ok || !owned(master) {
		return nil
	}
	kind := kindOf(master)
	if kind != items.KindBond && kind != items.KindBridge {
		return nil
	}
	p := &items.Port{IfName: l.Attrs().Name, Master: master.Attrs().Name, MasterKind: kind}
	if kind == items.KindBridge {
		cost, err := r.k.portCost(l.Attrs().Index)
		if err != nil {
			return fmt.Errorf("reading port %s: %w", p.IfName, err)
		}
		p.Cost = cost
	}
	r.out = append(r.out, maskPort(p, r.hintPort(p.IfName)))
	return nil
}

func (r *reader) hintInterface(name string) *items.Interface {
	if r.hint == nil {
		return nil
	}
	item, ok := r.hint.Get(items.InterfaceRef(name))
	if !ok {
		return nil
	}
	i, _ := item.(*items.Interface)
	return i
}

func (r *reader) hintPort(name string) *items.Port {
	if r.hint == nil {
		return nil
	}
	item, ok := r.hint.Get(dg.ItemRef{Type: items.TypePort, Name: name})
	if !ok {
		return nil
	}
	p, _ := item.(*items.Port)
	return p
}

// externalLink describes a link netagent does not own as an external item.
func externalLink(l netlink.Link) *items.Link {
	a := l.Attrs()
	kind := l.Type()
	if kind == "device" {
		kind = ""
	}
	return &items.Link{
		IfName:  a.Name,
		Index:   a.Index,
		Kind:    kind,
		MAC:     cloneMAC(a.HardwareAddr),
		AdminUp: a.Flags&netUp != 0,
		OperUp:  a.OperState == netlink.OperUp,
		Carrier: a.RawFlags&iffLowerUp != 0,
	}
}

// iffLowerUp is IFF_LOWER_UP: the device reports carrier.
const iffLowerUp = 0x10000
