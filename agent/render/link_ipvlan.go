package render

import (
	"github.com/netagent/netagent/agent/intent"
	"github.com/netagent/netagent/items"
)

// ipvlanKind: the mode l3 and the flag bridge are the defaults on both
// sides, spelt "" in the item whether the intent names them or not.
var ipvlanKind = linkKind{
	toItem: func(ifc *intent.Interface) items.KindAttrs {
		a := &items.IpvlanAttrs{Parent: ifc.Ipvlan.Parent, Mode: string(ifc.Ipvlan.Mode), Flag: string(ifc.Ipvlan.Flag)}
		if a.Mode == items.IpvlanDefaultMode {
			a.Mode = ""
		}
		if a.Flag == items.IpvlanDefaultFlag {
			a.Flag = ""
		}
		return a
	},
	toIntent: func(it *items.Interface, ifc *intent.Interface) {
		a := items.AttrsOf[*items.IpvlanAttrs](it)
		if a == nil {
			return
		}
		v := &intent.Ipvlan{Parent: a.Parent, Mode: intent.IpvlanMode(a.Mode), Flag: intent.IpvlanFlag(a.Flag)}
		if v.Mode == intent.IpvlanL3 {
			v.Mode = ""
		}
		if v.Flag == intent.IpvlanBridge {
			v.Flag = ""
		}
		ifc.Ipvlan = v
	},
}
