package intent

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"github.com/netagent/netagent/items"
)

// The tunnel types, whose sections (named like the type) are all a Tunnel.
const (
	LinkGRE    LinkType = "gre"
	LinkIPIP   LinkType = "ipip"
	LinkSIT    LinkType = "sit"
	LinkIP6Tnl LinkType = "ip6tnl"
)

// Tunnel holds the settings of a gre, ipip or sit tunnel: {"type": "gre",
// "gre": {"local": "192.0.2.1", "remote": "198.51.100.1"}} (likewise
// "ipip" and "sit"). The section, named like the type, is required. The
// endpoints are IPv4 (sit carries IPv6 over IPv4). TTL is 0-255 (0, the
// default, inherits the inner packet's), Parent the link the outer
// packets are bound to, PMTUDisc true by default (false needs ttl 0); a
// gre also has Key (both directions), or IKey and OKey (1-4294967295).
//
// An endpoint left out is "any": a tunnel without a remote sends to a
// destination chosen per packet (an NBMA tunnel) and receives from anyone;
// without a local, the kernel picks the source address. A tunnel has no
// mac. The kernel keeps a tunnel's identity unique per type (local,
// remote, parent and a gre's input key): two such tunnels are refused,
// naming both, and so is one with neither local, remote, key nor parent,
// which is the identity of the device the module makes itself. Those
// devices (TunnelFallbackNames: gre0, gretap0, erspan0, tunl0, sit0,
// ip6tnl0, ip6gre0) are the kernel's: no interface of a type netagent
// creates may take their names (a physical one may, for its settings).
type Tunnel struct {
	Local  string `json:"local,omitempty"`
	Remote string `json:"remote,omitempty"`
	TTL    int    `json:"ttl,omitempty"` // 1-255; 0: inherit the inner packet's
	Parent string `json:"parent,omitempty"`
	// PMTUDisc: path MTU discovery (the outer DF bit); nil: true. Off
	// needs ttl 0 (inherit), as iproute2 requires.
	PMTUDisc *bool `json:"pmtudisc,omitempty"`
	// Key (both directions), IKey and OKey: GRE keys (gre only), 1-4294967295;
	// key excludes ikey and okey.
	Key  int `json:"key,omitempty"`
	IKey int `json:"ikey,omitempty"`
	OKey int `json:"okey,omitempty"`
}

// IP6Tnl holds the settings of an ip6tnl tunnel: {"type": "ip6tnl",
// "ip6tnl": {"local": "2001:db8::1", "remote": "2001:db8::2"}}. The
// section is required. The endpoints are IPv6, "any" when left out as for
// Tunnel, whose rules of identity and fallback devices apply too. HopLimit
// defaults to 64 (0 inherits), Mode is ip6ip6, ipip6 or any (the default),
// EncapLimit 0-255, default 4.
type IP6Tnl struct {
	Local  string `json:"local,omitempty"`
	Remote string `json:"remote,omitempty"`
	// HopLimit of the outer header: 0 inherits the inner packet's; nil:
	// DefaultTunnelHopLimit.
	HopLimit *int       `json:"hopLimit,omitempty"`
	Parent   string     `json:"parent,omitempty"`
	Mode     IP6TnlMode `json:"mode,omitempty"` // "": any
	// EncapLimit is the tunnel encapsulation limit option (RFC 2473),
	// 0-255; nil: DefaultTunnelEncapLimit.
	EncapLimit *int `json:"encapLimit,omitempty"`
}

// The defaults of an ip6tnl tunnel, iproute2's and systemd-networkd's
// (the kernel's netlink defaults are 0 for both).
const (
	DefaultTunnelHopLimit   = 64
	DefaultTunnelEncapLimit = 4
)

// IP6TnlMode is what an ip6tnl tunnel carries.
type IP6TnlMode string

// The ip6tnl modes.
const (
	IP6TnlIP6IP6 IP6TnlMode = "ip6ip6" // IPv6 over IPv6
	IP6TnlIPIP6  IP6TnlMode = "ipip6"  // IPv4 over IPv6
	IP6TnlAny    IP6TnlMode = "any"    // both
)

