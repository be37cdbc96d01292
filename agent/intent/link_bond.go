package intent

import (
	"math"
	"slices"
)

// LinkBond is the type of a bond interface, whose section is "bond".
const LinkBond LinkType = "bond"

// Bond holds the settings of a bond: {"type": "bond", "bond": {"mode":
// "802.3ad", "miimon": 100}}. The section is optional (absent: the
// kernel's defaults). Its ports are the interfaces whose Master names it.
// MIIMon is in milliseconds, as in ip-link and netlink, or a duration
// with its unit ("100ms").
type Bond struct {
	Mode           BondMode       `json:"mode,omitempty"`  // "": balance-rr
	MIIMon         Milliseconds   `json:"miimon,omitzero"` // milliseconds or "100ms"; 0: off
	LACPRate       LACPRate       `json:"lacpRate,omitempty"`
	XmitHashPolicy XmitHashPolicy `json:"xmitHashPolicy,omitempty"`
	MinLinks       int            `json:"minLinks,omitempty"`
	Primary        string         `json:"primary,omitempty"` // a port of this bond
}

// bondSection: optional (all defaults); the options depend on the mode.
var bondSection = linkSection{
	typ:     LinkBond,
	present: func(ifc *Interface) bool { return ifc.Bond != nil },
	check:   func(c *checker, ifc *Interface, o Origin, _ map[string]Origin) { c.bond(ifc, o) },
	master:  true,
}

// BondMode is a bond's mode.
type BondMode string

// The bond modes, as the kernel names them.
const (
	BondBalanceRR    BondMode = "balance-rr"
	BondActiveBackup BondMode = "active-backup"
	BondBalanceXOR   BondMode = "balance-xor"
	BondBroadcast    BondMode = "broadcast"
	Bond8023AD       BondMode = "802.3ad"
	BondBalanceTLB   BondMode = "balance-tlb"
	BondBalanceALB   BondMode = "balance-alb"
)

// LACPRate is how often an 802.3ad bond asks its partner for LACPDUs.
type LACPRate string

// The LACP rates.
const (
	LACPSlow LACPRate = "slow"
	LACPFast LACPRate = "fast"
)

// XmitHashPolicy is how a bond picks the port for a packet.
type XmitHashPolicy string

// The transmit hash policies.
const (
	HashLayer2  XmitHashPolicy = "layer2"
	HashLayer34 XmitHashPolicy = "layer3+4"
	HashLayer23 XmitHashPolicy = "layer2+3"
	HashEncap23 XmitHashPolicy = "encap2+3"
	HashEncap34 XmitHashPolicy = "encap3+4"
)

var bondModes = []BondMode{BondBalanceRR, BondActiveBackup, BondBalanceXOR, BondBroadcast, Bond8023AD, BondBalanceTLB, BondBalanceALB}

var lacpRates = []LACPRate{LACPSlow, LACPFast}

var hashPolicies = []XmitHashPolicy{HashLayer2, HashLayer34, HashLayer23, HashEncap23, HashEncap34}

// The bond modes in which each mode-dependent bond option applies, from the
// kernel's bonding documentation (the kernel reports the options in every
// mode). Stated once: validation allows an option only in its modes, and
// reading the kernel back into an intent keeps it only there.
var (
	LACPRateModes       = []BondMode{Bond8023AD}
	XmitHashPolicyModes = []BondMode{BondBalanceXOR, Bond8023AD, BondBalanceTLB}
	MinLinksModes       = []BondMode{Bond8023AD}
	PrimaryModes        = []BondMode{BondActiveBackup, BondBalanceTLB, BondBalanceALB}
)

// EffectiveMode returns the bond mode, balance-rr when unset.
func (b *Bond) EffectiveMode() BondMode { return orDefault(b.Mode, BondBalanceRR) }

// bond checks a bond's settings.
func (c *checker) bond(ifc *Interface, o Origin) {
	b := ifc.Bond
	if !oneOf(c, o.field("mode"), b.Mode, bondModes) {
		return // the mode-dependent checks would only add noise
	}
	mode := b.EffectiveMode()
	checkDuration(c, o.field("miimon"), b.MIIMon, 0, math.MaxInt32)
	if oneOf(c, o.field("lacpRate"), b.LACPRate, lacpRates) {
		c.onlyInModes(o.field("lacpRate"), b.LACPRate != "", mode, LACPRateModes)
	}
	if oneOf(c, o.field("xmitHashPolicy"), b.XmitHashPolicy, hashPolicies) {
		c.onlyInModes(o.field("xmitHashPolicy"), b.XmitHashPolicy != "", mode, XmitHashPolicyModes)
	}
	if c.inRange(o.field("minLinks"), b.MinLinks, 0, math.MaxInt32) {
		c.onlyInModes(o.field("minLinks"), b.MinLinks != 0, mode, MinLinksModes)
	}
	if b.Primary != "" && c.onlyInModes(o.field("primary"), true, mode, PrimaryModes) {
		c.primary(ifc, o.field("primary"))
	}
}

// onlyInModes checks that an option that is set is allowed in mode.
func (c *checker) onlyInModes(o Origin, set bool, mode BondMode, modes []BondMode) bool {
	if !set || slices.Contains(modes, mode) {
		return true
	}
	noun := "mode"
	if len(modes) > 1 {
		noun = "modes"
	}
	c.fail(o, "only allowed in %s %s, not %s", noun, joinValues(modes), mode)
	return false
}

// primary checks that a bond's primary is one of its ports.
func (c *checker) primary(ifc *Interface, o Origin) {
	name := ifc.Bond.Primary
	def, ok := c.ref(o, name)
	if ok && (def.peer || def.ifc.Master != ifc.Name) {
		c.fail(o, "%q is not a port of bond %q", name, ifc.Name)
	}
}
