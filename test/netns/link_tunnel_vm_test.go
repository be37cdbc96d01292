//go:build vmtest

package netns_test

import (
	"context"
	"errors"
	"net/netip"
	"slices"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/netagent/netagent/configurators/link"
	"github.com/netagent/netagent/items"
)

// tunnelVMCase is one tunnel kind's life on the real kernel: create, a
// change of every parameter in place (same ifindex), a recreate where the
// kernel refuses the change (nil: none), and the kernel's fallback device
// of the kind.
type tunnelVMCase struct {
	create, modify, recreate *items.TunnelAttrs
	fallback                 string
}

func tunnelVMCases() map[string]tunnelVMCase {
	a := netip.MustParseAddr
	return map[string]tunnelVMCase{
		"gre": {
			create: &items.TunnelAttrs{Type: items.KindGRE, Local: a("192.0.2.1"), Remote: a("198.51.100.2"), TTL: 64, IKey: 42, OKey: 42, Parent: "up0"},
			modify: &items.TunnelAttrs{Type: items.KindGRE, Local: a("192.0.2.3"), Remote: a("198.51.100.4"), NoPMTUDisc: true, IKey: 7, OKey: 8},
			// ip_tunnel_changelink: no change from point-to-point to NBMA.
			recreate: &items.TunnelAttrs{Type: items.KindGRE, Local: a("192.0.2.3"), IKey: 7},
			fallback: "gre0",
		},
		"ipip": {
			create:   &items.TunnelAttrs{Type: items.KindIPIP, Local: a("192.0.2.1"), Remote: a("198.51.100.2")},
			modify:   &items.TunnelAttrs{Type: items.KindIPIP, Local: a("192.0.2.3"), Remote: a("198.51.100.4"), TTL: 32, Parent: "up0"},
			recreate: &items.TunnelAttrs{Type: items.KindIPIP, Local: a("192.0.2.3")},
			fallback: "tunl0",
		},
		"sit": {
			create:   &items.TunnelAttrs{Type: items.KindSIT, Remote: a("198.51.100.2")},
			modify:   &items.TunnelAttrs{Type: items.KindSIT, Local: a("192.0.2.3"), Remote: a("198.51.100.4"), TTL: 200},
			recreate: &items.TunnelAttrs{Type: items.KindSIT, Local: a("192.0.2.3"), Parent: "up0"},
			fallback: "sit0",
		},
		"ip6tnl": {
			create: &items.TunnelAttrs{Type: items.KindIP6Tnl, Local: a("2001:db8::1"), Remote: a("2001:db8::2"), TTL: 64, EncapLimit: 4, Mode: "ip6ip6"},
			// ip6_tnl_changelink takes everything: the mode and the loss
			// of the remote too.
			modify:   &items.TunnelAttrs{Type: items.KindIP6Tnl, Local: a("2001:db8::3"), TTL: 0, EncapLimit: 0, Mode: "ipip6", Parent: "up0"},
			fallback: "ip6tnl0",
		},
	}
}

// TestInVMTunnels drives each tunnel kind through the reconciler on the
// real kernel (the host's has no tunnel modules): create; every parameter
// changed in place with a fixed MTU (same ifindex: the kernel would
// otherwise recompute the MTU); a recreate where the kernel refuses the
// change; delete; each step applied twice with zero operations the second
// time and a read-back equal to the item. The kernel's fallback device of
// the kind (gre0, tunl0, sit0, ip6tnl0) is never changed, an item naming
// it is refused (ErrNotOwned), and a second tunnel with the identity of
// one that exists is refused by the kernel (EEXIST) and leaves nothing.
func TestInVMTunnels(t *testing.T) {
	for name, c := range tunnelVMCases() {
		t.Run(name, func(t *testing.T) {
			tgt := linkVMNamespace(t)
			env := newLinkEnv(t, tgt)
			linkDummies(t, tgt, "up0")
			if err := tgt.NL.LinkSetUp(linkNL(t, tgt, "up0")); err != nil {
				t.Fatal(err)
			}
			fbBefore := linkNL(t, tgt, c.fallback) // the module made it in the new namespace
			up0 := &items.Interface{IfName: "up0", Kind: items.KindPhysical, AdminUp: true}
			tun := &items.Interface{IfName: "tun1", Kind: c.create.Type, AdminUp: true, Alias: "wan", Attrs: c.create}

			linkWantOps(t, env.applyTwice(up0, tun), "create interface/tun1")
			l := linkNL(t, tgt, "tun1")
			if l.Type() != string(c.create.Type) || l.Attrs().Alias != "netagent:wan" || l.Attrs().Flags&netlinkUp == 0 {
				t.Errorf("tun1 = %s alias %q flags %v", l.Type(), l.Attrs().Alias, l.Attrs().Flags)
			}
			index := l.Attrs().Index

			mod := &items.Interface{IfName: "tun1", Kind: c.create.Type, AdminUp: true, MTU: 1400, Alias: "wan", Attrs: c.modify}
			linkWantOps(t, env.applyTwice(up0, mod), "modify interface/tun1")
			if a := linkNL(t, tgt, "tun1").Attrs(); a.Index != index || a.MTU != 1400 {
				t.Errorf("tun1 after the change in place: index %d (was %d), mtu %d", a.Index, index, a.MTU)
			}

			// A second tunnel of tun1's identity: the kernel refuses it.
			twin := &items.Interface{IfName: "tun2", Kind: c.create.Type, AdminUp: true, Attrs: c.modify}
			if err := env.ifaces().Create(context.Background(), twin); !errors.Is(err, unix.EEXIST) || !linkGone(t, tgt, "tun2") {
				t.Errorf("a second tunnel of tun1's identity: %v, tun2 gone %v", err, linkGone(t, tgt, "tun2"))
			}

			if c.recreate != nil {
				re := &items.Interface{IfName: "tun1", Kind: c.create.Type, AdminUp: true, Alias: "wan", Attrs: c.recreate}
				log := env.applyTwice(up0, re)
				if !slices.Contains(linkOps(log), "create interface/tun1") || !slices.Contains(linkOps(log), "delete interface/tun1") {
					t.Errorf("recreate: %v", linkOps(log))
				}
				if linkNL(t, tgt, "tun1").Attrs().Index == index {
					t.Error("recreate kept the ifindex")
				}
			}

			// An item naming the fallback device is refused.
			fb := &items.Interface{IfName: c.fallback, Kind: c.create.Type, AdminUp: true,
				Attrs: &items.TunnelAttrs{Type: c.create.Type, Parent: "up0"}}
			if st := env.tryApply(up0, fb); !errors.Is(st.Err, link.ErrNotOwned) {
				t.Errorf("an item naming %s: %v, want ErrNotOwned\n%s", c.fallback, st.Err, st.OperationLog)
			}

			linkWantOps(t, env.applyTwice(up0), "delete interface/tun1")
			if !linkGone(t, tgt, "tun1") {
				t.Error("tun1 survives the delete")
			}
			fbAfter := linkNL(t, tgt, c.fallback)
			if a, b := fbAfter.Attrs(), fbBefore.Attrs(); a.Index != b.Index || a.MTU != b.MTU || a.Alias != b.Alias || a.Flags != b.Flags {
				t.Errorf("fallback %s touched: %+v, was %+v", c.fallback, a, b)
			}
			if _, ok := env.readBack(nil).Get(items.LinkRef(c.fallback)); !ok {
				t.Errorf("fallback %s not read back as an external link", c.fallback)
			}
		})
	}
}
