package link

import (
	"encoding/binary"
	"fmt"
	"net"
	"net/netip"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netlink/nl"
	"golang.org/x/sys/unix"

	"github.com/netagent/netagent/items"
)

// tunnelKind creates one kind of IP tunnel (gre, ipip, sit, ip6tnl): the
// four share this code and differ only in their codec. Every setting but
// whether there is a remote (and the mode of gre, ipip and sit: see
// items.TunnelAttrs.NeedsRecreate) changes in place.
//
// The kernel's changelink of the four (ipgre_netlink_parms,
// ipip_netlink_parms, ipip6_netlink_parms, ip6_tnl_netlink_parms) starts
// from zeroed parameters, so an attribute left out of a change is reset,
// not kept: converge always sends the whole set (tunnelCodec.data), as
// iproute2 does after reading the link back. Read-back goes through
// netlink's types, whose parsers leave out IFLA_*_LINK; the parent comes
// from IFLA_LINK, which the kernel fills from the same field
// (ip_tunnel_get_iflink, ip6_tnl_get_iflink).
type tunnelKind struct {
	plainKind
	codec tunnelCodec
}

// tunnelCodec is what differs between the tunnel kinds: the netlink type
// of the create request, its reading, and the IFLA_INFO_DATA of a change.
type tunnelCodec struct {
	// build returns the create request for t bound to the parent ifindex.
	build func(attrs netlink.LinkAttrs, t items.TunnelAttrs, parent uint32) netlink.Link
	// read returns the settings of l, false if l is not of the kind.
	read func(l netlink.Link) (items.TunnelAttrs, bool)
	// data is the whole parameter set of t for a change in place.
	data func(t items.TunnelAttrs, parent uint32) []attr
}

// The IP protocols of the tunnels' inner packets (IFLA_IPTUN_PROTO).
const (
	protoIPIP = unix.IPPROTO_IPIP // ipip, ip6tnl ipip6
	protoIPv6 = unix.IPPROTO_IPV6 // sit, ip6tnl ip6ip6
)

