package render

import (
	"github.com/netagent/netagent/agent/intent"
	"github.com/netagent/netagent/items"
)

// bridgeKind: a bridge without a section has none (all defaults); the
// forward delay goes from centiseconds or a duration to a duration, and
// back as a duration with its unit, as show prints it.
var bridgeKind = linkKind{
	toItem: func(ifc *intent.Interface) items.KindAttrs {
		b := ifc.Bridge
		if b == nil {
			return nil
		}
		return &items.BridgeAttrs{
			STP:           b.STP,
			VLANFiltering: b.VLANFiltering,
			ForwardDelay:  b.ForwardDelay.Duration(),
		}
	},
	toIntent: func(it *items.Interface, ifc *intent.Interface) {
		a := items.AttrsOf[*items.BridgeAttrs](it)
		if a == nil {
			return
		}
		ifc.Bridge = &intent.Bridge{STP: a.STP, VLANFiltering: a.VLANFiltering, ForwardDelay: intent.Centiseconds{}.Of(a.ForwardDelay)}
	},
}
