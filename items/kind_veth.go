package items

import (
	dg "github.com/netagent/netagent/depgraph"
)

// KindVeth is the kind of a veth pair (the Interface is one end).
const KindVeth InterfaceKind = "veth"

// VethAttrs are the settings of one end of a veth pair (required).
type VethAttrs struct {
	Peer string // ifname of the other end
	// PeerNetns is the named network namespace (/run/netns/<name>) of the
	// other end; "" for the agent's own namespace.
	PeerNetns string
}

// Kind returns KindVeth.
func (a *VethAttrs) Kind() InterfaceKind { return KindVeth }

// Equal compares the settings.
func (a *VethAttrs) Equal(other KindAttrs) bool { return sameAttrs(a, other) }

// NeedsRecreate: the pair is created together, so another peer is another
// pair.
func (a *VethAttrs) NeedsRecreate(old KindAttrs) bool { return oldAttrs[VethAttrs](old) != *a }

// Dependencies returns none.
func (a *VethAttrs) Dependencies(string) []dg.Dependency { return nil }

// ConflictKeys: the peer's name, "link <peer>", when the peer is in this
// namespace (no other interface can take it).
func (a *VethAttrs) ConflictKeys(string) []string {
	if a.PeerNetns != "" {
		return nil
	}
	return []string{"link " + a.Peer}
}

// Problem checks the peer's name.
func (a *VethAttrs) Problem(self string) string {
	if !validIfName(a.Peer) || (a.Peer == self && a.PeerNetns == "") {
		return "bad veth peer " + a.Peer
	}
	return ""
}

// String describes the settings.
func (a *VethAttrs) String() string {
	return joinSet("peer", a.Peer, "peer_netns", a.PeerNetns)
}

// LocalPeer returns the name of the other end of a veth when it is in the
// same namespace, "" for any other interface.
func LocalPeer(i *Interface) string {
	v := AttrsOf[*VethAttrs](i)
	if i.Kind != KindVeth || v == nil || v.PeerNetns != "" {
		return ""
	}
	return v.Peer
}