var (
	greTunnel = tunnelKind{codec: tunnelCodec{
		build: func(attrs netlink.LinkAttrs, t items.TunnelAttrs, parent uint32) netlink.Link {
			// Local 0.0.0.0 rather than nil: netlink's Gretun is ip6gre
			// without an IPv4 local address.
			return &netlink.Gretun{LinkAttrs: attrs, Link: parent, IKey: t.IKey, OKey: t.OKey,
				Local: ip4Of(t.Local), Remote: ipOf(t.Remote), Ttl: t.TTL, PMtuDisc: pmtudisc(t)}
		},
		read: func(l netlink.Link) (items.TunnelAttrs, bool) {
			g, ok := l.(*netlink.Gretun)
			if !ok {
				return items.TunnelAttrs{}, false
			}
			t := items.TunnelAttrs{Type: items.KindGRE, Local: addrOf(g.Local), Remote: addrOf(g.Remote),
				TTL: g.Ttl, NoPMTUDisc: g.PMtuDisc == 0}
			if g.IFlags&nl.GRE_KEY != 0 {
				t.IKey = g.IKey
			}
			if g.OFlags&nl.GRE_KEY != 0 {
				t.OKey = g.OKey
			}
			return t, true
		},
		data: func(t items.TunnelAttrs, parent uint32) []attr {
			return []attr{u32Attr(nl.IFLA_GRE_LINK, parent),
				be16Attr(nl.IFLA_GRE_IFLAGS, keyFlag(t.IKey)), be16Attr(nl.IFLA_GRE_OFLAGS, keyFlag(t.OKey)),
				be32Attr(nl.IFLA_GRE_IKEY, t.IKey), be32Attr(nl.IFLA_GRE_OKEY, t.OKey),
				{nl.IFLA_GRE_LOCAL, ip4Of(t.Local)}, {nl.IFLA_GRE_REMOTE, ip4Of(t.Remote)},
				u8Attr(nl.IFLA_GRE_TTL, t.TTL), u8Attr(nl.IFLA_GRE_TOS, 0), u8Attr(nl.IFLA_GRE_PMTUDISC, pmtudisc(t))}
		},
	}}

	ipipTunnel = tunnelKind{codec: ipv4Codec(items.KindIPIP, protoIPIP,
		func(a netlink.LinkAttrs, f ipv4Fields) netlink.Link {
			return &netlink.Iptun{LinkAttrs: a, Link: f.link, Local: f.local, Remote: f.remote, Ttl: f.ttl, PMtuDisc: f.pmtudisc, Proto: f.proto}
		},
		func(l netlink.Link) (ipv4Fields, bool) {
			p, ok := l.(*netlink.Iptun)
			if !ok {
				return ipv4Fields{}, false
			}
			return ipv4Fields{p.Local, p.Remote, 0, p.Ttl, p.PMtuDisc, p.Proto}, true
		})}

	// netlink leaves out a TTL of 0, which sit takes for 64: converge
	// sets it right after the create.
	sitTunnel = tunnelKind{codec: ipv4Codec(items.KindSIT, protoIPv6,
		func(a netlink.LinkAttrs, f ipv4Fields) netlink.Link {
			return &netlink.Sittun{LinkAttrs: a, Link: f.link, Local: f.local, Remote: f.remote, Ttl: f.ttl, PMtuDisc: f.pmtudisc, Proto: f.proto}
		},
		func(l netlink.Link) (ipv4Fields, bool) {
			s, ok := l.(*netlink.Sittun)
			if !ok {
				return ipv4Fields{}, false
			}
			return ipv4Fields{s.Local, s.Remote, 0, s.Ttl, s.PMtuDisc, s.Proto}, true
		})}

	ip6tnlTunnel = tunnelKind{codec: tunnelCodec{
		build: func(attrs netlink.LinkAttrs, t items.TunnelAttrs, parent uint32) netlink.Link {
			return &netlink.Ip6tnl{LinkAttrs: attrs, Link: parent, Local: ipOf(t.Local), Remote: ipOf(t.Remote),
				Ttl: t.TTL, Proto: ip6tnlProto[t.Mode], EncapLimit: t.EncapLimit}
		},
		read: func(l netlink.Link) (items.TunnelAttrs, bool) {
			p, ok := l.(*netlink.Ip6tnl)
			if !ok {
				return items.TunnelAttrs{}, false
			}
			t := items.TunnelAttrs{Type: items.KindIP6Tnl, Local: addrOf(p.Local), Remote: addrOf(p.Remote),
				TTL: p.Ttl, EncapLimit: p.EncapLimit, Mode: fmt.Sprintf("proto %d", p.Proto)}
			for mode, proto := range ip6tnlProto {
				if proto == p.Proto {
					t.Mode = mode
				}
			}
			return t, true
		},
		data: func(t items.TunnelAttrs, parent uint32) []attr {
			return append(iptunData(t, parent, ip6tnlProto[t.Mode]),
				u8Attr(nl.IFLA_IPTUN_ENCAP_LIMIT, t.EncapLimit), u32Attr(nl.IFLA_IPTUN_FLOWINFO, 0),
				u32Attr(nl.IFLA_IPTUN_FLAGS, 0))
		},
	}}
)

// ipv4Fields are what netlink's Iptun and Sittun share: ipip and sit
// differ only in their netlink type and their protocol.
type ipv4Fields struct {
	local, remote        net.IP
	link                 uint32
	ttl, pmtudisc, proto uint8
}

// ipv4Codec is the codec of ipip or sit: build makes the netlink type of
// the fields, fields reads them back (false for another type).
func ipv4Codec(kind items.InterfaceKind, proto uint8, build func(netlink.LinkAttrs, ipv4Fields) netlink.Link,
	fields func(netlink.Link) (ipv4Fields, bool)) tunnelCodec {
	return tunnelCodec{
		build: func(attrs netlink.LinkAttrs, t items.TunnelAttrs, parent uint32) netlink.Link {
			return build(attrs, ipv4Fields{local: ipOf(t.Local), remote: ipOf(t.Remote), link: parent,
				ttl: t.TTL, pmtudisc: pmtudisc(t), proto: proto})
		},
		read: func(l netlink.Link) (items.TunnelAttrs, bool) {
			f, ok := fields(l)
			return items.TunnelAttrs{Type: kind, Local: addrOf(f.local), Remote: addrOf(f.remote), TTL: f.ttl,
				NoPMTUDisc: f.pmtudisc == 0, Mode: fixedMode(f.proto, proto)}, ok
		},
		data: func(t items.TunnelAttrs, parent uint32) []attr { return iptunData(t, parent, proto) },
	}
}

// ip6tnlProto maps an ip6tnl mode to IFLA_IPTUN_PROTO ("" is any, 0).
var ip6tnlProto = map[string]uint8{"": 0, "ip6ip6": protoIPv6, "ipip6": protoIPIP}

func (t tunnelKind) newLink(k *kernel, attrs netlink.LinkAttrs, want *items.Interface) (netlink.Link, func(), error) {
	a := valueOr(items.AttrsOf[*items.TunnelAttrs](want))
	parent, err := k.tunnelParent(a)
	if err != nil {
		return nil, nil, err
	}
	return t.codec.build(attrs, a, parent), noRelease, nil
}

