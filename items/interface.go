package items

import (
	"bytes"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"time"

	dg "github.com/netagent/netagent/depgraph"
)

// InterfaceKind is the kind of a managed interface.
type InterfaceKind string

// The kinds of managed interface.
const (
	KindPhysical InterfaceKind = "physical"
	KindBond     InterfaceKind = "bond"
	KindVLAN     InterfaceKind = "vlan"
	KindBridge   InterfaceKind = "bridge"
	KindVeth     InterfaceKind = "veth"
	KindMacvlan  InterfaceKind = "macvlan"
	KindVxlan    InterfaceKind = "vxlan"
)

// Interface is a managed network interface: every interface the intent
// declares, whatever its kind, so that dependants can always refer to
// "interface/<ifname>". For kind physical the interface itself is not
// created: the item is the settings netagent applies to an existing NIC, it
// depends on the NIC's Link, and deleting it must never delete the NIC.
// Membership in a bond or bridge is a Port, not a field of Interface.
//
// Exactly the attribute pointer of the interface's kind may be set; it may be
// nil for bond and bridge (kernel defaults) and is required for vlan, veth,
// macvlan and vxlan. See Validate.
type Interface struct {
	IfName  string
	Kind    InterfaceKind
	MTU     int  // 0 leaves the MTU as it is
	AdminUp bool // set the interface up (true) or down (false)
	// MAC, if set, is the address to give the interface (mostly for
	// virtual kinds); nil leaves it as the kernel chose.
	MAC   net.HardwareAddr
	Alias string // IFLA_IFALIAS; "" leaves none

	Bond    *BondAttrs
	VLAN    *VLANAttrs
	Bridge  *BridgeAttrs
	Veth    *VethAttrs
	Macvlan *MacvlanAttrs
	Vxlan   *VxlanAttrs
}

// BondAttrs are the settings of a bond. Strings use the kernel's names (as
// in /sys/class/net/<bond>/bonding/*); "" and 0 mean the kernel default.
type BondAttrs struct {
	// Mode: balance-rr (default), active-backup, balance-xor, broadcast,
	// 802.3ad, balance-tlb, balance-alb. Immutable (see NeedsRecreate).
	Mode           string
	Miimon         int    // link monitoring interval in milliseconds
	LacpRate       string // slow | fast (802.3ad only)
	XmitHashPolicy string // layer2 | layer3+4 | layer2+3 | encap2+3 | encap3+4 | vlan+srcmac
	MinLinks       int
	Primary        string // ifname of the primary port (active-backup, tlb, alb)
}

// VLANAttrs are the settings of an 802.1Q/802.1ad VLAN interface.
type VLANAttrs struct {
	Parent   string // ifname of the lower interface
	ID       uint16 // 1..4094
	Protocol string // "802.1q" (also "") or "802.1ad", as netlink spells them
}

// BridgeAttrs are the settings of a bridge.
type BridgeAttrs struct {
	STP           bool
	VLANFiltering bool
	// ForwardDelay is the STP forward delay; 0 leaves the kernel default
	// (15s). The kernel keeps it in centiseconds, so use a multiple of 10ms
	// or read-back will differ; with STP on the kernel accepts 2s to 30s.
	ForwardDelay time.Duration
}

// VethAttrs are the settings of one end of a veth pair.
type VethAttrs struct {
	Peer string // ifname of the other end
	// PeerNetns is the named network namespace (/run/netns/<name>) of the
	// other end; "" for the agent's own namespace.
	PeerNetns string
}

// MacvlanAttrs are the settings of a macvlan interface.
type MacvlanAttrs struct {
	Parent string // ifname of the lower interface
	// Mode: private, vepa (also "", the kernel default), bridge, passthru,
	// source.
	Mode string
}

// VxlanAttrs are the settings of a VXLAN interface. The configurator always
// sends Learning (the kernel's default when it is absent is on).
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

// vxlanDefaultPort is the kernel's VXLAN port when none is given.
const vxlanDefaultPort = 8472

var _ dg.Item = (*Interface)(nil)

// Type returns TypeInterface.
func (i *Interface) Type() string { return TypeInterface }

// Name returns the interface name.
func (i *Interface) Name() string { return i.IfName }

// External returns false.
func (i *Interface) External() bool { return false }

