package netns_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/netagent/netagent/configurators/link"
	"github.com/netagent/netagent/internal/netnsx"
	"github.com/netagent/netagent/internal/testns"
	"github.com/netagent/netagent/items"
)

// TestLinkForeign places links made by ip (not netagent) in the namespace:
// netagent refuses to create over them or delete them (ErrNotOwned), reads
// them back as external links, and leaves them exactly as they were through
// a full create and delete cycle of its own links.
func TestLinkForeign(t *testing.T) {
	tgt := testns.New(t)
	env := newLinkEnv(t, tgt)
	linkExec(t, tgt, "ip", "link", "add", "br9", "type", "bridge")
	linkExec(t, tgt, "ip", "link", "set", "br9", "mtu", "1450", "alias", "theirs", "up")
	linkExec(t, tgt, "ip", "link", "add", "fv0", "type", "veth", "peer", "name", "fv1")
	linkExec(t, tgt, "ip", "link", "add", "eth0", "type", "veth", "peer", "name", "eth0p")
	linkExec(t, tgt, "ip", "link", "set", "eth0p", "master", "br9")
	before := linkSnapshot(t, tgt)

	// Clashing names.
	clashBr := &items.Interface{IfName: "br9", Kind: items.KindBridge, AdminUp: true}
	clashVeth := &items.Interface{IfName: "fv0", Kind: items.KindVeth, Attrs: &items.VethAttrs{Peer: "fv1"}}
	for _, clash := range []*items.Interface{clashBr, clashVeth} {
		st := env.tryApply(clash)
		if !errors.Is(st.Err, link.ErrNotOwned) {
			t.Errorf("intent with %s: err %v, want ErrNotOwned", clash.IfName, st.Err)
		}
	}
	cfg := env.ifaces()
	if err := cfg.Delete(context.Background(), clashBr); !errors.Is(err, link.ErrNotOwned) {
		t.Errorf("deleting foreign br9: %v, want ErrNotOwned", err)
	}
	ports := link.NewPortConfigurator(tgt)
	intoForeign := &items.Port{IfName: "fv0", Master: "br9", MasterKind: items.KindBridge}
	if err := ports.Create(context.Background(), intoForeign); !errors.Is(err, link.ErrNotOwned) {
		t.Errorf("enslaving into foreign br9: %v, want ErrNotOwned", err)
	}
	fromForeign := &items.Port{IfName: "eth0p", Master: "br9", MasterKind: items.KindBridge}
	if err := ports.Delete(context.Background(), fromForeign); !errors.Is(err, link.ErrNotOwned) {
		t.Errorf("releasing from foreign br9: %v, want ErrNotOwned", err)
	}

	// Stealing a port from a foreign master is refused too.
	br0 := &items.Interface{IfName: "br0", Kind: items.KindBridge, AdminUp: true}
	eth0p := &items.Interface{IfName: "eth0p", Kind: items.KindPhysical, AdminUp: false}
	steal := &items.Port{IfName: "eth0p", Master: "br0", MasterKind: items.KindBridge}
	if st := env.tryApply(br0, eth0p, steal); !errors.Is(st.Err, link.ErrNotOwned) {
		t.Errorf("taking eth0p from br9: err %v, want ErrNotOwned", st.Err)
	}

	// The foreign links are external items of the read-back, not interfaces.
	cur := env.readBack(nil)
	for _, name := range []string{"br9", "fv0", "fv1", "eth0", "eth0p", "lo"} {
		if _, ok := cur.Get(items.LinkRef(name)); !ok {
			t.Errorf("read-back lacks link/%s", name)
		}
		if _, ok := cur.Get(items.InterfaceRef(name)); ok && name != "eth0p" {
			t.Errorf("read-back has interface/%s, which is not netagent's", name)
		}
	}

	// A full cycle of netagent's own links beside them.
	own := &items.Interface{IfName: "own0", Kind: items.KindVeth, AdminUp: true, Attrs: &items.VethAttrs{Peer: "own1"}}
	env.applyTwice(own)
	env.applyTwice()
	if after := linkSnapshot(t, tgt); after != before {
		t.Errorf("foreign links changed:\nbefore:\n%s\nafter:\n%s", before, after)
	}
}

// linkSnapshot renders what netagent could change of every link (ip -j -d):
// name, kind, admin state, MTU, MAC, alias, master, peer, port cost. Timers
// and carrier, which the kernel changes by itself, are left out.
func linkSnapshot(t *testing.T, tgt *netnsx.Target) string {
	t.Helper()
	var b strings.Builder
	for _, name := range []string{"lo", "br9", "fv0", "fv1", "eth0", "eth0p"} {
		l := linkMustShow(t, tgt, name)
		fmt.Fprintf(&b, "%s kind=%s up=%v mtu=%d mac=%s alias=%q master=%s link=%s cost=%v\n",
			l.IfName, l.LinkInfo.InfoKind, l.up(), l.MTU, l.Address, l.IfAlias, l.Master, l.Link,
			l.LinkInfo.InfoSlaveData["cost"])
	}
	return b.String()
}