// converge sends the whole parameter set when any of it differs, then
// gives the tunnel its MTU again: a change of parent or key without
// IFLA_MTU makes the kernel compute one (ip_tunnel_update,
// ipgre_link_update).
func (t tunnelKind) converge(k *kernel, l netlink.Link, obsIfc, wantIfc *items.Interface) error {
	obs := valueOr(items.AttrsOf[*items.TunnelAttrs](obsIfc))
	want := valueOr(items.AttrsOf[*items.TunnelAttrs](wantIfc))
	if obs == want {
		return nil
	}
	parent, err := k.tunnelParent(want)
	if err != nil {
		return err
	}
	if err := k.raw.setInfoData(l.Attrs().Index, string(want.Type), t.codec.data(want, parent)); err != nil {
		return fmt.Errorf("setting %s options: %w", want.Type, err)
	}
	if wantIfc.MTU == 0 {
		return nil
	}
	fresh, err := k.nl.LinkByIndex(l.Attrs().Index)
	if err != nil {
		return fmt.Errorf("reading %s back: %w", wantIfc.IfName, err)
	}
	if fresh.Attrs().MTU != wantIfc.MTU {
		if err := k.nl.LinkSetMTU(fresh, wantIfc.MTU); err != nil {
			return fmt.Errorf("setting mtu %d: %w", wantIfc.MTU, err)
		}
	}
	return nil
}

func (t tunnelKind) observe(_ *kernel, l netlink.Link, nameOf func(int) string) (items.KindAttrs, error) {
	a, ok := t.codec.read(l)
	if !ok {
		return nil, nil
	}
	if p := l.Attrs().ParentIndex; p > 0 {
		a.Parent = nameOf(p)
	}
	return &a, nil
}

// tunnelParent returns the ifindex of the tunnel's parent, 0 for none.
func (k *kernel) tunnelParent(t items.TunnelAttrs) (uint32, error) {
	if t.Parent == "" {
		return 0, nil
	}
	index, err := k.index(t.Parent, string(t.Type)+" parent")
	return uint32(index), err
}

// iptunData is the IFLA_IPTUN_* parameter set shared by ipip, sit and
// ip6tnl.
func iptunData(t items.TunnelAttrs, parent uint32, proto uint8) []attr {
	data := []attr{u32Attr(nl.IFLA_IPTUN_LINK, parent), u8Attr(nl.IFLA_IPTUN_TTL, t.TTL),
		u8Attr(nl.IFLA_IPTUN_TOS, 0), u8Attr(nl.IFLA_IPTUN_PROTO, proto)}
	if t.Type == items.KindIP6Tnl {
		return append(data, attr{nl.IFLA_IPTUN_LOCAL, ip6Of(t.Local)}, attr{nl.IFLA_IPTUN_REMOTE, ip6Of(t.Remote)})
	}
	return append(data, attr{nl.IFLA_IPTUN_LOCAL, ip4Of(t.Local)}, attr{nl.IFLA_IPTUN_REMOTE, ip4Of(t.Remote)},
		u8Attr(nl.IFLA_IPTUN_PMTUDISC, pmtudisc(t)))
}

// fixedMode is the mode of a tunnel whose protocol is fixed (ipip, sit):
// "" for its own, a description of another (set by someone else, which
// only a recreate changes).
func fixedMode(proto, own uint8) string {
	if proto == own {
		return ""
	}
	return fmt.Sprintf("proto %d", proto)
}

func pmtudisc(t items.TunnelAttrs) uint8 { return uint8(boolU32(!t.NoPMTUDisc)) }

func keyFlag(key uint32) uint16 {
	if key == 0 {
		return 0
	}
	return nl.GRE_KEY
}

func be16Attr(typ int, v uint16) attr { return attr{typ, binary.BigEndian.AppendUint16(nil, v)} }
func be32Attr(typ int, v uint32) attr { return attr{typ, binary.BigEndian.AppendUint32(nil, v)} }

// ip4Of is the 4 bytes of an IPv4 address, 0.0.0.0 (any) for none.
func ip4Of(a netip.Addr) net.IP {
	if !a.IsValid() {
		return net.IPv4zero.To4()
	}
	return net.IP(a.AsSlice())
}

// ip6Of is the 16 bytes of an IPv6 address, :: (any) for none.
func ip6Of(a netip.Addr) net.IP {
	if !a.IsValid() {
		return net.IPv6zero
	}
	return net.IP(a.AsSlice())
}
