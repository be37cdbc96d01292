package render

import (
	"github.com/netagent/netagent/agent/intent"
	"github.com/netagent/netagent/items"
)

// vlanKind: the protocol 802.1q is the default on both sides.
var vlanKind = linkKind{
	toItem: func(ifc *intent.Interface) items.KindAttrs {
		v := ifc.VLAN
		return &items.VLANAttrs{Parent: v.Parent, ID: uint16(v.ID), Protocol: string(v.Protocol)}
	},
	toIntent: func(it *items.Interface, ifc *intent.Interface) {
		a := items.AttrsOf[*items.VLANAttrs](it)
		if a == nil {
			return
		}
		v := &intent.VLAN{Parent: a.Parent, ID: int(a.ID), Protocol: intent.VLANProtocol(a.Protocol)}
		if v.Protocol == intent.VLAN8021Q {
			v.Protocol = ""
		}
		ifc.VLAN = v
	},
}
