package link

import (
	"errors"
	"fmt"

	"github.com/vishvananda/netlink"

	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/internal/netnsx"
	"github.com/netagent/netagent/items"
)

// dumpAttempts is how often a link dump is tried when the kernel reports
// it was interrupted by a change.
const dumpAttempts = 5

// ReadBack reads the namespace's links into items:
//
//   - a Link (external) for every link netagent does not own;
//   - an Interface for every link netagent owns (bond, vlan, bridge, veth,
//     macvlan, vxlan), for every link it does not own that hint declares
//     as a physical interface, and for every physical link whose original
//     settings are recorded (so that, once it leaves the intent, its
//     delete gives them back);
//   - a Port for every link enslaved to a bond, bridge or vrf netagent owns;
//   - a BridgeVLANs for such a bridge and each of its ports, when hint
//     declares one or the membership is not the kernel's default (see
//     readBridgeVLANs).
//
// Ownership is the mark, or the create journal of an interrupted create
// (see owns); a link hint declares physical, or whose originals are
// recorded, is never owned, whatever its alias. A journaled link without
// the mark that hint declares is read back as an external link only, so
// that its create adopts (and marks) it; one hint does not declare is read
// back as owned, so that it is deleted.
//
// stateDir is the state directory ("": none, only the marks count). hint
// is the intended graph (may be nil). For an item of hint, the fields it
// leaves unset are read back unset (see mask), so that the read-back item
// Equals the intended one when the kernel matches it; a physical setting
// netagent changed that hint now leaves unset is read back as the kernel
// holds it, so that a modify gives it back. Without a hint every value is
// the kernel's. One end of a veth pair whose other end is declared in hint
// while it is not is left out: it is part of its peer's item.
func ReadBack(t *netnsx.Target, stateDir string, hint *dg.Graph) ([]dg.Item, error) {
	k, err := newKernel(t, stateDir)
	if err != nil {
		return nil, err
	}
	return k.readBack(hint)
}

func (k *kernel) readBack(hint *dg.Graph) ([]dg.Item, error) {
	r, links, err := k.newReader(hint, false)
	if err != nil {
		return nil, err
	}
	for _, l := range links {
		if err := r.read(l); err != nil {
			return nil, err
		}
	}
	return r.out, nil
}

// newReader dumps the links and returns a reader of them (others: for an
// import, see ReadOthers).
func (k *kernel) newReader(hint *dg.Graph, others bool) (*reader, []netlink.Link, error) {
	st, err := k.st.snapshot()
	if err != nil {
		return nil, nil, err
	}
	links, err := k.listLinks()
	if err != nil {
		return nil, nil, err
	}
	rk := *k
	rk.raw = &dumpedInfo{rawOps: k.raw}
	r := &reader{k: &rk, hint: hint, st: st, others: others, byIndex: make(map[int]netlink.Link, len(links))}
	for _, l := range links {
		r.byIndex[l.Attrs().Index] = l
	}
	return r, links, nil
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
	st      nsState
	byIndex map[int]netlink.Link
	out     []dg.Item
	bv      bridgeVLANReads // bridge VLANs and default_pvids, read at first need
	// others: the reader reads the links netagent does not own, for an
	// import (see ReadOthers), instead of its own.
	others bool
}

// takes reports whether the reader describes l's ports and bridge VLANs:
// netagent's links, or for an import the others'.
func (r *reader) takes(l netlink.Link) bool { return r.owns(l) != r.others }

func (r *reader) nameOf(index int) string {
	if l, ok := r.byIndex[index]; ok {
		return l.Attrs().Name
	}
	return ""
}

// owns reports whether the read-back takes l as netagent's (see ReadBack).
func (r *reader) owns(l netlink.Link) bool {
	want := r.hintInterface(l.Attrs().Name)
	switch {
	case want != nil && want.Kind == items.KindPhysical:
		return false
	case owned(l):
		return owns(l, r.st, r.nameOf)
	}
	return want == nil && owns(l, r.st, r.nameOf)
}

func (r *reader) read(l netlink.Link) error {
	isOwned := r.owns(l)
	if err := r.readInterface(l, isOwned); err != nil {
		return err
	}
	if !isOwned {
		r.out = append(r.out, externalLink(l))
	}
	if err := r.readPort(l); err != nil {
		return err
	}
	return r.readBridgeVLANs(l)
}

func (r *reader) readInterface(l netlink.Link, isOwned bool) error {
	want := r.hintInterface(l.Attrs().Name)
	key, orig := r.st.find(l.Attrs(), l.Attrs().Name)
	if orig != nil && key != l.Attrs().Name && r.hintInterface(key) != nil {
		orig = nil // renamed back by someone, or killed half-way: the interface key takes it again
	}
	physical := !isOwned && (want != nil && want.Kind == items.KindPhysical || orig != nil && !orig.empty())
	if physical && want == nil && r.k.claimedInTransit(l, r.st, r.hint) {
		physical = false // a NIC moved aside, which an interface of the intent takes (swap.go)
	}
	if !isOwned && !physical {
		return nil
	}
	if isOwned && (kindOf(l) == "" || r.isDeclaredPeer(l, want)) {
		return nil
	}
	obs, err := r.k.observe(l, r.nameOf, isOwned)
	if err != nil {
		return err
	}
	got := mask(obs, want)
	if physical {
		got.Match = r.k.readMatch(l, r.st) // match.go
	}
	if physical && want != nil {
		unmaskChanged(got, obs, want, orig)
		if owned(l) && orig == nil {
			// A declared NIC that carries the mark and is not recorded
			// yet: read back as different, so that a modify records it
			// (see convergePhysical) and it is never taken for netagent's.
			got.Alias = obs.Alias
		}
	}
	r.out = append(r.out, got)
	return nil
}

// unmaskChanged reads back, as the kernel holds them, the settings of a
// physical link that netagent changed (orig records them) and want now
// leaves unset, so that the item differs and a modify gives them back.
func unmaskChanged(got, obs, want *items.Interface, orig *original) {
	if orig == nil || want.Kind != items.KindPhysical {
		return
	}
	if orig.MTU != nil && want.MTU == 0 && obs.MTU != *orig.MTU {
		got.MTU = obs.MTU
	}
	if orig.MAC != nil && want.MAC == nil && obs.MAC.String() != *orig.MAC {
		got.MAC = obs.MAC
	}
	if orig.Alias != nil && want.Alias == "" && obs.Alias != *orig.Alias {
		got.Alias = obs.Alias
	}
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
	if !ok || !r.takes(master) {
		return nil
	}
	kind := kindOf(master)
	if !items.TakesPorts(kind) {
		return nil
	}
	p := &items.Port{IfName: l.Attrs().Name, Master: master.Attrs().Name, MasterKind: kind}
	if kind == items.KindBridge {
		cost, prio, err := r.k.portSettings(l.Attrs().Index)
		if err != nil {
			return fmt.Errorf("reading port %s: %w", p.IfName, err)
		}
		p.Cost, p.Priority = cost, &prio
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
