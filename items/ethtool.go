package items

import (
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"

	dg "github.com/netagent/netagent/depgraph"
)

// TypeEthtool is the type of Ethtool items.
const TypeEthtool = "ethtool"

// Ethtool is the ethtool settings the intent names for one interface
// (named by the interface): each setting by its key, "<group>/<field>"
// ("features/rx-gro", "channels/combined", "rings/rx",
// "coalesce/adaptive-rx", "pause/autoneg", "link/speed",
// "wake-on-lan/modes"), its value a number (a feature or flag: 0 or 1; a
// duplex: EthtoolDuplex*; Wake-on-LAN: a mask of EthtoolWakeOnLan bits).
// Features are by the kernel's names: the renderer expands the ethtool
// CLI's names and aliases (ExpandFeature). Settings the intent does not
// name are never touched.
//
// Sets are the settings whose value is a set of names, by key:
// "link/advertise", the speed and duplex link modes autonegotiation
// offers (EthtoolLinkModes), sorted and each once. MTU is the MTU the
// intent gives the interface (0: none): the settings are applied after
// it, and an MTU change modifies this item too, so that its converge,
// right after the link's, writes again what a driver reset with the MTU
// (some reset rings and channels).
type Ethtool struct {
	Interface string
	Settings  map[string]uint32
	Sets      map[string][]string `json:",omitempty"`
	MTU       int                 `json:",omitempty"`
}

var _ dg.Item = (*Ethtool)(nil)

// Type returns TypeEthtool.
func (e *Ethtool) Type() string { return TypeEthtool }

// Name returns the interface's name.
func (e *Ethtool) Name() string { return e.Interface }

// External returns false.
func (e *Ethtool) External() bool { return false }

// Dependencies: the interface, so that the settings are applied after
// the link exists with its MTU (some drivers reset rings on an MTU
// change).
func (e *Ethtool) Dependencies() []dg.Dependency {
	return []dg.Dependency{requires(InterfaceRef(e.Interface), "ethtool settings of the interface")}
}

// Equal compares the settings and the MTU they follow.
func (e *Ethtool) Equal(other dg.Item) bool {
	o, ok := other.(*Ethtool)
	return ok && o != nil && e.Interface == o.Interface && e.MTU == o.MTU &&
		maps.Equal(e.Settings, o.Settings) && maps.EqualFunc(e.Sets, o.Sets, slices.Equal)
}

// String lists the settings in key order, then the MTU they follow.
func (e *Ethtool) String() string {
	parts := make([]string, 0, len(e.Settings)+len(e.Sets)+1)
	for _, k := range slices.Sorted(maps.Keys(e.Settings)) {
		parts = append(parts, fmt.Sprintf("%s=%d", k, e.Settings[k]))
	}
	for _, k := range slices.Sorted(maps.Keys(e.Sets)) {
		parts = append(parts, k+"="+strings.Join(e.Sets[k], ","))
	}
	if e.MTU != 0 {
		parts = append(parts, fmt.Sprintf("(after mtu %d)", e.MTU))
	}
	return "ethtool " + e.Interface + " " + strings.Join(parts, " ")
}

// EthtoolRef refers to the Ethtool item of ifname.
func EthtoolRef(ifname string) dg.ItemRef { return dg.ItemRef{Type: TypeEthtool, Name: ifname} }

// EthtoolKey is the settings key of field in group.
func EthtoolKey(group, field string) string { return group + "/" + field }

// The ethtool groups and their fields, as the intent names them. The
// features group's fields are the kernel's feature names (EthtoolFeatures).
var EthtoolFields = map[string][]string{
	"channels":    {"rx", "tx", "other", "combined"},
	"rings":       {"rx", "rx-mini", "rx-jumbo", "tx"},
	"coalesce":    {"rx-usecs", "tx-usecs", "rx-frames", "tx-frames", "adaptive-rx", "adaptive-tx"},
	"pause":       {"autoneg", "rx", "tx"},
	"link":        {"speed", "duplex", "autoneg"},
	"wake-on-lan": {"modes"},
}

// ethtoolMaxMTU bounds the MTU an Ethtool item follows: a VRF's, the
// largest the kernel gives a link.
const ethtoolMaxMTU = 65575

// EthtoolAdvertise is the key of the advertised link modes, a set.
const EthtoolAdvertise = "link/advertise"

