package intent

import (
	"fmt"
	"strings"
)

// LinkVeth is the type of a veth interface, whose section is "veth".
const LinkVeth LinkType = "veth"

// Veth holds the settings of a veth pair: {"type": "veth", "veth":
// {"peer": "v1"}}. The section is required. The Interface is one end; Peer
// names the other, which the agent creates with it (in PeerNetns when
// set). The peer's name is taken like an interface's (no other interface
// may have it), unless the peer goes to PeerNetns.
type Veth struct {
	Peer      string `json:"peer"`
	PeerNetns string `json:"peerNetns,omitempty"` // a name under /var/run/netns
}

// vethSection: required; it defines the peer's name too.
var vethSection = linkSection{
	typ:      LinkVeth,
	required: true,
	present:  func(ifc *Interface) bool { return ifc.Veth != nil },
	check:    func(*checker, *Interface, Origin, map[string]Origin) {},
	define:   (*checker).definePeer,
	keys:     vethKeys,
}

// vethKeys is the peer's identity: an interface of this namespace or of
// the peer's.
func vethKeys(ifc *Interface) []string {
	v := ifc.Veth
	switch {
	case v.Peer == "":
		return nil
	case v.PeerNetns == "":
		return []string{fmt.Sprintf("interface %q", v.Peer)}
	}
	return []string{fmt.Sprintf("interface %q in netns %q", v.Peer, v.PeerNetns)}
}

// definePeer checks a veth's peer and indexes its name: in the host
// namespace with the interfaces, or among the peers of its namespace.
func (c *checker) definePeer(ifc *Interface, o Origin, netnsPeers map[string]Origin) {
	v := ifc.Veth
	po := o.field("peer")
	switch {
	case !c.ifname(po, v.Peer):
	case v.Peer == ifc.Name:
		c.fail(po, "%q is the veth's own name", v.Peer)
	case v.PeerNetns == "":
		c.define(v.Peer, linkDef{ifc: ifc, at: po, peer: true}, po)
	case c.netnsName(o.field("peerNetns"), v.PeerNetns):
		key := fmt.Sprintf("interface %q in netns %q", v.Peer, v.PeerNetns)
		c.unique(netnsPeers, key, po)
	}
}

// netnsName checks the name of a network namespace under /var/run/netns.
func (c *checker) netnsName(o Origin, name string) bool {
	switch {
	case len(name) > 255:
		c.fail(o, "%q is longer than 255 bytes", name)
		return false
	case name == "." || name == "..":
		c.fail(o, "%q is not a valid namespace name", name)
		return false
	}
	if i := strings.IndexFunc(name, func(r rune) bool { return r <= ' ' || r > '~' || r == '/' }); i >= 0 {
		c.fail(o, "%q contains %q, which a namespace name cannot", name, rune(name[i]))
		return false
	}
	return true
}
