package render

import (
	"time"

	"github.com/netagent/netagent/agent/intent"
	"github.com/netagent/netagent/items"
)

// centisecond is the unit of a bridge's forward delay in the intent (and in
// netlink); items keep it as a time.Duration.
const centisecond = 10 * time.Millisecond

// bridgeKind: a bridge without a section has none (all defaults); the
// forward delay goes between centiseconds and a duration.
var bridgeKind = linkKind{
	toItem: func(ifc *intent.Interface) items.KindAttrs {
		b := ifc.Bridge
		if b == nil {
			return nil
		}
		return &items.BridgeAttrs{
			STP:           b.STP,
			VLANFiltering: b.VLANFiltering,
			ForwardDelay:  time.Duration(b.ForwardDelay) * centisecond,
		}
	},
	toIntent: func(it *items.Interface, ifc *intent.Interface) {
		a := items.AttrsOf[*items.BridgeAttrs](it)
		if a == nil {
			return
		}
		ifc.Bridge = &intent.Bridge{STP: a.STP, VLANFiltering: a.VLANFiltering, ForwardDelay: int(a.ForwardDelay / centisecond)}
	},
}
