package link

import (
	"context"
	"errors"
	"net/netip"
	"strings"
	"testing"

	"slices"

	"github.com/netagent/netagent/items"

	"golang.org/x/sys/unix"
)

// tunnelCases are the tunnel kinds' lives for TestFakeKindLifecycle: in
// place, every parameter at once (local, remote, ttl, pmtudisc, parent,
// keys; the mode and the loss of the remote for ip6tnl) with a fixed MTU
// the kernel would otherwise recompute; a recreate to a tunnel without a
// remote (gre, ipip, sit).
func tunnelCases() []kindCase {
	v4 := func(s string) netip.Addr { return netip.MustParseAddr(s) }
	check := func(e fakeEnv, i *items.Interface) {
		a := items.AttrsOf[*items.TunnelAttrs](i)
		fl := e.f.byName(i.IfName)
		if fl == nil || fl.tunnel == nil || fl.kind() != string(a.Type) {
			e.t.Fatalf("%s: not a %s tunnel", i.IfName, a.Type)
		}
		t := fl.tunnel
		parent := 0
		if a.Parent != "" {
			parent = e.link(a.Parent).Attrs().Index
		}
		if addrOf(t.local) != a.Local || addrOf(t.remote) != a.Remote || t.ttl != a.TTL || int(t.link) != parent ||
			!t.v6() && (t.pmtudisc == 0) != a.NoPMTUDisc || t.v6() && t.proto != ip6tnlProto[a.Mode] || t.ikey != a.IKey || t.okey != a.OKey || t.encapLimit != a.EncapLimit {
			e.t.Errorf("%s: kernel holds %+v, want %v", i.IfName, *t, a)
		}
	}
	return []kindCase{{
		name: "gre",
		create: &items.Interface{IfName: "gre1", Kind: items.KindGRE, AdminUp: true, Attrs: &items.TunnelAttrs{Type: items.KindGRE,
			Local: v4("192.0.2.1"), Remote: v4("198.51.100.2"), TTL: 64, IKey: 42, OKey: 42, Parent: "eth0"}},
		modify: func(i *items.Interface) {
			i.MTU = 1400
			i.Attrs = &items.TunnelAttrs{Type: items.KindGRE, Local: v4("192.0.2.3"), Remote: v4("198.51.100.4"),
				NoPMTUDisc: true, IKey: 7, OKey: 8}
		},
		recreate: func(i *items.Interface) {
			i.Attrs = &items.TunnelAttrs{Type: items.KindGRE, Local: v4("192.0.2.3"), IKey: 7}
		},
		check: check,
	}, {
		name: "ipip",
		create: &items.Interface{IfName: "ipip1", Kind: items.KindIPIP, AdminUp: true, Attrs: &items.TunnelAttrs{Type: items.KindIPIP,
			Local: v4("192.0.2.1"), Remote: v4("198.51.100.2")}},
		modify: func(i *items.Interface) {
			i.MTU = 1400
			i.Attrs = &items.TunnelAttrs{Type: items.KindIPIP, Local: v4("192.0.2.3"), Remote: v4("198.51.100.4"), TTL: 32, Parent: "eth0"}
		},
		recreate: func(i *items.Interface) {
			i.Attrs = &items.TunnelAttrs{Type: items.KindIPIP, Local: v4("192.0.2.3")}
		},
		check: check,
	}, {
		name: "sit",
		create: &items.Interface{IfName: "sit1", Kind: items.KindSIT, AdminUp: true, Attrs: &items.TunnelAttrs{Type: items.KindSIT,
			Remote: v4("198.51.100.2")}},
		modify: func(i *items.Interface) {
			i.Attrs = &items.TunnelAttrs{Type: items.KindSIT, Local: v4("192.0.2.3"), Remote: v4("198.51.100.4"), TTL: 200}
		},
		recreate: func(i *items.Interface) {
			i.Attrs = &items.TunnelAttrs{Type: items.KindSIT, Local: v4("192.0.2.3"), Parent: "eth0"}
		},
		check: check,
	}, {
		name: "ip6tnl",
		create: &items.Interface{IfName: "ip6t1", Kind: items.KindIP6Tnl, AdminUp: true, Attrs: &items.TunnelAttrs{Type: items.KindIP6Tnl,
			Local: v4("2001:db8::1"), Remote: v4("2001:db8::2"), TTL: 64, EncapLimit: 4, Mode: "ip6ip6"}},
		modify: func(i *items.Interface) {
			// ip6_tnl_changelink takes every parameter: the mode, and
			// the loss of the remote, change in place.
			i.MTU = 1400
			i.Attrs = &items.TunnelAttrs{Type: items.KindIP6Tnl, Local: v4("2001:db8::3"), TTL: 10, EncapLimit: 0, Parent: "eth0"}
		},
		check: check,
	}}
}

