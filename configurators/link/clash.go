package link

import (
	"fmt"

	"github.com/vishvananda/netlink"

	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/internal/netnsx"
	"github.com/netagent/netagent/items"
)

// Clashes finds the items of hint (the intended graph) whose place in the
// kernel a link netagent does not own already holds, and returns for each
// the error that creating it fails with (ErrNotOwned):
//
//   - a virtual interface whose name a link without netagent's mark has
//     (a physical interface is not owned by design: no clash);
//   - a veth not there yet whose peer name a link of this namespace
//     without the mark has (the kernel refuses the create);
//   - a port enslaved to a master that is not netagent's and not its
//     intended one (the port is never taken from it).
//
// A link is netagent's as the configurators see it (see owns): its mark,
// or the create journal in stateDir ("": none), so that a link a killed
// agent added and did not mark is no clash (the create adopts it).
//
// It is ReadBack's counterpart for `plan`, which predicts these failures
// instead of planning creates that apply would then fail.
func Clashes(t *netnsx.Target, stateDir string, hint *dg.Graph) (map[dg.ItemRef]error, error) {
	if hint == nil {
		return nil, nil
	}
	k, err := newKernel(t, stateDir)
	if err != nil {
		return nil, err
	}
	return k.clashes(hint)
}

// linksNow is the namespace's state and links, by name and by index.
type linksNow struct {
	st      nsState
	byName  map[string]netlink.Link
	byIndex map[int]netlink.Link
}

// readLinksNow reads the state directory and lists the links.
func (k *kernel) readLinksNow() (*linksNow, error) {
	st, err := k.st.snapshot()
	if err != nil {
		return nil, err
	}
	links, err := k.listLinks()
	if err != nil {
		return nil, err
	}
	n := &linksNow{st: st, byName: make(map[string]netlink.Link, len(links)), byIndex: make(map[int]netlink.Link, len(links))}
	for _, l := range links {
		n.byName[l.Attrs().Name] = l
		n.byIndex[l.Attrs().Index] = l
	}
	return n, nil
}

// nameOf is the name of the link of index i ("" for none).
func (n *linksNow) nameOf(i int) string {
	if l, ok := n.byIndex[i]; ok {
		return l.Attrs().Name
	}
	return ""
}

// owns reports whether netagent owns l (see owns).
func (n *linksNow) owns(l netlink.Link) bool { return owns(l, n.st, n.nameOf) }

func (k *kernel) clashes(hint *dg.Graph) (map[dg.ItemRef]error, error) {
	kk := *k
	kk.intent, kk.intentKnown = hint, true
	k = &kk
	now, err := k.readLinksNow()
	if err != nil {
		return nil, err
	}
	byName, byIndex, isOwned := now.byName, now.byIndex, now.owns
	out := make(map[dg.ItemRef]error)
	for it := range hint.Items() {
		var err error
		switch x := it.(type) {
		case *items.Interface:
			err = interfaceClash(x, byName, isOwned)
			if l, ok := byName[x.IfName]; ok && err != nil && x.Kind != items.KindPhysical && !isOwned(l) {
				err = k.foreignClash(l, x, now.nameOf)
			}
			if x.Kind == items.KindPhysical && x.Match != nil {
				_, _, err = k.nicFor(x) // match.go
			}
		case *items.Port:
			err = portClash(x, byName, byIndex, isOwned)
		}
		if err != nil {
			out[dg.Ref(it)] = err
		}
	}
	return out, nil
}

// interfaceClash is the error creating want fails with, if a foreign link
// holds its name or, for a new veth, its peer's name.
func interfaceClash(want *items.Interface, byName map[string]netlink.Link, owned func(netlink.Link) bool) error {
	if want.Kind == items.KindPhysical {
		return nil
	}
	l, exists := byName[want.IfName]
	switch {
	case exists && !owned(l):
		return fmt.Errorf("creating %s %s: %w", want.Kind, want.IfName, ErrNotOwned)
	case exists || items.LocalPeer(want) == "":
		return nil
	}
	if peer, taken := byName[items.LocalPeer(want)]; taken && !owned(peer) {
		return fmt.Errorf("creating veth %s: its peer's name %s: %w", want.IfName, items.LocalPeer(want), ErrNotOwned)
	}
	return nil
}

// portClash is the error enslaving p fails with, if its link is enslaved
// to a master that is not netagent's (and not the intended master, whose
// own clash is the interface's).
func portClash(p *items.Port, byName map[string]netlink.Link, byIndex map[int]netlink.Link,
	owned func(netlink.Link) bool) error {
	l, ok := byName[p.IfName]
	if !ok {
		return nil
	}
	master, ok := byIndex[l.Attrs().MasterIndex]
	if !ok || owned(master) || master.Attrs().Name == p.Master {
		return nil
	}
	return fmt.Errorf("port %s is enslaved to %s: %w", p.IfName, master.Attrs().Name, ErrNotOwned)
}
