package render

import (
	"github.com/netagent/netagent/agent/intent"
	"github.com/netagent/netagent/items"
)

// vethKind: read back, an owned veth whose peer is out of reach (in a
// namespace without a name) cannot be declared as a veth; it is described
// as physical: it exists, and is not created.
var vethKind = linkKind{
	toItem: func(ifc *intent.Interface) items.KindAttrs {
		return &items.VethAttrs{Peer: ifc.Veth.Peer, PeerNetns: ifc.Veth.PeerNetns}
	},
	toIntent: func(it *items.Interface, ifc *intent.Interface) {
		a := items.AttrsOf[*items.VethAttrs](it)
		if a == nil || a.Peer == "" {
			ifc.Type, ifc.MAC = intent.LinkPhysical, ""
			return
		}
		ifc.Veth = &intent.Veth{Peer: a.Peer, PeerNetns: a.PeerNetns}
	},
}
