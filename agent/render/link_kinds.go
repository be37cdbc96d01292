package render

import (
	"github.com/netagent/netagent/agent/intent"
	"github.com/netagent/netagent/items"
)

// linkKind converts one interface type's intent section to and from the
// attributes of its Interface item. Each type's converters are in its file,
// link_<type>.go.
type linkKind struct {
	// toItem converts ifc's section (ifc is of the type and validated;
	// the section may be nil where the type allows it) into the item's
	// attributes; nil for none.
	toItem func(ifc *intent.Interface) items.KindAttrs
	// toIntent puts the item's attributes into ifc's section, leaving out
	// the defaults.
	toIntent func(it *items.Interface, ifc *intent.Interface)
}

// linkKinds is the table of the interface types that have a section
// (physical has none).
var linkKinds = map[intent.LinkType]linkKind{
	intent.LinkBond:      bondKind,
	intent.LinkVLAN:      vlanKind,
	intent.LinkBridge:    bridgeKind,
	intent.LinkVeth:      vethKind,
	intent.LinkMacvlan:   macvlanKind,
	intent.LinkVXLAN:     vxlanKind,
	intent.LinkGRE:       greKind,
	intent.LinkIPIP:      ipipKind,
	intent.LinkSIT:       sitKind,
	intent.LinkIP6Tnl:    ip6tnlKind,
	intent.LinkWireguard: wireguardKind,
	intent.LinkIpvlan:    ipvlanKind,
	intent.LinkVRF:       vrfKind,
}
