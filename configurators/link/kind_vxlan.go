package link

import (
	"fmt"
	"net/netip"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netlink/nl"

	"github.com/netagent/netagent/items"
)

// vxlanKind creates VXLANs; the local address, the unicast remote and
// learning change in place (see items.VxlanAttrs.NeedsRecreate).
type vxlanKind struct{ plainKind }

// liveMAC: a vxlan takes a new MAC while up (checked on the host kernel).
func (vxlanKind) liveMAC() {}

func (vxlanKind) newLink(k *kernel, attrs netlink.LinkAttrs, want *items.Interface) (netlink.Link, func(), error) {
	v := items.AttrsOf[*items.VxlanAttrs](want)
	link := &netlink.Vxlan{LinkAttrs: attrs, VxlanId: int(v.VNI), SrcAddr: ipOf(v.Local),
		Learning: v.Learning, Port: int(v.Port)}
	switch {
	case v.Group.IsValid():
		link.Group = ipOf(v.Group)
	case v.Remote.IsValid():
		link.Group = ipOf(v.Remote)
	}
	if v.Parent != "" {
		parent, err := k.index(v.Parent, "vxlan parent")
		if err != nil {
			return nil, nil, err
		}
		link.VtepDevIndex = parent
	}
	return link, noRelease, nil
}

// converge changes what vxlan_changelink accepts: the local address, the
// unicast remote (within the tunnel's family) and learning.
func (vxlanKind) converge(k *kernel, l netlink.Link, obsIfc, wantIfc *items.Interface) error {
	obs := valueOr(items.AttrsOf[*items.VxlanAttrs](obsIfc))
	want := valueOr(items.AttrsOf[*items.VxlanAttrs](wantIfc))
	v6 := tunnelIs6(want) || tunnelIs6(obs)
	var attrs []attr
	if want.Local != obs.Local {
		attrs = append(attrs, addrAttr(nl.IFLA_VXLAN_LOCAL, nl.IFLA_VXLAN_LOCAL6, want.Local, v6))
	}
	if !want.Group.IsValid() && want.Remote != obs.Remote {
		attrs = append(attrs, addrAttr(nl.IFLA_VXLAN_GROUP, nl.IFLA_VXLAN_GROUP6, want.Remote, v6))
	}
	if want.Learning != obs.Learning {
		attrs = append(attrs, u8Attr(nl.IFLA_VXLAN_LEARNING, uint8(boolU32(want.Learning))))
	}
	if len(attrs) == 0 {
		return nil
	}
	if err := k.raw.setInfoData(l.Attrs().Index, "vxlan", attrs); err != nil {
		return fmt.Errorf("setting vxlan options: %w", err)
	}
	return nil
}

func (vxlanKind) observe(_ *kernel, l netlink.Link, nameOf func(int) string) (items.KindAttrs, error) {
	v, ok := l.(*netlink.Vxlan)
	if !ok {
		return nil, nil
	}
	attrs := &items.VxlanAttrs{VNI: uint32(v.VxlanId), Local: addrOf(v.SrcAddr),
		Port: uint16(v.Port), Learning: v.Learning}
	if v.VtepDevIndex > 0 {
		attrs.Parent = nameOf(v.VtepDevIndex)
	}
	// The kernel keeps the unicast remote and the multicast group in one
	// field (IFLA_VXLAN_GROUP).
	if dst := addrOf(v.Group); dst.IsMulticast() {
		attrs.Group = dst
	} else {
		attrs.Remote = dst
	}
	return attrs, nil
}

// mask: the port 0 is 8472.
func (vxlanKind) mask(obs, want items.KindAttrs) items.KindAttrs {
	v := valueOr(attrsAs[items.VxlanAttrs](obs))
	if valueOr(attrsAs[items.VxlanAttrs](want)).Port == 0 && v.Port == items.VxlanDefaultPort {
		v.Port = 0
	}
	return &v
}

func tunnelIs6(v items.VxlanAttrs) bool {
	for _, a := range []netip.Addr{v.Local, v.Remote, v.Group} {
		if a.IsValid() {
			return a.Is6()
		}
	}
	return false
}

// addrAttr is an address attribute of the tunnel's family; the zero Addr
// is sent as the unspecified address, which clears it.
func addrAttr(typ4, typ6 int, a netip.Addr, v6 bool) attr {
	switch {
	case v6 && !a.IsValid():
		a = netip.IPv6Unspecified()
	case !a.IsValid():
		a = netip.IPv4Unspecified()
	}
	if a.Is6() {
		return attr{typ6, a.AsSlice()}
	}
	return attr{typ4, a.AsSlice()}
}
