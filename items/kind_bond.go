package items

import (
	"slices"

	dg "github.com/netagent/netagent/depgraph"
)

// KindBond is the kind of a bond (Linux bonding).
const KindBond InterfaceKind = "bond"

// BondAttrs are the settings of a bond. Strings use the kernel's names (as
// in /sys/class/net/<bond>/bonding/*); "" and 0 mean the kernel default.
// A bond may have none (nil Attrs: all defaults).
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

// BondDefaultMode is the mode of a bond created without one.
const BondDefaultMode = "balance-rr"

var (
	bondModes = []string{"", "balance-rr", "active-backup", "balance-xor", "broadcast", "802.3ad", "balance-tlb", "balance-alb"}
	lacpRates = []string{"", "slow", "fast"}
)

// Kind returns KindBond.
func (a *BondAttrs) Kind() InterfaceKind { return KindBond }

// Equal compares the settings.
func (a *BondAttrs) Equal(other KindAttrs) bool { return sameAttrs(a, other) }

// EffectiveMode is the bond's mode as the kernel holds it: "" is the
// kernel's default, balance-rr (the intent states its own default in
// intent.Bond.EffectiveMode, the same one). A nil bond has the default.
func (a *BondAttrs) EffectiveMode() string {
	if a == nil || a.Mode == "" {
		return BondDefaultMode
	}
	return a.Mode
}

// NeedsRecreate: a bond's mode changes only with the bond down and
// without ports (BOND_OPTFLAG_NOSLAVES|IFDOWN).
func (a *BondAttrs) NeedsRecreate(old KindAttrs) bool {
	o := oldAttrs[BondAttrs](old)
	return o.EffectiveMode() != a.EffectiveMode()
}

// Dependencies returns none: the primary is a port, which depends on the
// bond.
func (a *BondAttrs) Dependencies(string) []dg.Dependency { return nil }

// ConflictKeys returns none.
func (a *BondAttrs) ConflictKeys(string) []string { return nil }

// Problem checks the mode, the LACP rate, the numbers and the primary's
// name.
func (a *BondAttrs) Problem(string) string {
	switch {
	case !slices.Contains(bondModes, a.Mode):
		return "unknown bond mode " + a.Mode
	case !slices.Contains(lacpRates, a.LacpRate):
		return "unknown lacp rate " + a.LacpRate
	case a.Miimon < 0 || a.MinLinks < 0:
		return "negative miimon or min_links"
	case a.Primary != "" && !validIfName(a.Primary):
		return "bad primary interface name " + a.Primary
	}
	return ""
}

// String describes the settings.
func (a *BondAttrs) String() string {
	return joinSet("mode", a.Mode, "miimon", a.Miimon, "lacp_rate", a.LacpRate,
		"xmit_hash_policy", a.XmitHashPolicy, "min_links", a.MinLinks, "primary", a.Primary)
}
