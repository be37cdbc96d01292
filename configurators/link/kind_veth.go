package link

import (
	"fmt"
	"os"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"

	"github.com/netagent/netagent/items"
)

// netnsDir is where named network namespaces are bind-mounted.
const netnsDir = "/run/netns"

// vethKind creates veth pairs: the peer is created with the link (in its
// namespace when it has one) and marked as netagent's when it stays in
// this one. Nothing of a pair changes in place.
type vethKind struct{ plainKind }

// liveMAC: a veth takes a new MAC while up (checked on the host kernel).
func (vethKind) liveMAC() {}

// downWith: the peer, when it is in this namespace, goes down with the
// veth: deleting (or recreating) a veth deletes (recreates) its peer, and
// setting it down takes the peer's carrier away.
func (vethKind) downWith(want *items.Interface) []string {
	if a := items.AttrsOf[*items.VethAttrs](want); a != nil && a.Peer != "" && a.PeerNetns == "" {
		return []string{a.Peer}
	}
	return nil
}

func (vethKind) newLink(k *kernel, attrs netlink.LinkAttrs, want *items.Interface) (netlink.Link, func(), error) {
	return k.newVeth(attrs, items.AttrsOf[*items.VethAttrs](want))
}

func (vethKind) afterCreate(k *kernel, want *items.Interface) error {
	return k.markPeer(items.AttrsOf[*items.VethAttrs](want))
}

func (vethKind) observe(k *kernel, l netlink.Link, nameOf func(int) string) (items.KindAttrs, error) {
	v, ok := l.(*netlink.Veth)
	if !ok {
		return nil, nil
	}
	attrs, err := k.observeVeth(v, nameOf)
	if err != nil {
		return nil, err
	}
	return attrs, nil
}

// observeVeth names a veth's peer. In the same namespace the peer is
// IFLA_LINK; in another one it is IFLA_LINK in the namespace that
// IFLA_LINK_NETNSID designates, found among the named namespaces.
func (k *kernel) observeVeth(v *netlink.Veth, nameOf func(int) string) (*items.VethAttrs, error) {
	a := v.Attrs()
	if a.NetNsID < 0 {
		return &items.VethAttrs{Peer: nameOf(a.ParentIndex)}, nil
	}
	nsName, err := k.ns.namespaceByID(a.NetNsID)
	if err != nil || nsName == "" {
		return &items.VethAttrs{}, err
	}
	peer, err := k.ns.linkNameIn(nsName, a.ParentIndex)
	if err != nil {
		return nil, err
	}
	return &items.VethAttrs{Peer: peer, PeerNetns: nsName}, nil
}

// nsOps reaches the named namespaces a veth's peer may be created in or
// live in: the only requests of the configurators that leave the target
// namespace's handle.
type nsOps interface {
	// open opens the named namespace for a create request
	// (IFLA_NET_NS_FD); the returned func closes it.
	open(name string) (netlink.NsFd, func(), error)
	// namespaceByID finds the named namespace that the target namespace
	// knows by nsid, or "" if none of them is.
	namespaceByID(nsid int) (string, error)
	// linkNameIn returns the name of the link with the index in the named
	// namespace.
	linkNameIn(nsName string, index int) (string, error)
}

// namedNamespaces are the namespaces under /run/netns, seen from the
// target namespace's handle nl.
type namedNamespaces struct {
	nl nlOps
}

var _ nsOps = namedNamespaces{}

func (namedNamespaces) open(name string) (netlink.NsFd, func(), error) {
	ns, err := netns.GetFromName(name)
	if err != nil {
		return 0, nil, fmt.Errorf("opening peer namespace %s: %w", name, err)
	}
	return netlink.NsFd(int(ns)), func() { ns.Close() }, nil
}

func (n namedNamespaces) namespaceByID(nsid int) (string, error) {
	entries, err := os.ReadDir(netnsDir)
	if err != nil {
		if os.IsNotExist(err) {
			return "", nil
		}
		return "", fmt.Errorf("listing %s: %w", netnsDir, err)
	}
	for _, e := range entries {
		ns, err := netns.GetFromName(e.Name())
		if err != nil {
			continue // removed meanwhile, or not a namespace
		}
		id, err := n.nl.GetNetNsIdByFd(int(ns))
		ns.Close()
		if err == nil && id == nsid {
			return e.Name(), nil
		}
	}
	return "", nil
}

// linkNameIn asks through a handle opened in that namespace for this one
// question.
func (namedNamespaces) linkNameIn(nsName string, index int) (string, error) {
	ns, err := netns.GetFromName(nsName)
	if err != nil {
		return "", fmt.Errorf("opening namespace %s: %w", nsName, err)
	}
	defer ns.Close()
	h, err := netlink.NewHandleAt(ns, unix.NETLINK_ROUTE)
	if err != nil {
		return "", fmt.Errorf("netlink handle in namespace %s: %w", nsName, err)
	}
	defer h.Close()
	l, err := h.LinkByIndex(index)
	if err != nil {
		return "", fmt.Errorf("link index %d in namespace %s: %w", index, nsName, err)
	}
	return l.Attrs().Name, nil
}

// newVeth builds a veth pair. A peer in another namespace goes there at
// once (IFLA_NET_NS_FD); the returned func closes that namespace's handle.
func (k *kernel) newVeth(attrs netlink.LinkAttrs, v *items.VethAttrs) (*netlink.Veth, func(), error) {
	link := &netlink.Veth{LinkAttrs: attrs, PeerName: v.Peer, PeerTxQLen: -1}
	if v.PeerNetns == "" {
		return link, func() {}, nil
	}
	fd, done, err := k.ns.open(v.PeerNetns)
	if err != nil {
		return nil, nil, err
	}
	link.PeerNamespace = fd
	return link, done, nil
}

// markPeer marks the peer end of a new pair as netagent's when it stays in
// this namespace, so that the intent may declare it too. A peer in another
// namespace is left unmarked: there it plays a physical link (an external
// link item of that namespace), as a NIC handed to a container would.
func (k *kernel) markPeer(v *items.VethAttrs) error {
	if v.PeerNetns != "" {
		return nil
	}
	peer, err := k.nl.LinkByName(v.Peer)
	if err != nil {
		return fmt.Errorf("finding veth peer %s: %w", v.Peer, err)
	}
	if err := k.nl.LinkSetAlias(peer, markedAlias("")); err != nil {
		return fmt.Errorf("marking veth peer %s: %w", v.Peer, err)
	}
	return nil
}
