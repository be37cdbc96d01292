package items

import (
	"fmt"
	"net/netip"
	"slices"

	dg "github.com/netagent/netagent/depgraph"
)

// The tunnel kinds, which share TunnelAttrs.
const (
	KindGRE    InterfaceKind = "gre"
	KindIPIP   InterfaceKind = "ipip"
	KindSIT    InterfaceKind = "sit"
	KindIP6Tnl InterfaceKind = "ip6tnl"
)

// TunnelAttrs are the settings of an IP tunnel (required), one type for the
// four kinds: gre and ipip (IPv4 over IPv4, net/ipv4/ip_gre.c, ipip.c on
// ip_tunnel.c), sit (IPv6 over IPv4, net/ipv6/sit.c) and ip6tnl (IPv4 or
// IPv6 over IPv6, net/ipv6/ip6_tunnel.c). Type says which; the kernel's
// zero values are the defaults, but for PMTUDisc (see below).
type TunnelAttrs struct {
	Type InterfaceKind // KindGRE, KindIPIP, KindSIT or KindIP6Tnl
	// Local and Remote are the outer endpoints: IPv4 for gre, ipip and
	// sit, IPv6 for ip6tnl; the zero Addr is "any" (a tunnel without a
	// remote sends to a destination taken per packet, as NBMA tunnels do,
	// and receives from anyone).
	Local, Remote netip.Addr
	// TTL of the outer header (the hop limit for ip6tnl); 0 inherits the
	// inner packet's.
	TTL uint8
	// Parent is the ifname of the link the outer packets are bound to
	// (IFLA_GRE_LINK, IFLA_IPTUN_LINK); "" for none.
	Parent string
	// NoPMTUDisc clears the outer DF bit (gre, ipip, sit). The kernel sets
	// DF (path MTU discovery) when IFLA_*_PMTUDISC is absent, so the zero
	// value is the kernel's default.
	NoPMTUDisc bool
	// IKey and OKey are the GRE keys of received and sent packets (gre);
	// 0 for none.
	IKey, OKey uint32
	// Mode is ip6tnl's inner protocol, IFLA_IPTUN_PROTO: "ip6ip6",
	// "ipip6" or "" (any, the kernel's 0). gre, ipip and sit have one
	// (IPPROTO_GRE, IPPROTO_IPIP, IPPROTO_IPV6): "" for them.
	Mode string
	// EncapLimit is ip6tnl's tunnel encapsulation limit option (RFC 2473),
	// sent as is (the kernel's netlink default is 0; iproute2's and the
	// intent's is 4).
	EncapLimit uint8
}

// The ip6tnl modes.
var ip6tnlModes = []string{"", "ip6ip6", "ipip6"}

// tunnelFamily is the outer family of each tunnel kind.
var tunnelFamily = map[InterfaceKind]Family{
	KindGRE: FamilyIPv4, KindIPIP: FamilyIPv4, KindSIT: FamilyIPv4, KindIP6Tnl: FamilyIPv6,
}

// TunnelFallback is the device each tunnel module creates in every
// namespace when it loads (gre0 for gre, and gretap0 and erspan0 from the
// same module, tunl0, sit0, ip6tnl0; ip6gre0 from ip6_gre). The kernel owns
// them: netagent never changes, deletes or creates one, and their names are
// taken.
var TunnelFallback = map[InterfaceKind]string{
	KindGRE: "gre0", KindIPIP: "tunl0", KindSIT: "sit0", KindIP6Tnl: "ip6tnl0",
}

// Kind returns the tunnel's kind.
func (a *TunnelAttrs) Kind() InterfaceKind { return a.Type }

// Equal compares the settings.
func (a *TunnelAttrs) Equal(other KindAttrs) bool { return sameAttrs(a, other) }