// Dependencies: a physical interface requires its Link to be present (not to
// have carrier: settings are never withdrawn on carrier loss); a vlan or
// macvlan requires its parent interface; a vxlan requires its parent
// interface when it has one.
func (i *Interface) Dependencies() []dg.Dependency {
	switch {
	case i.Kind == KindPhysical:
		return []dg.Dependency{requires(LinkRef(i.IfName), "present")}
	case i.Kind == KindVLAN && i.VLAN != nil:
		return []dg.Dependency{requires(InterfaceRef(i.VLAN.Parent), "parent")}
	case i.Kind == KindMacvlan && i.Macvlan != nil:
		return []dg.Dependency{requires(InterfaceRef(i.Macvlan.Parent), "parent")}
	case i.Kind == KindVxlan && i.Vxlan != nil && i.Vxlan.Parent != "":
		return []dg.Dependency{requires(InterfaceRef(i.Vxlan.Parent), "parent")}
	}
	return nil
}

// ConflictKeys implements depgraph.Conflicter, with the kernel's keys of
// the interface: its name, "link <ifname>", and a veth's peer name too
// (another interface cannot take it); a VLAN's parent, protocol and ID
// ("vlan <parent> <protocol> <id>") and a VXLAN's VNI, UDP port and family
// ("vxlan <vni> port <port> <family>"): the kernel refuses a second one
// (EEXIST). So a renamed VLAN or VXLAN, or an interface taking the name of
// a veth's peer, is created only after the old one is deleted.
func (i *Interface) ConflictKeys() []string {
	keys := []string{"link " + i.IfName}
	switch {
	case i.Kind == KindVeth && i.Veth != nil && i.Veth.PeerNetns == "":
		keys = append(keys, "link "+i.Veth.Peer)
	case i.Kind == KindVLAN && i.VLAN != nil:
		v := vlanIdentity(i.VLAN)
		keys = append(keys, fmt.Sprintf("vlan %s %s %d", v.Parent, v.Protocol, v.ID))
	case i.Kind == KindVxlan && i.Vxlan != nil:
		keys = append(keys, fmt.Sprintf("vxlan %d port %d %s", i.Vxlan.VNI, vxlanPort(*i.Vxlan), vxlanFamily(*i.Vxlan)))
	}
	return keys
}

// Equal compares every field, and the attributes by value.
func (i *Interface) Equal(other dg.Item) bool {
	o, ok := other.(*Interface)
	if !ok || o == nil {
		return false
	}
	return i.IfName == o.IfName && i.Kind == o.Kind && i.MTU == o.MTU &&
		i.AdminUp == o.AdminUp && bytes.Equal(i.MAC, o.MAC) && i.Alias == o.Alias &&
		ptrEqual(i.Bond, o.Bond) && ptrEqual(i.VLAN, o.VLAN) &&
		ptrEqual(i.Bridge, o.Bridge) && ptrEqual(i.Veth, o.Veth) &&
		ptrEqual(i.Macvlan, o.Macvlan) && ptrEqual(i.Vxlan, o.Vxlan)
}

// String describes the interface in one line, `ip link` style.
func (i *Interface) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "interface %s %s", i.IfName, i.Kind)
	if i.MTU != 0 {
		fmt.Fprintf(&b, " mtu %d", i.MTU)
	}
	b.WriteString(" " + upDown(i.AdminUp))
	if len(i.MAC) > 0 {
		b.WriteString(" mac " + i.MAC.String())
	}
	if i.Alias != "" {
		fmt.Fprintf(&b, " alias %q", i.Alias)
	}
	for _, attrs := range []fmt.Stringer{i.Bond, i.VLAN, i.Bridge, i.Veth, i.Macvlan, i.Vxlan} {
		if s := attrs.String(); s != "" {
			b.WriteString(" " + s)
		}
	}
	return b.String()
}

// String describes the settings ("" for nil).
func (a *BondAttrs) String() string {
	if a == nil {
		return ""
	}
	return joinSet("mode", a.Mode, "miimon", a.Miimon, "lacp_rate", a.LacpRate,
		"xmit_hash_policy", a.XmitHashPolicy, "min_links", a.MinLinks, "primary", a.Primary)
}

// String describes the settings ("" for nil).
func (a *VLANAttrs) String() string {
	if a == nil {
		return ""
	}
	return joinSet("parent", a.Parent, "id", a.ID, "protocol", a.Protocol)
}

// String describes the settings ("" for nil).
func (a *BridgeAttrs) String() string {
	if a == nil {
		return ""
	}
	return joinSet("stp", a.STP, "vlan_filtering", a.VLANFiltering, "forward_delay", a.ForwardDelay)
}

// String describes the settings ("" for nil).
func (a *VethAttrs) String() string {
	if a == nil {
		return ""
	}
	return joinSet("peer", a.Peer, "peer_netns", a.PeerNetns)
}

// String describes the settings ("" for nil).
func (a *MacvlanAttrs) String() string {
	if a == nil {
		return ""
	}
	return joinSet("parent", a.Parent, "mode", a.Mode)
}

