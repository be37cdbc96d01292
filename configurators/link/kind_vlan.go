package link

import (
	"github.com/vishvananda/netlink"

	"github.com/netagent/netagent/items"
)

// vlanKind creates VLANs; the kernel changes none of their attributes in
// place (see items.VLANAttrs.NeedsRecreate).
type vlanKind struct{ plainKind }

func (vlanKind) newLink(k *kernel, attrs netlink.LinkAttrs, want *items.Interface) (netlink.Link, func(), error) {
	v := items.AttrsOf[*items.VLANAttrs](want)
	parent, err := k.index(v.Parent, "vlan parent")
	if err != nil {
		return nil, nil, err
	}
	attrs.ParentIndex = parent
	proto := netlink.VLAN_PROTOCOL_8021Q
	if v.Protocol != "" {
		proto = netlink.StringToVlanProtocol(v.Protocol)
	}
	return &netlink.Vlan{LinkAttrs: attrs, VlanId: int(v.ID), VlanProtocol: proto}, noRelease, nil
}

func (vlanKind) observe(_ *kernel, l netlink.Link, nameOf func(int) string) (items.KindAttrs, error) {
	v, ok := l.(*netlink.Vlan)
	if !ok {
		return nil, nil
	}
	return &items.VLANAttrs{Parent: nameOf(v.Attrs().ParentIndex), ID: uint16(v.VlanId),
		Protocol: v.VlanProtocol.String()}, nil
}

// mask: the protocol "" is 802.1q.
func (vlanKind) mask(obs, want items.KindAttrs) items.KindAttrs {
	v := valueOr(attrsAs[items.VLANAttrs](obs))
	if valueOr(attrsAs[items.VLANAttrs](want)).Protocol == "" && v.Protocol == items.VLANDefaultProtocol {
		v.Protocol = ""
	}
	return &v
}
