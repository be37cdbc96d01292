package intent

import (
	"maps"
	"slices"

	"github.com/netagent/netagent/items"
)

// Ethtool holds an interface's ethtool settings (ethtool -K/-L/-G/-C/-A/
// -s/wol; networkd's .link offload and queue keys, nmstate's ethtool:).
// Only what is named is set; a setting that leaves the intent gets back
// the value netagent found before it first changed it. Any link kind may
// have it; the driver decides what it supports (a veth: features and
// channels), and what it reports fixed or above its maximum is refused
// at plan and apply.
type Ethtool struct {
	// Features turns offloads on or off, by the kernel's names
	// ("rx-checksum", "tx-checksum-ip-generic", "rx-gro") or the ethtool
	// CLI's ("tcp-segmentation-offload", and its aliases rx, tx, sg,
	// tso, gso, gro, lro, rxvlan, txvlan, ntuple, rxhash).
	Features  map[string]bool  `json:"features,omitempty"`
	Channels  *EthtoolChannels `json:"channels,omitempty"`
	Rings     *EthtoolRings    `json:"rings,omitempty"`
	Coalesce  *EthtoolCoalesce `json:"coalesce,omitempty"`
	Pause     *EthtoolPause    `json:"pause,omitempty"`
	Link      *EthtoolLink     `json:"link,omitempty"`
	WakeOnLan []WakeOnLanMode  `json:"wakeOnLan,omitzero"` // modes; [] turns it off
}

// EthtoolChannels are queue counts (ethtool -L).
type EthtoolChannels struct {
	RX       *int `json:"rx,omitempty"`
	TX       *int `json:"tx,omitempty"`
	Other    *int `json:"other,omitempty"`
	Combined *int `json:"combined,omitempty"`
}

// EthtoolRings are ring sizes in descriptors (ethtool -G).
type EthtoolRings struct {
	RX      *int `json:"rx,omitempty"`
	TX      *int `json:"tx,omitempty"`
	RXJumbo *int `json:"rx-jumbo,omitempty"`
	RXMini  *int `json:"rx-mini,omitempty"`
}

// EthtoolCoalesce is interrupt coalescing (ethtool -C).
type EthtoolCoalesce struct {
	RXUsecs    *int  `json:"rx-usecs,omitempty"`
	TXUsecs    *int  `json:"tx-usecs,omitempty"`
	RXFrames   *int  `json:"rx-frames,omitempty"`
	TXFrames   *int  `json:"tx-frames,omitempty"`
	AdaptiveRX *bool `json:"adaptive-rx,omitempty"`
	AdaptiveTX *bool `json:"adaptive-tx,omitempty"`
}

// EthtoolPause is flow control (ethtool -A).
type EthtoolPause struct {
	Autoneg *bool `json:"autoneg,omitempty"`
	RX      *bool `json:"rx,omitempty"`
	TX      *bool `json:"tx,omitempty"`
}

// EthtoolLink is the link mode (ethtool -s): speed in Mb/s, duplex
// ("half", "full"), autonegotiation, and the link modes autonegotiation
// advertises (ethtool -s advertise), by the kernel's names as ethtool
// lists them ("1000baseT/Full", "100baseT/Full"; items.EthtoolLinkModes'
// speed and duplex modes): exactly those are offered. Advertising needs
// autonegotiation: with autoneg false it is refused here, and with the
// NIC's autoneg off (and not turned on) at plan and apply; a mode the NIC
// does not support is refused at plan and apply, naming those it does.
type EthtoolLink struct {
	Speed     *int     `json:"speed,omitempty"`
	Duplex    Duplex   `json:"duplex,omitempty"`
	Autoneg   *bool    `json:"autoneg,omitempty"`
	Advertise []string `json:"advertise,omitempty"`
}

// Bounds of the numbers: what no NIC reports as its maximum.
const (
	maxEthtoolChannels = 4096
	maxEthtoolRing     = 1 << 16
	maxEthtoolUsecs    = 1_000_000 // a second
	maxEthtoolFrames   = 1 << 16
	maxEthtoolSpeed    = 1_600_000 // 1.6 Tb/s
)