// NeedsRecreate: whether the tunnel has a remote or not (all kinds but
// ip6tnl), the mode of gre, ipip and sit, and the family.
//
// ip_tunnel_changelink (gre, ipip) and ipip6_changelink (sit) replace the
// whole parameter set in place (local, remote, ttl, pmtudisc, link, keys),
// but refuse with EINVAL to turn a point-to-point tunnel (one with a
// remote, IFF_POINTOPOINT set at creation) into one without or back; and
// neither ip_tunnel_update nor ipip6_tunnel_update copies iph.protocol, so
// their mode is fixed. ip6_tnl_changelink copies everything, the mode
// (proto) included, and recomputes IFF_POINTOPOINT. The outer family is the
// kind's (Problem refuses another), so only a kind change, which
// InterfaceNeedsRecreate handles, changes it.
func (a *TunnelAttrs) NeedsRecreate(old KindAttrs) bool {
	o := oldAttrs[TunnelAttrs](old)
	if a.Type == KindIP6Tnl {
		return false
	}
	return o.Remote.IsValid() != a.Remote.IsValid() || o.Mode != a.Mode
}

// Dependencies: the parent interface, when there is one.
func (a *TunnelAttrs) Dependencies(string) []dg.Dependency {
	if a.Parent == "" {
		return nil
	}
	return []dg.Dependency{requires(InterfaceRef(a.Parent), "parent")}
}

// ConflictKeys: "<kind> local <local> remote <remote> link <parent> key
// <ikey>", the identity the kernel keeps unique among the tunnels of a kind
// in a namespace (ip_tunnel_find, ipip6_tunnel_locate, ip6_tnl_locate: a
// second one is EEXIST, at create and at changelink). The input key is part
// of it for gre only.
func (a *TunnelAttrs) ConflictKeys(string) []string {
	return []string{a.Identity()}
}

// Identity is the tunnel's kernel identity, as ConflictKeys.
func (a *TunnelAttrs) Identity() string {
	return fmt.Sprintf("%s local %s remote %s link %q key %d", a.Type, anyAddr(a.Local), anyAddr(a.Remote), a.Parent, a.IKey)
}

func anyAddr(a netip.Addr) string {
	if !a.IsValid() {
		return "any"
	}
	return a.String()
}

// Problem checks the kind, the family and unicast-ness of the endpoints,
// the options of other kinds, the parent, and the identity of the
// kernel's fallback device (all any, no key, no parent), which the kernel
// holds already.
func (a *TunnelAttrs) Problem(self string) string {
	fam, ok := tunnelFamily[a.Type]
	switch {
	case !ok:
		return "unknown tunnel kind " + string(a.Type)
	case !sameFamily(fam, a.Local, a.Remote):
		return fmt.Sprintf("%s endpoints must be %s", a.Type, fam)
	case a.Local.IsMulticast() || a.Remote.IsMulticast():
		return "multicast tunnel endpoint"
	case a.Type != KindGRE && (a.IKey != 0 || a.OKey != 0):
		return "keys on a " + string(a.Type) + " tunnel"
	case a.Type != KindIP6Tnl && (a.Mode != "" || a.EncapLimit != 0):
		return "ip6tnl options on a " + string(a.Type) + " tunnel"
	case a.Type == KindIP6Tnl && a.NoPMTUDisc:
		return "pmtudisc off on an ip6tnl tunnel"
	case !slices.Contains(ip6tnlModes, a.Mode):
		return "unknown ip6tnl mode " + a.Mode
	case a.NoPMTUDisc && a.TTL != 0:
		return "a fixed ttl needs path MTU discovery"
	case a.Parent != "" && (!validIfName(a.Parent) || a.Parent == self):
		return "bad tunnel parent " + a.Parent
	case !a.Local.IsValid() && !a.Remote.IsValid() && a.IKey == 0 && a.Parent == "":
		return "the identity of the fallback device " + TunnelFallback[a.Type]
	}
	return ""
}

// String describes the settings.
func (a *TunnelAttrs) String() string {
	return joinSet("local", a.Local, "remote", a.Remote, "ttl", int(a.TTL), "parent", a.Parent,
		"nopmtudisc", a.NoPMTUDisc, "ikey", a.IKey, "okey", a.OKey, "mode", a.Mode,
		"encaplimit", int(a.EncapLimit))
}