// EthtoolLinkModes are the kernel's link mode names in bit order
// (include/uapi/linux/ethtool.h ETHTOOL_LINK_MODE_*_BIT, the names of
// net/ethtool/common.c link_mode_names, as ethtool prints them). The
// speed and duplex modes ("<speed>base<type>/<Half|Full>",
// EthtoolSpeedMode) are what "link/advertise" holds; the others (Autoneg,
// TP, Pause, the FEC modes, ...) are the kernel's and the driver's.
var EthtoolLinkModes = []string{
	"10baseT/Half", "10baseT/Full", "100baseT/Half", "100baseT/Full", "1000baseT/Half",
	"1000baseT/Full", "Autoneg", "TP", "AUI", "MII", "FIBRE", "BNC", "10000baseT/Full", "Pause",
	"Asym_Pause", "2500baseX/Full", "Backplane", "1000baseKX/Full", "10000baseKX4/Full",
	"10000baseKR/Full", "10000baseR_FEC", "20000baseMLD2/Full", "20000baseKR2/Full",
	"40000baseKR4/Full", "40000baseCR4/Full", "40000baseSR4/Full", "40000baseLR4/Full",
	"56000baseKR4/Full", "56000baseCR4/Full", "56000baseSR4/Full", "56000baseLR4/Full",
	"25000baseCR/Full", "25000baseKR/Full", "25000baseSR/Full", "50000baseCR2/Full",
	"50000baseKR2/Full", "100000baseKR4/Full", "100000baseSR4/Full", "100000baseCR4/Full",
	"100000baseLR4_ER4/Full", "50000baseSR2/Full", "1000baseX/Full", "10000baseCR/Full",
	"10000baseSR/Full", "10000baseLR/Full", "10000baseLRM/Full", "10000baseER/Full",
	"2500baseT/Full", "5000baseT/Full", "None", "RS", "BASER", "50000baseKR/Full",
	"50000baseSR/Full", "50000baseCR/Full", "50000baseLR_ER_FR/Full", "50000baseDR/Full",
	"100000baseKR2/Full", "100000baseSR2/Full", "100000baseCR2/Full",
	"100000baseLR2_ER2_FR2/Full", "100000baseDR2/Full", "200000baseKR4/Full",
	"200000baseSR4/Full", "200000baseLR4_ER4_FR4/Full", "200000baseDR4/Full",
	"200000baseCR4/Full", "100baseT1/Full", "1000baseT1/Full", "400000baseKR8/Full",
	"400000baseSR8/Full", "400000baseLR8_ER8_FR8/Full", "400000baseDR8/Full",
	"400000baseCR8/Full", "LLRS", "100000baseKR/Full", "100000baseSR/Full",
	"100000baseLR_ER_FR/Full", "100000baseCR/Full", "100000baseDR/Full", "200000baseKR2/Full",
	"200000baseSR2/Full", "200000baseLR2_ER2_FR2/Full", "200000baseDR2/Full",
	"200000baseCR2/Full", "400000baseKR4/Full", "400000baseSR4/Full",
	"400000baseLR4_ER4_FR4/Full", "400000baseDR4/Full", "400000baseCR4/Full", "100baseFX/Half",
	"100baseFX/Full", "10baseT1L/Full", "800000baseCR8/Full", "800000baseKR8/Full",
	"800000baseDR8/Full", "800000baseDR8_2/Full", "800000baseSR8/Full", "800000baseVR8/Full",
	"10baseT1S/Full", "10baseT1S/Half", "10baseT1S_P2MP/Half", "10baseT1BRR/Full",
}

// EthtoolSpeedMode reports whether name is one of EthtoolLinkModes'
// speed and duplex modes.
func EthtoolSpeedMode(name string) bool {
	return strings.Contains(name, "/") && slices.Contains(EthtoolLinkModes, name)
}

// The duplex values of "link/duplex".
const (
	EthtoolDuplexHalf = 0
	EthtoolDuplexFull = 1
)

// EthtoolWakeOnLan are the Wake-on-LAN modes by name and their bits (the
// kernel's WAKE_* flags).
var EthtoolWakeOnLan = map[string]uint32{
	"phy": 1 << 0, "unicast": 1 << 1, "multicast": 1 << 2, "broadcast": 1 << 3,
	"arp": 1 << 4, "magic": 1 << 5, "magicsecure": 1 << 6, "filter": 1 << 7,
}