// Duplex is a link's duplex.
type Duplex string

// The duplex values.
const (
	DuplexHalf Duplex = "half"
	DuplexFull Duplex = "full"
)

// WakeOnLanMode is a Wake-on-LAN mode (ethtool wol; items.EthtoolWakeOnLan
// holds their bits).
type WakeOnLanMode string

var (
	duplexes       = []Duplex{DuplexHalf, DuplexFull}
	wakeOnLanModes = []WakeOnLanMode{"arp", "broadcast", "filter", "magic", "magicsecure", "multicast", "phy", "unicast"}
)

// ethtool checks an interface's ethtool section.
func (c *checker) ethtool(ifc *Interface, at Origin) {
	e := ifc.Ethtool
	if e == nil {
		return
	}
	o := at.field("ethtool")
	c.ethtoolFeatures(e.Features, o.field("features"))
	for _, n := range e.numbers() {
		c.inRange(o.field(n.group).field(n.field), *n.v, 0, n.max)
	}
	if e.Link != nil {
		if e.Link.Speed != nil {
			c.inRange(o.field("link").field("speed"), *e.Link.Speed, 1, maxEthtoolSpeed)
		}
		oneOf(c, o.field("link").field("duplex"), e.Link.Duplex, duplexes)
		c.advertise(e.Link, o.field("link").field("advertise"))
	}
	seen := map[WakeOnLanMode]bool{}
	for i, m := range e.WakeOnLan {
		if oneOf(c, o.field("wakeOnLan").index(i), m, wakeOnLanModes) && seen[m] {
			c.fail(o.field("wakeOnLan").index(i), "%q listed twice", m)
		}
		seen[m] = true
	}
}

// advertise checks the advertised link modes: known speed and duplex
// modes, each once, at least one, and not with autoneg false.
func (c *checker) advertise(l *EthtoolLink, o Origin) {
	if l.Advertise == nil {
		return
	}
	if len(l.Advertise) == 0 {
		c.fail(o, "names no link mode: a NIC must advertise at least one (leave advertise out to keep what it offers)")
	}
	if l.Autoneg != nil && !*l.Autoneg {
		c.fail(o, "needs autoneg: advertised modes are what autonegotiation offers, and link.autoneg is false")
	}
	seen := map[string]bool{}
	for i, m := range l.Advertise {
		switch {
		case !items.EthtoolSpeedMode(m):
			c.fail(o.index(i), "%q is not a link mode (the kernel's speed and duplex modes as ethtool lists them, e.g. 1000baseT/Full)", m)
		case seen[m]:
			c.fail(o.index(i), "%q listed twice", m)
		}
		seen[m] = true
	}
}

// Sets are the section's set-valued settings as the Ethtool item's
// (items.Ethtool.Sets): the advertised modes, sorted. It assumes a
// validated section.
func (e *Ethtool) Sets() map[string][]string {
	if e.Link == nil || e.Link.Advertise == nil {
		return nil
	}
	modes := slices.Sorted(slices.Values(e.Link.Advertise))
	return map[string][]string{items.EthtoolAdvertise: modes}
}

// ethtoolFeatures checks the feature names, and that two names of one
// feature (an alias and the kernel's name) do not ask for both values.
func (c *checker) ethtoolFeatures(fs map[string]bool, o Origin) {
	by := map[string]string{}
	for _, name := range slices.Sorted(maps.Keys(fs)) {
		kernel := items.ExpandFeature(name)
		if kernel == nil {
			c.fail(o.key(name), "unknown feature (the kernel's names, as ethtool -k lists them, or the ethtool CLI's aliases)")
			continue
		}
		for _, k := range kernel {
			if other, ok := by[k]; ok && fs[other] != fs[name] {
				c.fail(o.key(name), "contradicts %q: both set %s", other, k)
			}
			by[k] = name
		}
	}
}

