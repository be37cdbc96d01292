package render

import (
	"github.com/netagent/netagent/agent/intent"
	"github.com/netagent/netagent/items"
)

// vxlanKind: the port and learning are always explicit in the item: the
// intent's default port is IANA's 4789 where the kernel's is 8472, and
// learning defaults to on.
var vxlanKind = linkKind{
	toItem: func(ifc *intent.Interface) items.KindAttrs {
		v := ifc.VXLAN
		return &items.VxlanAttrs{
			VNI:      uint32(v.VNI),
			Local:    optAddr(v.Local),
			Remote:   optAddr(v.Remote),
			Group:    optAddr(v.Group),
			Port:     uint16(v.EffectivePort()),
			Parent:   v.Parent,
			Learning: v.EffectiveLearning(),
		}
	},
	toIntent: func(it *items.Interface, ifc *intent.Interface) {
		a := items.AttrsOf[*items.VxlanAttrs](it)
		if a == nil {
			return
		}
		v := &intent.VXLAN{VNI: int(a.VNI), Port: int(a.Port), Parent: a.Parent,
			Local: addrString(a.Local), Remote: addrString(a.Remote), Group: addrString(a.Group)}
		switch v.Port {
		case 0:
			v.Port = items.VxlanDefaultPort
		case intent.DefaultVXLANPort:
			v.Port = 0
		}
		if !a.Learning {
			v.Learning = new(bool)
		}
		ifc.VXLAN = v
	},
}