// EthtoolFeatures are the kernel's feature names (net/ethtool/common.c
// netdev_features_strings, Linux 6.18), the features group's fields.
var EthtoolFeatures = []string{
	"tx-scatter-gather", "tx-checksum-ipv4", "tx-checksum-ip-generic", "tx-checksum-ipv6",
	"highdma", "tx-scatter-gather-fraglist", "tx-vlan-hw-insert", "rx-vlan-hw-parse",
	"rx-vlan-filter", "vlan-challenged", "tx-generic-segmentation", "tx-lockless",
	"netns-local", "rx-gro", "rx-lro", "tx-tcp-segmentation", "tx-gso-robust",
	"tx-tcp-ecn-segmentation", "tx-tcp-mangleid-segmentation", "tx-tcp6-segmentation",
	"tx-tcp-accecn-segmentation", "tx-fcoe-segmentation", "tx-gre-segmentation",
	"tx-gre-csum-segmentation", "tx-ipxip4-segmentation", "tx-ipxip6-segmentation",
	"tx-udp_tnl-segmentation", "tx-udp_tnl-csum-segmentation", "tx-gso-partial",
	"tx-tunnel-remcsum-segmentation", "tx-sctp-segmentation", "tx-esp-segmentation",
	"tx-udp-segmentation", "tx-gso-list", "tx-checksum-fcoe-crc", "tx-checksum-sctp",
	"fcoe-mtu", "rx-ntuple-filter", "rx-hashing", "rx-checksum", "tx-nocache-copy",
	"loopback", "rx-fcs", "rx-all", "tx-vlan-stag-hw-insert", "rx-vlan-stag-hw-parse",
	"rx-vlan-stag-filter", "l2-fwd-offload", "hw-tc-offload", "esp-hw-offload",
	"esp-tx-csum-hw-offload", "rx-udp_tunnel-port-offload", "tls-hw-tx-offload",
	"tls-hw-rx-offload", "rx-gro-hw", "tls-hw-record", "rx-gro-list", "macsec-hw-offload",
	"rx-udp-gro-forwarding", "hsr-tag-ins-offload", "hsr-tag-rm-offload", "hsr-fwd-offload",
	"hsr-dup-offload",
}

// ethtoolAliases are the ethtool CLI's short and long names of features
// (its off_flag_def table) and the kernel names they stand for, as a
// path.Match pattern.
var ethtoolAliases = []struct{ short, long, pattern string }{
	{"rx", "rx-checksumming", "rx-checksum"},
	{"tx", "tx-checksumming", "tx-checksum-*"},
	{"sg", "scatter-gather", "tx-scatter-gather*"},
	{"tso", "tcp-segmentation-offload", "tx-tcp*-segmentation"},
	{"gso", "generic-segmentation-offload", "tx-generic-segmentation"},
	{"gro", "generic-receive-offload", "rx-gro"},
	{"lro", "large-receive-offload", "rx-lro"},
	{"rxvlan", "rx-vlan-offload", "rx-vlan-hw-parse"},
	{"txvlan", "tx-vlan-offload", "tx-vlan-hw-insert"},
	{"ntuple", "ntuple-filters", "rx-ntuple-filter"},
	{"rxhash", "receive-hashing", "rx-hashing"},
}

// ExpandFeature returns the kernel feature names a name of the intent
// stands for: itself when it is a kernel name, the features of an ethtool
// CLI alias, nil for an unknown name.
func ExpandFeature(name string) []string {
	if slices.Contains(EthtoolFeatures, name) {
		return []string{name}
	}
	for _, a := range ethtoolAliases {
		if name != a.short && name != a.long {
			continue
		}
		var out []string
		for _, f := range EthtoolFeatures {
			if ok, _ := path.Match(a.pattern, f); ok {
				out = append(out, f)
			}
		}
		return out
	}
	return nil
}

// Validate checks the interface's name, that every key is a known
// group's field (a feature by the kernel's name) with a value in its
// range (0 or 1 for features and flags), that the only set is
// "link/advertise", of speed and duplex modes sorted and each once (none:
// a NIC with autoneg off reports none), and
// the MTU's range.
func (e *Ethtool) Validate() error {
	if !validIfName(e.Interface) {
		return invalid(e, "bad interface name %q", e.Interface)
	}
	if e.MTU < 0 || e.MTU > ethtoolMaxMTU {
		return invalid(e, "MTU %d out of range", e.MTU)
	}
	for key, modes := range e.Sets {
		if key != EthtoolAdvertise {
			return invalid(e, "%s is not an ethtool set", key)
		}
		if !slices.IsSorted(modes) || len(slices.Compact(slices.Clone(modes))) != len(modes) {
			return invalid(e, "%s=%v is not a sorted list of distinct modes", key, modes)
		}
		for _, m := range modes {
			if !EthtoolSpeedMode(m) {
				return invalid(e, "%s: %q is not a kernel link mode of a speed and duplex", key, m)
			}
		}
	}
	for key, v := range e.Settings {
		group, field, _ := strings.Cut(key, "/")
		switch {
		case group == "features":
			if !slices.Contains(EthtoolFeatures, field) || v > 1 {
				return invalid(e, "%s=%d is not a kernel feature on or off", key, v)
			}
		case !slices.Contains(EthtoolFields[group], field):
			return invalid(e, "%s is not an ethtool setting", key)
		case EthtoolFlag(key) && v > 1:
			return invalid(e, "%s=%d is not a boolean", key, v)
		}
	}
	return nil
}

// EthtoolFlag reports whether the key's value is a boolean.
func EthtoolFlag(key string) bool {
	switch key {
	case "coalesce/adaptive-rx", "coalesce/adaptive-tx", "pause/autoneg", "pause/rx", "pause/tx", "link/autoneg", "link/duplex":
		return true
	}
	return false
}
