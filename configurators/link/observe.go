package link

import (
	"fmt"
	"net"
	"net/netip"
	"time"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netlink/nl"

	"github.com/netagent/netagent/items"
)

// kernel reads and writes links in one namespace: through its netlink
// handle (nl), raw rtnetlink requests (raw), and the named namespaces a
// veth's peer may be in (ns). st is the namespace's state in the state
// directory (nil: none).
type kernel struct {
	nl  nlOps
	raw rawOps
	ns  nsOps
	st  *stateStore
}

// kindOf maps a netlink link type to the managed kind, "" for the types
// netagent never creates.
func kindOf(l netlink.Link) items.InterfaceKind {
	switch k := items.InterfaceKind(l.Type()); k {
	case items.KindBond, items.KindVLAN, items.KindBridge, items.KindVeth,
		items.KindMacvlan, items.KindVxlan:
		return k
	}
	return ""
}

// owned reports whether the link carries netagent's mark.
func owned(l netlink.Link) bool { return ownedAlias(l.Attrs().Alias) }

// owns reports whether netagent owns l, given the namespace's state: l
// carries the mark, or the create journal names it (a create interrupted
// between the add and the mark); and l is not a physical link whose
// settings netagent changed (its originals are recorded), whatever its
// alias says.
func owns(l netlink.Link, st nsState, nameOf func(int) string) bool {
	if st.originalOf(l) != nil {
		return false
	}
	return owned(l) || st.journaled(l, nameOf)
}

// observe describes a link as an Interface with every value the kernel
// reports (no "leave as is" zero values: see mask). A link netagent does
// not own (isOwned false) is described as physical, its alias as it is;
// nameOf turns an ifindex of the same namespace into a name.
func (k *kernel) observe(l netlink.Link, nameOf func(int) string, isOwned bool) (*items.Interface, error) {
	a := l.Attrs()
	obs := &items.Interface{
		IfName:  a.Name,
		Kind:    items.KindPhysical,
		MTU:     a.MTU,
		AdminUp: a.Flags&net.FlagUp != 0,
		MAC:     cloneMAC(a.HardwareAddr),
		Alias:   a.Alias,
	}
	if !isOwned {
		return obs, nil
	}
	obs.Alias = unmarkedAlias(a.Alias)
	obs.Kind = kindOf(l)
	var err error
	switch link := l.(type) {
	case *netlink.Bond:
		obs.Bond = observeBond(link, nameOf)
	case *netlink.Vlan:
		obs.VLAN = &items.VLANAttrs{Parent: nameOf(a.ParentIndex), ID: uint16(link.VlanId),
			Protocol: link.VlanProtocol.String()}
	case *netlink.Bridge:
		obs.Bridge, err = k.observeBridge(a.Index)
	case *netlink.Veth:
		obs.Veth, err = k.observeVeth(link, nameOf)
	case *netlink.Macvlan:
		obs.Macvlan = &items.MacvlanAttrs{Parent: nameOf(a.ParentIndex), Mode: macvlanModeName(link.Mode)}
	case *netlink.Vxlan:
		obs.Vxlan = observeVxlan(link, nameOf)
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s %s: %w", obs.Kind, obs.IfName, err)
	}
	return obs, nil
}

func observeBond(b *netlink.Bond, nameOf func(int) string) *items.BondAttrs {
	attrs := &items.BondAttrs{Mode: b.Mode.String(), Miimon: max(b.Miimon, 0),
		MinLinks: max(b.MinLinks, 0)}
	if b.LacpRate >= 0 && b.LacpRate < netlink.BOND_LACP_RATE_UNKNOWN {
		attrs.LacpRate = b.LacpRate.String()
	}
	if b.XmitHashPolicy >= 0 && b.XmitHashPolicy < netlink.BOND_XMIT_HASH_POLICY_UNKNOWN {
		attrs.XmitHashPolicy = b.XmitHashPolicy.String()
	}
	if b.Primary > 0 {
		attrs.Primary = nameOf(b.Primary)
	}
	return attrs
}

// centisecond is the kernel's unit of bridge timers (USER_HZ).
const centisecond = 10 * time.Millisecond

func (k *kernel) observeBridge(index int) (*items.BridgeAttrs, error) {
	info, err := k.raw.linkInfo(index)
	if err != nil {
		return nil, err
	}
	stp, _ := info.dataU32(nl.IFLA_BR_STP_STATE)
	filtering, _ := info.dataU8(nl.IFLA_BR_VLAN_FILTERING)
	delay, _ := info.dataU32(nl.IFLA_BR_FORWARD_DELAY)
	return &items.BridgeAttrs{STP: stp != 0, VLANFiltering: filtering != 0,
		ForwardDelay: time.Duration(delay) * centisecond}, nil
}

func observeVxlan(v *netlink.Vxlan, nameOf func(int) string) *items.VxlanAttrs {
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
	return attrs
}

// addrOf converts a kernel address; the unspecified address is none.
func addrOf(ip net.IP) netip.Addr {
	a, ok := netip.AddrFromSlice(ip)
	if !ok || a.Unmap().IsUnspecified() {
		return netip.Addr{}
	}
	return a.Unmap()
}

func cloneMAC(mac net.HardwareAddr) net.HardwareAddr {
	if len(mac) == 0 {
		return nil
	}
	return append(net.HardwareAddr(nil), mac...)
}

var macvlanModes = map[netlink.MacvlanMode]string{
	netlink.MACVLAN_MODE_PRIVATE:  "private",
	netlink.MACVLAN_MODE_VEPA:     "vepa",
	netlink.MACVLAN_MODE_BRIDGE:   "bridge",
	netlink.MACVLAN_MODE_PASSTHRU: "passthru",
	netlink.MACVLAN_MODE_SOURCE:   "source",
}

func macvlanModeName(m netlink.MacvlanMode) string { return macvlanModes[m] }

// macvlanMode turns an item's mode into netlink's ("" is vepa).
func macvlanMode(name string) netlink.MacvlanMode {
	for m, n := range macvlanModes {
		if n == name {
			return m
		}
	}
	return netlink.MACVLAN_MODE_VEPA
}