// TestFakeTunnelFallbackUntouched: the fallback devices the tunnel modules
// create (gre0, tunl0, sit0, ip6tnl0) sit next to netagent's tunnels; an
// item naming one is refused (ErrNotOwned) and none is ever written,
// deleted or read back as netagent's. A second tunnel with the identity
// of one that exists is refused by the kernel (EEXIST) and nothing is
// left of it.
func TestFakeTunnelFallbackUntouched(t *testing.T) {
	e := newFakeEnv(t)
	fallbacks := map[string]items.InterfaceKind{"gre0": items.KindGRE, "tunl0": items.KindIPIP, "sit0": items.KindSIT, "ip6tnl0": items.KindIP6Tnl}
	for name, kind := range fallbacks {
		e.f.addFallbackTunnel(string(kind), name)
	}
	e.f.AddNIC("eth0", 1500)
	gre := &items.Interface{IfName: "gre1", Kind: items.KindGRE, AdminUp: true, Attrs: &items.TunnelAttrs{Type: items.KindGRE,
		Local: netip.MustParseAddr("192.0.2.1"), Remote: netip.MustParseAddr("198.51.100.2"), IKey: 42}}
	e.converge(gre)
	for name, kind := range fallbacks {
		attrs := &items.TunnelAttrs{Type: kind, Local: netip.MustParseAddr("192.0.2.9")}
		if kind == items.KindIP6Tnl {
			attrs.Local = netip.MustParseAddr("2001:db8::9")
		}
		fb := &items.Interface{IfName: name, Kind: kind, AdminUp: true, Attrs: attrs}
		if st := e.apply(gre, fb); !errors.Is(stateOf(st, fb).LastErr, ErrNotOwned) {
			t.Errorf("an item naming %s: %v, want ErrNotOwned", name, stateOf(st, fb).LastErr)
		}
	}
	twin := &items.Interface{IfName: "gre2", Kind: items.KindGRE, AdminUp: true, Attrs: &items.TunnelAttrs{Type: items.KindGRE,
		Local: netip.MustParseAddr("192.0.2.1"), Remote: netip.MustParseAddr("198.51.100.2"), IKey: 42}}
	if err := (&InterfaceConfigurator{k: e.kernel()}).Create(context.Background(), twin); !errors.Is(err, unix.EEXIST) || !e.gone("gre2") {
		t.Errorf("a second tunnel of gre1's identity: %v, gre2 gone %v", err, e.gone("gre2"))
	}
	e.apply()
	if !e.gone("gre1") {
		t.Error("gre1 survives the delete")
	}
	if w := e.f.Take(); slices.ContainsFunc(w, func(s string) bool { return fallbacks[strings.Fields(s)[1]] != "" }) {
		t.Errorf("a fallback device written: %v", w)
	}
	got, err := e.kernel().readBack(nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range got {
		if _, isFB := fallbacks[it.Name()]; isFB && it.Type() != items.TypeLink {
			t.Errorf("fallback read back as %v", it)
		}
	}
	for name := range fallbacks {
		if e.gone(name) {
			t.Errorf("%s deleted", name)
		}
	}
}

// TestFakeTunnelRename: a tunnel renamed with the same identity (local,
// remote, parent, key) is a conflict for the kernel (EEXIST): its
// ConflictKeys make the reconciler delete the old one first instead of
// creating the new one next to it.
func TestFakeTunnelRename(t *testing.T) {
	for _, kind := range []items.InterfaceKind{items.KindGRE, items.KindIPIP, items.KindSIT, items.KindIP6Tnl} {
		e := newFakeEnv(t)
		a := &items.TunnelAttrs{Type: kind, Local: netip.MustParseAddr("192.0.2.1"), Remote: netip.MustParseAddr("198.51.100.2")}
		if kind == items.KindIP6Tnl {
			a.Local, a.Remote = netip.MustParseAddr("2001:db8::1"), netip.MustParseAddr("2001:db8::2")
		}
		e.converge(&items.Interface{IfName: "tun1", Kind: kind, AdminUp: true, Attrs: a})
		b := *a
		e.converge(&items.Interface{IfName: "tun2", Kind: kind, AdminUp: true, Attrs: &b})
		if !e.gone("tun1") || e.gone("tun2") {
			t.Errorf("%s renamed: tun1 gone %v, tun2 gone %v", kind, e.gone("tun1"), e.gone("tun2"))
		}
	}
}