// String describes the settings ("" for nil).
func (a *VxlanAttrs) String() string {
	if a == nil {
		return ""
	}
	return joinSet("vni", a.VNI, "local", a.Local, "remote", a.Remote, "group", a.Group,
		"port", a.Port, "parent", a.Parent, "learning", a.Learning)
}

// joinSet renders key/value pairs as "k v k v", leaving out zero values
// (false, 0, "", the zero netip.Addr).
func joinSet(kv ...any) string {
	var parts []string
	for j := 0; j+1 < len(kv); j += 2 {
		if isZero(kv[j+1]) {
			continue
		}
		if on, ok := kv[j+1].(bool); ok && on {
			parts = append(parts, kv[j].(string))
			continue
		}
		parts = append(parts, fmt.Sprint(kv[j], " ", kv[j+1]))
	}
	return strings.Join(parts, " ")
}

func isZero(v any) bool {
	switch v := v.(type) {
	case string:
		return v == ""
	case bool:
		return !v
	case int:
		return v == 0
	case uint16:
		return v == 0
	case uint32:
		return v == 0
	case time.Duration:
		return v == 0
	case netip.Addr:
		return !v.IsValid()
	}
	return false
}

// InterfaceNeedsRecreate reports whether the kernel cannot turn old into new
// in place, so that the interface must be deleted and created again (with
// everything that depends on it). It is true only for:
//
//   - a kind change;
//   - bond: Mode ("" counts as balance-rr). The kernel refuses a mode change
//     while the bond is up or has ports (BOND_OPTFLAG_NOSLAVES|IFDOWN);
//   - vlan: Parent, ID, Protocol ("" counts as 802.1q). vlan_changelink only
//     changes flags and QoS maps;
//   - veth: Peer, PeerNetns. The pair is created together;
//   - macvlan: Parent; Mode only when switching to or from passthru.
//     macvlan_changelink accepts IFLA_MACVLAN_MODE but refuses to set or
//     clear passthru, and never moves to another lower device;
//   - vxlan: VNI, Port (0 counts as 8472), Group, Parent, and the address
//     family of the tunnel. vxlan_nl2conf refuses to change the VNI, the
//     port, or the family of Local/Remote/Group ("Cannot change VNI/port");
//     a new Group or Parent would be accepted but the multicast membership
//     is joined only when the device is opened, so the change would not take
//     effect. Local and Remote within the family, and Learning, change in
//     place.
//
// Everything else (MTU, AdminUp, MAC, Alias, the other bond settings, bridge
// settings) changes in place. Some bond settings (lacp_rate on older
// kernels) need the bond set down for a moment: that is the configurator's
// business, not a recreate.
func InterfaceNeedsRecreate(old, new *Interface) bool {
	if old.Kind != new.Kind {
		return true
	}
	switch new.Kind {
	case KindBond:
		return bondMode(old.Bond) != bondMode(new.Bond)
	case KindVLAN:
		return vlanIdentity(old.VLAN) != vlanIdentity(new.VLAN)
	case KindVeth:
		return valueOf(old.Veth) != valueOf(new.Veth)
	case KindMacvlan:
		return macvlanNeedsRecreate(valueOf(old.Macvlan), valueOf(new.Macvlan))
	case KindVxlan:
		return vxlanNeedsRecreate(valueOf(old.Vxlan), valueOf(new.Vxlan))
	}
	return false
}

// bondMode is the bond's mode as the kernel holds it: "" is the kernel's
// default, balance-rr (the intent states its own default in
// intent.Bond.EffectiveMode, the same one).
func bondMode(a *BondAttrs) string {
	if a == nil || a.Mode == "" {
		return "balance-rr"
	}
	return a.Mode
}

func vlanIdentity(a *VLANAttrs) VLANAttrs {
	v := valueOf(a)
	if v.Protocol == "" {
		v.Protocol = "802.1q"
	}
	return v
}

func macvlanNeedsRecreate(old, new MacvlanAttrs) bool {
	return old.Parent != new.Parent || (old.Mode == "passthru") != (new.Mode == "passthru")
}

func vxlanNeedsRecreate(old, new VxlanAttrs) bool {
	return old.VNI != new.VNI || vxlanPort(old) != vxlanPort(new) ||
		old.Group != new.Group || old.Parent != new.Parent ||
		vxlanFamily(old) != vxlanFamily(new)
}

func vxlanPort(a VxlanAttrs) uint16 {
	if a.Port == 0 {
		return vxlanDefaultPort
	}
	return a.Port
}

// vxlanFamily is the family the kernel gives the tunnel: that of the first
// address set, IPv4 when none is.
func vxlanFamily(a VxlanAttrs) Family {
	for _, addr := range []netip.Addr{a.Local, a.Remote, a.Group} {
		if addr.IsValid() {
			return FamilyOf(addr)
		}
	}
	return FamilyIPv4
}
