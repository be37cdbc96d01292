package render

import (
	"fmt"

	"github.com/netagent/netagent/agent/intent"
	"github.com/netagent/netagent/items"
)

// bridgeMembership renders the VLAN membership an interface declares: a
// bridge's own (bridge.vlans) and a bridge port's (bridgePort.vlans), each
// a bridge-vlans/<name> item. An absent list renders nothing: the member
// keeps (or gets back) the kernel's default membership.
func (b *builder) bridgeMembership(ifc *intent.Interface, at intent.Origin) {
	if ifc.Type == intent.LinkBridge && ifc.Bridge != nil && ifc.Bridge.VLANs != nil {
		b.put(&items.BridgeVLANs{IfName: ifc.Name, Bridge: ifc.Name, VLANs: vlanSet(ifc.Bridge.VLANs)},
			field(field(at, "bridge"), "vlans"))
	}
	if ifc.BridgePort != nil && ifc.BridgePort.VLANs != nil {
		b.put(&items.BridgeVLANs{IfName: ifc.Name, Bridge: ifc.Master, VLANs: vlanSet(ifc.BridgePort.VLANs)},
			field(field(at, "bridgePort"), "vlans"))
	}
}

// bridgePortSettings copies a bridge port's cost and priority into its
// port item (0 and absent: the kernel's value).
func bridgePortSettings(p *items.Port, bp *intent.BridgePort) {
	if bp == nil {
		return
	}
	p.Cost = uint32(bp.Cost)
	if bp.Priority != nil {
		prio := uint16(*bp.Priority)
		p.Priority = &prio
	}
}

// vlanSet converts a validated VLAN list to the canonical set; [] is the
// empty set (no VLAN), never nil.
func vlanSet(vlans []intent.BridgeVLAN) items.VLANSet {
	m := map[uint16]items.VLANFlags{}
	for _, v := range vlans {
		from, to, _ := v.Range() // Validate checked it
		for vid := from; vid <= to; vid++ {
			m[uint16(vid)] = items.VLANFlags{PVID: v.PVID, Untagged: v.Untagged}
		}
	}
	if set := items.CanonicalVLANs(m); set != nil {
		return set
	}
	return items.VLANSet{}
}

// vlansToIntent is the inverse of vlanSet: a single VID as vid, a range as
// vids; the empty set is [].
func vlansToIntent(set items.VLANSet) []intent.BridgeVLAN {
	out := make([]intent.BridgeVLAN, 0, len(set))
	for _, r := range set {
		v := intent.BridgeVLAN{VID: int(r.From), PVID: r.PVID, Untagged: r.Untagged}
		if r.To != r.From {
			v.VID, v.VIDs = 0, fmt.Sprintf("%d-%d", r.From, r.To)
		}
		out = append(out, v)
	}
	return out
}

// bridgePortToIntent gives an interface the bridgePort section and the
// bridge.vlans its port item and VLAN item hold (either may be nil). The
// VLANs of a bridge without VLAN filtering are left out: the intent allows
// none there (the kernel keeps them, unused).
func (inv *inverter) bridgePortToIntent(ifc *intent.Interface, p *items.Port, vl *items.BridgeVLANs) {
	if vl != nil && !inv.filtering(vl.Bridge) {
		vl = nil
	}
	if vl != nil && vl.Self() {
		if ifc.Bridge == nil {
			ifc.Bridge = &intent.Bridge{}
		}
		ifc.Bridge.VLANs = vlansToIntent(vl.VLANs)
		return
	}
	bp := &intent.BridgePort{}
	if p != nil && p.MasterKind == items.KindBridge {
		bp.Cost = int(p.Cost)
		if p.Priority != nil {
			prio := int(*p.Priority)
			bp.Priority = &prio
		}
	}
	if vl != nil && p != nil && p.Master == vl.Bridge {
		bp.VLANs = vlansToIntent(vl.VLANs)
	}
	if bp.Cost != 0 || bp.Priority != nil || bp.VLANs != nil {
		ifc.BridgePort = bp
	}
}

// filtering reports whether the bridge of that name is an item with VLAN
// filtering on.
func (inv *inverter) filtering(bridge string) bool {
	it, ok := inv.ifaces[bridge]
	if !ok || it.Kind != items.KindBridge {
		return false
	}
	a, _ := it.Attrs.(*items.BridgeAttrs)
	return a != nil && a.VLANFiltering
}
