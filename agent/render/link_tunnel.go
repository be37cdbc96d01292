package render

import (
	"github.com/netagent/netagent/agent/intent"
	"github.com/netagent/netagent/items"
)

// The tunnel types: gre, ipip and sit share intent.Tunnel, ip6tnl has
// intent.IP6Tnl; all four render to items.TunnelAttrs, with the intent's
// defaults spelled out (pmtudisc on; ip6tnl's hop limit 64 and
// encapsulation limit 4, which are not the kernel's netlink defaults).
var (
	greKind    = tunnelKind(items.KindGRE, func(ifc *intent.Interface) **intent.Tunnel { return &ifc.GRE })
	ipipKind   = tunnelKind(items.KindIPIP, func(ifc *intent.Interface) **intent.Tunnel { return &ifc.IPIP })
	sitKind    = tunnelKind(items.KindSIT, func(ifc *intent.Interface) **intent.Tunnel { return &ifc.SIT })
	ip6tnlKind = linkKind{toItem: ip6tnlToItem, toIntent: ip6tnlToIntent}
)

// tunnelKind converts the section of a gre, ipip or sit tunnel, found by
// section.
func tunnelKind(kind items.InterfaceKind, section func(*intent.Interface) **intent.Tunnel) linkKind {
	return linkKind{
		toItem: func(ifc *intent.Interface) items.KindAttrs {
			t := *section(ifc)
			return &items.TunnelAttrs{Type: kind, Local: optAddr(t.Local), Remote: optAddr(t.Remote),
				TTL: uint8(t.TTL), Parent: t.Parent, NoPMTUDisc: !t.EffectivePMTUDisc(),
				IKey: uint32(t.InputKey()), OKey: uint32(t.OutputKey())}
		},
		toIntent: func(it *items.Interface, ifc *intent.Interface) {
			a := items.AttrsOf[*items.TunnelAttrs](it)
			if a == nil {
				return
			}
			t := &intent.Tunnel{Local: addrString(a.Local), Remote: addrString(a.Remote), TTL: int(a.TTL),
				Parent: a.Parent, IKey: int(a.IKey), OKey: int(a.OKey)}
			if a.IKey == a.OKey {
				t.Key, t.IKey, t.OKey = int(a.IKey), 0, 0
			}
			if a.NoPMTUDisc {
				t.PMTUDisc = new(bool)
			}
			*section(ifc) = t
		},
	}
}

func ip6tnlToItem(ifc *intent.Interface) items.KindAttrs {
	t := ifc.IP6Tnl
	a := &items.TunnelAttrs{Type: items.KindIP6Tnl, Local: optAddr(t.Local), Remote: optAddr(t.Remote),
		TTL: uint8(t.EffectiveHopLimit()), Parent: t.Parent, EncapLimit: uint8(t.EffectiveEncapLimit())}
	if m := t.EffectiveMode(); m != intent.IP6TnlAny {
		a.Mode = string(m)
	}
	return a
}

func ip6tnlToIntent(it *items.Interface, ifc *intent.Interface) {
	a := items.AttrsOf[*items.TunnelAttrs](it)
	if a == nil {
		return
	}
	t := &intent.IP6Tnl{Local: addrString(a.Local), Remote: addrString(a.Remote), Parent: a.Parent,
		Mode: intent.IP6TnlMode(a.Mode)}
	if a.TTL != intent.DefaultTunnelHopLimit {
		t.HopLimit = ptr(int(a.TTL))
	}
	if a.EncapLimit != intent.DefaultTunnelEncapLimit {
		t.EncapLimit = ptr(int(a.EncapLimit))
	}
	ifc.IP6Tnl = t
}

func ptr[T any](v T) *T { return &v }
