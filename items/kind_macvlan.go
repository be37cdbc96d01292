package items

import (
	"slices"

	dg "github.com/netagent/netagent/depgraph"
)

// KindMacvlan is the kind of a macvlan on a parent.
const KindMacvlan InterfaceKind = "macvlan"

// MacvlanAttrs are the settings of a macvlan interface (required).
type MacvlanAttrs struct {
	Parent string // ifname of the lower interface
	// Mode: private, vepa (also "", the kernel default), bridge, passthru,
	// source.
	Mode string
}

// MacvlanDefaultMode is the mode of a macvlan created without one.
const MacvlanDefaultMode = "vepa"

var macvlanModes = []string{"", "private", "vepa", "bridge", "passthru", "source"}

// Kind returns KindMacvlan.
func (a *MacvlanAttrs) Kind() InterfaceKind { return KindMacvlan }

// Equal compares the settings.
func (a *MacvlanAttrs) Equal(other KindAttrs) bool { return sameAttrs(a, other) }

// NeedsRecreate: another parent; the mode only to or from passthru.
// macvlan_changelink accepts IFLA_MACVLAN_MODE but refuses to set or clear
// passthru, and never moves to another lower device.
func (a *MacvlanAttrs) NeedsRecreate(old KindAttrs) bool {
	o := oldAttrs[MacvlanAttrs](old)
	return o.Parent != a.Parent || (o.Mode == "passthru") != (a.Mode == "passthru")
}

// Dependencies: the parent interface.
func (a *MacvlanAttrs) Dependencies(string) []dg.Dependency {
	return []dg.Dependency{requires(InterfaceRef(a.Parent), "parent")}
}

// ConflictKeys returns none.
func (a *MacvlanAttrs) ConflictKeys(string) []string { return nil }

// Problem checks the parent and the mode.
func (a *MacvlanAttrs) Problem(self string) string {
	switch {
	case !validIfName(a.Parent) || a.Parent == self:
		return "bad macvlan parent " + a.Parent
	case !slices.Contains(macvlanModes, a.Mode):
		return "unknown macvlan mode " + a.Mode
	}
	return ""
}

// String describes the settings.
func (a *MacvlanAttrs) String() string {
	return joinSet("parent", a.Parent, "mode", a.Mode)
}
