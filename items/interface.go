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

// KindPhysical is the kind of an existing NIC, which netagent configures
// but never creates. Every other kind is declared in its file,
// kind_<kind>.go, and listed in the kinds table (kinds.go).
const KindPhysical InterfaceKind = "physical"

// Interface is a managed network interface: every interface the intent
// declares, whatever its kind, so that dependants can always refer to
// "interface/<ifname>". For kind physical the interface itself is not
// created: the item is the settings netagent applies to an existing NIC, it
// depends on the NIC's Link, and deleting it must never delete the NIC.
// Membership in a bond, bridge or vrf is a Port, not a field of Interface.
//
// Attrs holds the settings of the interface's kind (a *BondAttrs for a
// bond, and so on: see the kinds table in kinds.go); nil leaves them to the
// kernel's defaults, which only some kinds allow. See Validate.
type Interface struct {
	IfName  string
	Kind    InterfaceKind
	MTU     int  // 0 leaves the MTU as it is
	AdminUp bool // set the interface up (true) or down (false)
	// MAC, if set, is the address to give the interface (mostly for
	// virtual kinds); nil leaves it as the kernel chose.
	MAC   net.HardwareAddr
	Alias string // IFLA_IFALIAS; "" leaves none
	// Match, for kind physical only, finds the NIC by what it is (nil: by
	// IfName); the NIC found is renamed IfName (see NICMatch).
	Match *NICMatch

	Attrs KindAttrs
}

var _ dg.Item = (*Interface)(nil)

// Type returns TypeInterface.
func (i *Interface) Type() string { return TypeInterface }

// Name returns the interface name.
func (i *Interface) Name() string { return i.IfName }

// External returns false.
func (i *Interface) External() bool { return false }

// Dependencies: an interface of a kind that is not created (physical)
// requires its Link to be present (a matched one, none: its NIC goes by
// another name until the configurator renames it) (not to have carrier: settings are never
// withdrawn on carrier loss); the others depend on what their attributes
// name (a vlan's, a macvlan's or a vxlan's parent interface).
func (i *Interface) Dependencies() []dg.Dependency {
	if kinds[i.Kind].existing && i.Match != nil {
		return nil // the configurator finds its NIC (see NICMatch)
	}
	if kinds[i.Kind].existing {
		return []dg.Dependency{requires(LinkRef(i.IfName), "present")}
	}
	if i.Attrs == nil {
		return nil
	}
	return i.Attrs.Dependencies(i.IfName)
}

// ConflictKeys implements depgraph.Conflicter, with the kernel's keys of
// the interface: its name, "link <ifname>", and those of its attributes
// (KindAttrs.ConflictKeys): a veth's peer name, a VLAN's parent, protocol
// and ID, a VXLAN's VNI, UDP port and family. The kernel refuses a second
// one (EEXIST), so a renamed VLAN or VXLAN, or an interface taking the name
// of a veth's peer, is created only after the old one is deleted.
func (i *Interface) ConflictKeys() []string {
	keys := []string{"link " + i.IfName}
	if i.Attrs != nil {
		keys = append(keys, i.Attrs.ConflictKeys(i.IfName)...)
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
		i.Match.Equal(o.Match) && attrsEqual(i.Attrs, o.Attrs)
}

// attrsEqual compares two optional attributes: both absent, or both present
// and equal.
func attrsEqual(a, b KindAttrs) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return a.Equal(b)
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
	if i.Match != nil {
		b.WriteString(" match " + i.Match.String())
	}
	if i.Attrs != nil {
		if s := i.Attrs.String(); s != "" {
			b.WriteString(" " + s)
		}
	}
	return b.String()
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
// everything that depends on it). It is true for a kind change, and for
// what the kind's NeedsRecreate says (absent attributes count as the kind's
// zero attributes, which are the kernel's defaults):
//
//   - bond: Mode ("" counts as balance-rr). The kernel refuses a mode change
//     while the bond is up or has ports (BOND_OPTFLAG_NOSLAVES|IFDOWN);
//   - vlan: Parent, ID, Protocol ("" counts as 802.1q). vlan_changelink only
//     changes flags and QoS maps;
//   - veth: Peer, PeerNetns. The pair is created together;
//   - macvlan: Parent; Mode only when switching to or from passthru.
//     macvlan_changelink accepts IFLA_MACVLAN_MODE but refuses to set or
//     clear passthru, and never moves to another lower device;
//   - ipvlan: Parent. ipvlan_nl_changelink changes the mode and the flags
//     in place (for every ipvlan of the parent: the kernel keeps them per
//     parent), never the lower device;
//   - vrf: Table. vrf_link_ops has no changelink;
//   - vxlan: VNI, Port (0 counts as 8472), Group, Parent, and the address
//     family of the tunnel. vxlan_nl2conf refuses to change the VNI, the
//     port, or the family of Local/Remote/Group ("Cannot change VNI/port");
//     a new Group or Parent would be accepted but the multicast membership
//     is joined only when the device is opened, so the change would not take
//     effect. Local and Remote within the family, and Learning, change in
//     place;
//   - gre, ipip, sit: having a remote or not, and the mode (the inner
//     protocol). ip_tunnel_changelink and ipip6_changelink refuse (EINVAL)
//     to turn a point-to-point tunnel into one without a remote or back,
//     and never copy the protocol; local, remote, ttl, pmtudisc, parent and
//     the GRE keys change in place;
//   - ip6tnl: nothing. ip6_tnl_changelink copies every parameter, the mode
//     included. The fallback devices (gre0, tunl0, sit0, ip6tnl0, ...)
//     refuse every change, and are never netagent's.
//
// Everything else (MTU, AdminUp, MAC, Alias, the other bond settings, bridge
// settings) changes in place. Some bond settings (lacp_rate on older
// kernels) need the bond set down for a moment: that is the configurator's
// business, not a recreate.
func InterfaceNeedsRecreate(old, new *Interface) bool {
	if old.Kind != new.Kind {
		return true
	}
	n := attrsOrZero(new)
	if n == nil {
		return false
	}
	return n.NeedsRecreate(attrsOrZero(old))
}