var ip6tnlModes = []IP6TnlMode{IP6TnlIP6IP6, IP6TnlIPIP6, IP6TnlAny}

// EffectiveMode returns the mode, any when unset.
func (t *IP6Tnl) EffectiveMode() IP6TnlMode { return orDefault(t.Mode, IP6TnlAny) }

// EffectiveHopLimit returns the hop limit, DefaultTunnelHopLimit when unset.
func (t *IP6Tnl) EffectiveHopLimit() int { return intOr(t.HopLimit, DefaultTunnelHopLimit) }

// EffectiveEncapLimit returns the encapsulation limit,
// DefaultTunnelEncapLimit when unset.
func (t *IP6Tnl) EffectiveEncapLimit() int { return intOr(t.EncapLimit, DefaultTunnelEncapLimit) }

// EffectivePMTUDisc reports whether path MTU discovery is on (true unless
// PMTUDisc is false).
func (t *Tunnel) EffectivePMTUDisc() bool { return t.PMTUDisc == nil || *t.PMTUDisc }

// InputKey and OutputKey return the GRE keys, from key or ikey/okey; 0
// for none.
func (t *Tunnel) InputKey() int  { return max(t.Key, t.IKey) }
func (t *Tunnel) OutputKey() int { return max(t.Key, t.OKey) }

func intOr(p *int, def int) int {
	if p == nil {
		return def
	}
	return *p
}

// The four tunnel sections: required, sitting on their parent when they
// have one, whose MTU does not bound theirs (the outer packets fragment).
var (
	greSection    = tunnelSection(LinkGRE, func(ifc *Interface) *Tunnel { return ifc.GRE })
	ipipSection   = tunnelSection(LinkIPIP, func(ifc *Interface) *Tunnel { return ifc.IPIP })
	sitSection    = tunnelSection(LinkSIT, func(ifc *Interface) *Tunnel { return ifc.SIT })
	ip6tnlSection = linkSection{
		typ:      LinkIP6Tnl,
		required: true,
		present:  func(ifc *Interface) bool { return ifc.IP6Tnl != nil },
		check:    (*checker).ip6tnl,
		parent:   func(ifc *Interface) (string, int, string) { return ifc.IP6Tnl.Parent, -1, "" },
	}
)

// tunnelSection is the section of an IPv4 tunnel type, found by get.
func tunnelSection(typ LinkType, get func(*Interface) *Tunnel) linkSection {
	return linkSection{
		typ:      typ,
		required: true,
		present:  func(ifc *Interface) bool { return get(ifc) != nil },
		check: func(c *checker, ifc *Interface, o Origin, unique map[string]Origin) {
			c.tunnel4(ifc, get(ifc), o, unique)
		},
		parent: func(ifc *Interface) (string, int, string) { return get(ifc).Parent, -1, "" },
	}
}

// TunnelFallbackNames are the devices the tunnel modules create in every
// namespace when they load (gre0, gretap0 and erspan0 from ip_gre, tunl0,
// sit0, ip6tnl0, ip6gre0). The kernel owns them: no interface of a type
// netagent creates may take one of these names (a physical one may: its
// settings, as Calico sets tunl0's).
var TunnelFallbackNames = []string{"gre0", "gretap0", "erspan0", "tunl0", "sit0", "ip6tnl0", "ip6gre0"}

// notFallbackName refuses a created interface named like a fallback
// tunnel device.
func (c *checker) notFallbackName(ifc *Interface, o Origin) {
	if ifc.Type != LinkPhysical && slices.Contains(TunnelFallbackNames, ifc.Name) {
		c.fail(o, "%q is the name of the device the kernel's tunnel module creates (and owns) when it loads; choose another", ifc.Name)
	}
}

// tunnelEnds are the settings the four tunnel types share.
type tunnelEnds struct {
	typ           LinkType
	family        Family
	local, remote string
	parent        string
	key           int // the input key, part of the identity (gre)
}

