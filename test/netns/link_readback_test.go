package netns_test

import (
	"testing"
	"time"

	"github.com/netagent/netagent/configurators"
	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/internal/testns"
	"github.com/netagent/netagent/items"
)

// TestLinkReadBackNoHint reads back without a hint, as `netagent show` does:
// every value is the kernel's (defaults spelled out), and foreign links are
// external items.
func TestLinkReadBackNoHint(t *testing.T) {
	tgt := testns.New(t)
	env := newLinkEnv(t, tgt)
	linkExec(t, tgt, "ip", "link", "add", "eth0", "type", "veth", "peer", "name", "eth0p")
	br := &items.Interface{IfName: "br0", Kind: items.KindBridge, AdminUp: true}
	eth0 := &items.Interface{IfName: "eth0", Kind: items.KindPhysical}
	port := &items.Port{IfName: "eth0", Master: "br0", MasterKind: items.KindBridge}
	env.applyTwice(br, eth0, port)

	cur := env.readBack(nil)
	item, ok := cur.Get(items.InterfaceRef("br0"))
	if !ok {
		t.Fatalf("no interface/br0 in read-back")
	}
	got := item.(*items.Interface)
	if got.MTU != 1500 || len(got.MAC) != 6 || items.AttrsOf[*items.BridgeAttrs](got) == nil || items.AttrsOf[*items.BridgeAttrs](got).ForwardDelay != 15*time.Second {
		t.Errorf("br0 without hint = %s, want MTU, MAC and the 15s forward delay spelled out", got)
	}
	if _, ok := cur.Get(items.InterfaceRef("eth0")); ok {
		t.Errorf("eth0 read back as an interface without a hint declaring it")
	}
	for _, name := range []string{"lo", "eth0", "eth0p"} {
		if _, ok := cur.Get(items.LinkRef(name)); !ok {
			t.Errorf("no link/%s in read-back", name)
		}
	}
	p, ok := cur.Get(dg.ItemRef{Type: items.TypePort, Name: "eth0"})
	if !ok || p.(*items.Port).Cost == 0 {
		t.Errorf("port eth0 without hint = %v, want the kernel's cost", p)
	}
}

// TestLinkRegistry drives links through the top-level registry and
// read-back, which put the link, l3 and firewall configurators together.
func TestLinkRegistry(t *testing.T) {
	tgt := testns.New(t)
	stateDir := t.TempDir()
	reg, err := configurators.NewRegistry(tgt, stateDir)
	if err != nil {
		t.Fatalf("NewRegistry: %v", err)
	}
	env := &linkEnv{t: t, tgt: tgt, reg: reg}
	v := &items.Interface{IfName: "v0", Kind: items.KindVeth, AdminUp: true, Attrs: &items.VethAttrs{Peer: "v1"}}
	env.applyTwice(v)
	intended := dg.New("intended", v)
	cur, err := configurators.ReadBack(tgt, stateDir, intended)
	if err != nil {
		t.Fatalf("ReadBack: %v", err)
	}
	got, ok := cur.Get(items.InterfaceRef("v0"))
	if !ok || !got.Equal(v) {
		t.Errorf("read-back v0 = %v, want %s", got, v)
	}
	if st, ok := cur.State(items.InterfaceRef("v0")); !ok || st.State != dg.StateCreated {
		t.Errorf("v0 state %v, want created", st.State)
	}
	if _, ok := cur.Get(items.LinkRef("lo")); !ok {
		t.Errorf("no link/lo in the read-back graph")
	}
}
