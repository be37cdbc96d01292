package items

import (
	"slices"

	dg "github.com/netagent/netagent/depgraph"
)

// KindIpvlan is the kind of an ipvlan on a parent.
const KindIpvlan InterfaceKind = "ipvlan"

// IpvlanAttrs are the settings of an ipvlan interface (required).
//
// The kernel keeps the mode and the flags per parent (struct ipvl_port),
// not per ipvlan: every ipvlan on one parent has the same, and setting them
// on one sets them on all (ipvlan_set_port_mode; "flags are per port and
// latest update overrides").
type IpvlanAttrs struct {
	Parent string // ifname of the lower interface
	// Mode: l2, l3 (also "", the kernel's default when IFLA_IPVLAN_MODE is
	// absent: ipvlan_link_new starts from IPVLAN_MODE_L3), l3s.
	Mode string
	// Flag: bridge (also "", the kernel's default: no IFLA_IPVLAN_FLAGS
	// bit), private, vepa.
	Flag string
}

// The defaults of an ipvlan created without a mode or flags.
const (
	IpvlanDefaultMode = "l3"
	IpvlanDefaultFlag = "bridge"
)

var (
	ipvlanModes = []string{"", "l2", "l3", "l3s"}
	ipvlanFlags = []string{"", "bridge", "private", "vepa"}
)

// Kind returns KindIpvlan.
func (a *IpvlanAttrs) Kind() InterfaceKind { return KindIpvlan }

// Equal compares the settings.
func (a *IpvlanAttrs) Equal(other KindAttrs) bool { return sameAttrs(a, other) }

// NeedsRecreate: another parent. ipvlan_nl_changelink changes the mode
// (ipvlan_set_port_mode, also to and from l3s) and the flags in place, but
// the lower device is fixed at ipvlan_link_new.
func (a *IpvlanAttrs) NeedsRecreate(old KindAttrs) bool {
	return oldAttrs[IpvlanAttrs](old).Parent != a.Parent
}

// Dependencies: the parent interface.
func (a *IpvlanAttrs) Dependencies(string) []dg.Dependency {
	return []dg.Dependency{requires(InterfaceRef(a.Parent), "parent")}
}

// ConflictKeys returns none.
func (a *IpvlanAttrs) ConflictKeys(string) []string { return nil }

// Problem checks the parent, the mode and the flag.
func (a *IpvlanAttrs) Problem(self string) string {
	switch {
	case !validIfName(a.Parent) || a.Parent == self:
		return "bad ipvlan parent " + a.Parent
	case !slices.Contains(ipvlanModes, a.Mode):
		return "unknown ipvlan mode " + a.Mode
	case !slices.Contains(ipvlanFlags, a.Flag):
		return "unknown ipvlan flag " + a.Flag
	}
	return ""
}

// String describes the settings.
func (a *IpvlanAttrs) String() string {
	return joinSet("parent", a.Parent, "mode", a.Mode, "flag", a.Flag)
}
