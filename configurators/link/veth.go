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

// observeVeth names a veth's peer. In the same namespace the peer is
// IFLA_LINK; in another one it is IFLA_LINK in the namespace that
// IFLA_LINK_NETNSID designates, found among the named namespaces.
func (k *kernel) observeVeth(v *netlink.Veth, nameOf func(int) string) (*items.VethAttrs, error) {
	a := v.Attrs()
	if a.NetNsID < 0 {
		return &items.VethAttrs{Peer: nameOf(a.ParentIndex)}, nil
	}
	nsName, err := k.namespaceByID(a.NetNsID)
	if err != nil || nsName == "" {
		return &items.VethAttrs{}, err
	}
	peer, err := linkNameIn(nsName, a.ParentIndex)
	if err != nil {
		return nil, err
	}
	return &items.VethAttrs{Peer: peer, PeerNetns: nsName}, nil
}

// namespaceByID finds the named namespace that this namespace knows by
// nsid, or "" if none of them is.
func (k *kernel) namespaceByID(nsid int) (string, error) {
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
		id, err := k.nl.GetNetNsIdByFd(int(ns))
		ns.Close()
		if err == nil && id == nsid {
			return e.Name(), nil
		}
	}
	return "", nil
}

// linkNameIn returns the name of the link with the index in the named
// namespace, through a handle opened there for this one question.
func linkNameIn(nsName string, index int) (string, error) {
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
func newVeth(attrs netlink.LinkAttrs, v *items.VethAttrs) (*netlink.Veth, func(), error) {
	link := &netlink.Veth{LinkAttrs: attrs, PeerName: v.Peer, PeerTxQLen: -1}
	if v.PeerNetns == "" {
		return link, func() {}, nil
	}
	ns, err := netns.GetFromName(v.PeerNetns)
	if err != nil {
		return nil, nil, fmt.Errorf("opening peer namespace %s: %w", v.PeerNetns, err)
	}
	link.PeerNamespace = netlink.NsFd(int(ns))
	return link, func() { ns.Close() }, nil
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
