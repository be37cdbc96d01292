package items

import (
	"net/netip"
	"strings"
	"testing"
)

// TestTunnelNeedsRecreate: gre, ipip and sit change every parameter in
// place but gaining or losing the remote (IFF_POINTOPOINT, fixed at
// creation) and the mode; ip6tnl changes everything in place; a kind
// change is a recreate.
func TestTunnelNeedsRecreate(t *testing.T) {
	a := netip.MustParseAddr
	tun := func(x TunnelAttrs) *Interface { return &Interface{IfName: "t", Kind: x.Type, Attrs: &x} }
	gre := TunnelAttrs{Type: KindGRE, Local: a("192.0.2.1"), Remote: a("198.51.100.2"), TTL: 64, IKey: 1, OKey: 1, Parent: "eth0"}
	tests := []struct {
		name     string
		old, new *Interface
		want     bool
	}{
		{"gre everything but the remote's presence", tun(gre),
			tun(TunnelAttrs{Type: KindGRE, Local: a("192.0.2.9"), Remote: a("198.51.100.9"), NoPMTUDisc: true, IKey: 2, OKey: 3}), false},
		{"gre loses its remote", tun(gre), tun(TunnelAttrs{Type: KindGRE, Local: a("192.0.2.1"), IKey: 1}), true},
		{"ipip gains a remote", tun(TunnelAttrs{Type: KindIPIP, Local: a("192.0.2.1")}),
			tun(TunnelAttrs{Type: KindIPIP, Local: a("192.0.2.1"), Remote: a("198.51.100.2")}), true},
		{"sit mode changed by someone", tun(TunnelAttrs{Type: KindSIT, Remote: a("198.51.100.2"), Mode: "proto 0"}),
			tun(TunnelAttrs{Type: KindSIT, Remote: a("198.51.100.2")}), true},
		{"ip6tnl everything", tun(TunnelAttrs{Type: KindIP6Tnl, Local: a("2001:db8::1"), Remote: a("2001:db8::2"), Mode: "ip6ip6", TTL: 64, EncapLimit: 4}),
			tun(TunnelAttrs{Type: KindIP6Tnl, Local: a("2001:db8::3"), Mode: "ipip6", Parent: "eth0"}), false},
		{"kind", tun(TunnelAttrs{Type: KindIPIP, Local: a("192.0.2.1")}), tun(TunnelAttrs{Type: KindSIT, Local: a("192.0.2.1")}), true},
	}
	for _, tt := range tests {
		if got := InterfaceNeedsRecreate(tt.old, tt.new); got != tt.want {
			t.Errorf("%s: NeedsRecreate = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// TestTunnelProblemAndKeys: what the kernel would refuse, and the
// identity two tunnels of a kind cannot share.
func TestTunnelProblemAndKeys(t *testing.T) {
	a := netip.MustParseAddr
	bad := map[string]TunnelAttrs{
		"must be ipv4":           {Type: KindGRE, Local: a("2001:db8::1")},
		"must be ipv6":           {Type: KindIP6Tnl, Remote: a("192.0.2.1")},
		"multicast":              {Type: KindIPIP, Remote: a("224.0.0.9")},
		"keys on a sit":          {Type: KindSIT, Local: a("192.0.2.1"), IKey: 1},
		"ip6tnl options":         {Type: KindGRE, Local: a("192.0.2.1"), EncapLimit: 4},
		"fixed ttl":              {Type: KindGRE, Local: a("192.0.2.1"), TTL: 64, NoPMTUDisc: true},
		"fallback device gre0":   {Type: KindGRE},
		"fallback device tunl0":  {Type: KindIPIP, TTL: 9},
		"unknown ip6tnl mode":    {Type: KindIP6Tnl, Local: a("2001:db8::1"), Mode: "gre"},
		"bad tunnel parent tun1": {Type: KindGRE, Parent: "tun1"},
	}
	for want, attrs := range bad {
		i := &Interface{IfName: "tun1", Kind: attrs.Type, Attrs: &attrs}
		if err := i.Validate(); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%v: %v, want %q", attrs, err, want)
		}
	}
	one := &Interface{IfName: "gre1", Kind: KindGRE, Attrs: &TunnelAttrs{Type: KindGRE, Local: a("192.0.2.1"), IKey: 5, OKey: 6}}
	other := &Interface{IfName: "gre2", Kind: KindGRE, Attrs: &TunnelAttrs{Type: KindGRE, Local: a("192.0.2.1"), IKey: 5, TTL: 3}}
	if err := one.Validate(); err != nil {
		t.Fatal(err)
	}
	if k1, k2 := one.ConflictKeys(), other.ConflictKeys(); len(k1) != 2 || k1[1] != k2[1] || k1[1] != `gre local 192.0.2.1 remote any link "" key 5` {
		t.Errorf("conflict keys %q and %q", k1, k2)
	}
}