// ethtoolNumber is one numeric setting of the intent.
type ethtoolNumber struct {
	group, field string
	v            *int
	max          int
}

// numbers lists the numeric settings given, with their bounds.
func (e *Ethtool) numbers() []ethtoolNumber {
	var out []ethtoolNumber
	add := func(group, field string, v *int, max int) {
		if v != nil {
			out = append(out, ethtoolNumber{group, field, v, max})
		}
	}
	if ch := e.Channels; ch != nil {
		add("channels", "rx", ch.RX, maxEthtoolChannels)
		add("channels", "tx", ch.TX, maxEthtoolChannels)
		add("channels", "other", ch.Other, maxEthtoolChannels)
		add("channels", "combined", ch.Combined, maxEthtoolChannels)
	}
	if r := e.Rings; r != nil {
		add("rings", "rx", r.RX, maxEthtoolRing)
		add("rings", "tx", r.TX, maxEthtoolRing)
		add("rings", "rx-jumbo", r.RXJumbo, maxEthtoolRing)
		add("rings", "rx-mini", r.RXMini, maxEthtoolRing)
	}
	if co := e.Coalesce; co != nil {
		add("coalesce", "rx-usecs", co.RXUsecs, maxEthtoolUsecs)
		add("coalesce", "tx-usecs", co.TXUsecs, maxEthtoolUsecs)
		add("coalesce", "rx-frames", co.RXFrames, maxEthtoolFrames)
		add("coalesce", "tx-frames", co.TXFrames, maxEthtoolFrames)
	}
	return out
}

// ethtoolFlag is one boolean setting of the intent.
type ethtoolFlag struct {
	group, field string
	v            *bool
}

// flags lists the boolean settings given (features apart).
func (e *Ethtool) flags() []ethtoolFlag {
	var out []ethtoolFlag
	add := func(group, field string, v *bool) {
		if v != nil {
			out = append(out, ethtoolFlag{group, field, v})
		}
	}
	if co := e.Coalesce; co != nil {
		add("coalesce", "adaptive-rx", co.AdaptiveRX)
		add("coalesce", "adaptive-tx", co.AdaptiveTX)
	}
	if p := e.Pause; p != nil {
		add("pause", "autoneg", p.Autoneg)
		add("pause", "rx", p.RX)
		add("pause", "tx", p.TX)
	}
	if l := e.Link; l != nil {
		add("link", "autoneg", l.Autoneg)
	}
	return out
}

// Settings are the section as the Ethtool item's settings keys and
// values (items.Ethtool), features by the kernel's names. It assumes a
// validated section.
func (e *Ethtool) Settings() map[string]uint32 {
	s := map[string]uint32{}
	for name, on := range e.Features {
		for _, k := range items.ExpandFeature(name) {
			s[items.EthtoolKey("features", k)] = b2u(on)
		}
	}
	for _, n := range e.numbers() {
		s[items.EthtoolKey(n.group, n.field)] = uint32(*n.v)
	}
	for _, f := range e.flags() {
		s[items.EthtoolKey(f.group, f.field)] = b2u(*f.v)
	}
	e.linkSettings(s)
	return s
}

// linkSettings adds the link mode and Wake-on-LAN settings.
func (e *Ethtool) linkSettings(s map[string]uint32) {
	if l := e.Link; l != nil {
		if l.Speed != nil {
			s[items.EthtoolKey("link", "speed")] = uint32(*l.Speed)
		}
		switch l.Duplex {
		case DuplexHalf:
			s[items.EthtoolKey("link", "duplex")] = items.EthtoolDuplexHalf
		case DuplexFull:
			s[items.EthtoolKey("link", "duplex")] = items.EthtoolDuplexFull
		}
	}
	if e.WakeOnLan != nil {
		var mask uint32
		for _, m := range e.WakeOnLan {
			mask |= items.EthtoolWakeOnLan[string(m)]
		}
		s[items.EthtoolKey("wake-on-lan", "modes")] = mask
	}
}

func b2u(b bool) uint32 {
	if b {
		return 1
	}
	return 0
}