// tunnel4 checks a gre, ipip or sit tunnel.
func (c *checker) tunnel4(ifc *Interface, t *Tunnel, o Origin, unique map[string]Origin) {
	c.inRange(o.field("ttl"), t.TTL, 0, 255)
	if !t.EffectivePMTUDisc() && t.TTL != 0 {
		c.fail(o.field("pmtudisc"), "false needs ttl 0 (inherit): the kernel sets DF on a tunnel with a fixed ttl")
	}
	keys := []struct {
		name string
		v    int
	}{{"key", t.Key}, {"ikey", t.IKey}, {"okey", t.OKey}}
	for _, k := range keys {
		switch {
		case k.v == 0:
		case ifc.Type != LinkGRE:
			c.fail(o.field(k.name), "only a gre tunnel has keys")
		case k.v != 0 && k.name != "key" && t.Key != 0:
			c.fail(o.field(k.name), "not allowed together with key")
		default:
			c.inRange(o.field(k.name), k.v, 1, 1<<32-1)
		}
	}
	c.tunnel(ifc, tunnelEnds{typ: ifc.Type, family: FamilyIPv4, local: t.Local, remote: t.Remote,
		parent: t.Parent, key: t.InputKey()}, o, unique)
}

// ip6tnl checks an ip6tnl tunnel.
func (c *checker) ip6tnl(ifc *Interface, o Origin, unique map[string]Origin) {
	t := ifc.IP6Tnl
	c.inRange(o.field("hopLimit"), t.EffectiveHopLimit(), 0, 255)
	c.inRange(o.field("encapLimit"), t.EffectiveEncapLimit(), 0, 255)
	oneOf(c, o.field("mode"), t.Mode, ip6tnlModes)
	c.tunnel(ifc, tunnelEnds{typ: LinkIP6Tnl, family: FamilyIPv6, local: t.Local, remote: t.Remote,
		parent: t.Parent}, o, unique)
}

// tunnel checks what the tunnel types share: the endpoints (unicast, of
// the type's family), the parent, no MAC address, and the kernel's
// identity of the tunnel (type, local, remote, parent and gre input key),
// which no other tunnel may have, the fallback device included.
func (c *checker) tunnel(ifc *Interface, e tunnelEnds, o Origin, unique map[string]Origin) {
	c.parent(ifc, o.field("parent"), e.parent, false)
	ok := c.tunnelAddr(o.field("local"), e, e.local)
	ok = c.tunnelAddr(o.field("remote"), e, e.remote) && ok
	if ifc.MAC != "" {
		at := Origin{File: o.File, Path: strings.TrimSuffix(o.Path, "."+string(e.typ))}
		c.fail(at.field("mac"), "a %s tunnel has no MAC address", e.typ)
	}
	if !ok {
		return
	}
	if e.local == "" && e.remote == "" && e.key == 0 && e.parent == "" {
		c.fail(o, "a %s tunnel without local, remote, key or parent is the kernel's own fallback device (which it creates with the module); set at least one", e.typ)
		return
	}
	key := fmt.Sprintf("%s tunnel from %s to %s", e.typ, orAny(e.local), orAny(e.remote))
	if e.key != 0 {
		key += fmt.Sprintf(" with key %d", e.key)
	}
	if e.parent != "" {
		key += fmt.Sprintf(" over %q", e.parent)
	}
	c.unique(unique, key, o)
}

// tunnelAddr checks a tunnel endpoint, if set: unicast, of the family.
func (c *checker) tunnelAddr(o Origin, e tunnelEnds, s string) bool {
	if s == "" {
		return true
	}
	a, ok := c.addr(o, s)
	switch {
	case !ok:
	case !items.IsUnicast(a):
		c.fail(o, "%s is not a unicast address", a)
	case familyOf(a) != e.family:
		c.fail(o, "%s is %s, but a %s tunnel's endpoints are %s", a, famName(familyOf(a)), e.typ, famName(e.family))
	default:
		return true
	}
	return false
}

// orAny canonicalises an endpoint for the identity: "any" for none.
func orAny(s string) string {
	if s == "" {
		return "any"
	}
	if a, err := netip.ParseAddr(s); err == nil {
		return a.String()
	}
	return s
}
