package render

import (
	"github.com/netagent/netagent/agent/intent"
	"github.com/netagent/netagent/items"
)

// vrfKind: the table, which has no default.
var vrfKind = linkKind{
	toItem: func(ifc *intent.Interface) items.KindAttrs {
		return &items.VRFAttrs{Table: uint32(ifc.VRF.Table)}
	},
	toIntent: func(it *items.Interface, ifc *intent.Interface) {
		if a := items.AttrsOf[*items.VRFAttrs](it); a != nil {
			ifc.VRF = &intent.VRF{Table: intent.TableID(a.Table)}
		}
	},
}
