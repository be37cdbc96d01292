package render

import (
	"github.com/netagent/netagent/agent/intent"
	"github.com/netagent/netagent/items"
)

// macvlanKind: the mode vepa is the default on both sides.
var macvlanKind = linkKind{
	toItem: func(ifc *intent.Interface) items.KindAttrs {
		return &items.MacvlanAttrs{Parent: ifc.Macvlan.Parent, Mode: string(ifc.Macvlan.Mode)}
	},
	toIntent: func(it *items.Interface, ifc *intent.Interface) {
		a := items.AttrsOf[*items.MacvlanAttrs](it)
		if a == nil {
			return
		}
		m := &intent.Macvlan{Parent: a.Parent, Mode: intent.MacvlanMode(a.Mode)}
		if m.Mode == intent.MacvlanVEPA {
			m.Mode = ""
		}
		ifc.Macvlan = m
	},
}
