package items

import (
	"fmt"
	"net/netip"

	dg "github.com/netagent/netagent/depgraph"
)

// KindVxlan is the kind of a VXLAN.
const KindVxlan InterfaceKind = "vxlan"

// VxlanAttrs are the settings of a VXLAN interface (required). The
// configurator always sends Learning (the kernel's default when it is
// absent is on).
type VxlanAttrs struct {
	VNI    uint32     // 0..16777215
	Local  netip.Addr // source address; zero for none
	Remote netip.Addr // unicast remote VTEP; zero for none
	Group  netip.Addr // multicast group; zero for none (exclusive with Remote)
	// Port is the UDP destination port; 0 means the kernel default, 8472
	// (IANA's is 4789: set it explicitly).
	Port     uint16
	Parent   string // ifname of the lower interface for multicast; "" for none
	Learning bool
}

// VxlanDefaultPort is the kernel's VXLAN port when none is given.
const VxlanDefaultPort = 8472

// Kind returns KindVxlan.
func (a *VxlanAttrs) Kind() InterfaceKind { return KindVxlan }

// Equal compares the settings.
func (a *VxlanAttrs) Equal(other KindAttrs) bool { return sameAttrs(a, other) }

// NeedsRecreate: the VNI, the port, the group, the parent or the family.
// vxlan_nl2conf refuses to change the VNI, the port, or the family of
// Local/Remote/Group ("Cannot change VNI/port"); a new Group or Parent
// would be accepted but the multicast membership is joined only when the
// device is opened, so the change would not take effect.
func (a *VxlanAttrs) NeedsRecreate(old KindAttrs) bool {
	o := oldAttrs[VxlanAttrs](old)
	return o.VNI != a.VNI || o.EffectivePort() != a.EffectivePort() ||
		o.Group != a.Group || o.Parent != a.Parent || o.family() != a.family()
}

// EffectivePort is the UDP port, the kernel's default for 0.
func (a *VxlanAttrs) EffectivePort() uint16 {
	if a.Port == 0 {
		return VxlanDefaultPort
	}
	return a.Port
}

// family is the family the kernel gives the tunnel: that of the first
// address set, IPv4 when none is.
func (a *VxlanAttrs) family() Family {
	for _, addr := range []netip.Addr{a.Local, a.Remote, a.Group} {
		if addr.IsValid() {
			return FamilyOf(addr)
		}
	}
	return FamilyIPv4
}

// Dependencies: the parent interface, when there is one.
func (a *VxlanAttrs) Dependencies(string) []dg.Dependency {
	if a.Parent == "" {
		return nil
	}
	return []dg.Dependency{requires(InterfaceRef(a.Parent), "parent")}
}

// ConflictKeys: "vxlan <vni> port <port> <family>", which the kernel keeps
// unique.
func (a *VxlanAttrs) ConflictKeys(string) []string {
	return []string{fmt.Sprintf("vxlan %d port %d %s", a.VNI, a.EffectivePort(), a.family())}
}

// Problem checks the VNI, the addresses and the parent.
func (a *VxlanAttrs) Problem(self string) string {
	family := a.family()
	switch {
	case a.VNI >= 1<<24:
		return "vni out of 0..16777215"
	case a.Remote.IsValid() && a.Group.IsValid():
		return "both remote and group set"
	case a.Group.IsValid() && !a.Group.IsMulticast():
		return "group " + a.Group.String() + " is not multicast"
	case a.Remote.IsValid() && a.Remote.IsMulticast():
		return "remote " + a.Remote.String() + " is multicast (use group)"
	case !sameFamily(family, a.Local, a.Remote, a.Group):
		return "local, remote and group mix address families"
	case a.Parent != "" && (!validIfName(a.Parent) || a.Parent == self):
		return "bad vxlan parent " + a.Parent
	}
	return ""
}

// String describes the settings.
func (a *VxlanAttrs) String() string {
	return joinSet("vni", a.VNI, "local", a.Local, "remote", a.Remote, "group", a.Group,
		"port", a.Port, "parent", a.Parent, "learning", a.Learning)
}
