package configurators

import (
	"net"
	"net/netip"
	"slices"
	"strings"
	"testing"

	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/items"
	"github.com/netagent/netagent/reconciler"
)

func op(o reconciler.Operation, it dg.Item) reconciler.OpLogEntry {
	return reconciler.OpLogEntry{Ref: dg.Ref(it), Item: it, Op: o}
}

func refsOf(effects []SideEffect, certain bool) []string {
	var out []string
	for _, e := range effects {
		if e.Certain == certain {
			out = append(out, e.Ref.String())
		}
	}
	slices.Sort(out)
	return out
}

func sysctl(key, value string) *items.Sysctl { return &items.Sysctl{Key: key, Value: value} }

// Writing a global forwarding key to a new value rewrites the intended
// per-interface keys of its family that the pass does not write after it,
// unless they want that value anyway; a create (the old value unknown)
// may.
func TestSideEffectsForwarding(t *testing.T) {
	intended := dg.New("intended", sysctl("net.ipv4.conf.all.forwarding", "0"), sysctl("net.ipv4.conf.eth0.forwarding", "1"),
		sysctl("net.ipv4.conf.eth1.forwarding", "0"), sysctl("net.ipv4.conf.eth2.forwarding", "1"),
		sysctl("net.ipv6.conf.eth0.forwarding", "1"))
	before := dg.New("current", sysctl("net.ipv4.conf.all.forwarding", "1"))
	ops := reconciler.OperationLog{
		op(reconciler.OpModify, sysctl("net.ipv4.conf.eth2.forwarding", "1")),
		op(reconciler.OpModify, sysctl("net.ipv4.conf.all.forwarding", "0")),
	}
	got := SideEffects(ops, before, intended, nil)
	want := []string{"sysctl/net.ipv4.conf.eth0.forwarding", "sysctl/net.ipv4.conf.eth2.forwarding"}
	if refs := refsOf(got, true); !slices.Equal(refs, want) || len(got) != 2 {
		t.Fatalf("side effects %+v, want certain %v", got, want)
	}
	if after, ok := got[0].After.(*items.Sysctl); !ok || after.Value != "0" || got[0].Cause != "modify sysctl/net.ipv4.conf.all.forwarding" {
		t.Errorf("effect %+v", got[0])
	}

	ops = append(ops, op(reconciler.OpModify, sysctl("net.ipv4.conf.eth0.forwarding", "1")))
	if refs := refsOf(SideEffects(ops, before, intended, nil), true); !slices.Equal(refs, want[1:]) {
		t.Errorf("a key written after the global one: %v", refs)
	}
	created := SideEffects(ops[1:2], dg.New("current"), intended, nil)
	if refs := refsOf(created, false); len(refs) != 2 || len(refsOf(created, true)) != 0 {
		t.Errorf("a create of the global key: %+v", created)
	}
	unchanged := dg.New("current", sysctl("net.ipv4.conf.all.forwarding", "0"))
	if got := SideEffects(ops[1:2], unchanged, intended, nil); len(got) != 0 {
		t.Errorf("a write of the value the kernel holds: %+v", got)
	}
	failed := ops[1]
	failed.Err = reconciler.ErrNoConfigurator
	if got := SideEffects(reconciler.OperationLog{failed}, before, intended, nil); len(got) != 0 {
		t.Errorf("a failed write: %+v", got)
	}
}

// A link set down loses its neighbours, its IPv6 addresses and the routes
// through it (the IPv4 ones cannot come back while it is down); a new MAC
// flushes its neighbours.
func TestSideEffectsLinkDownAndMAC(t *testing.T) {
	up := &items.Interface{IfName: "v5", Kind: items.KindVeth, AdminUp: true, Attrs: &items.VethAttrs{Peer: "v5-peer"}}
	down := *up
	down.AdminUp = false
	neigh := &items.Neighbor{Dev: "v5", IP: netip.MustParseAddr("10.5.0.9"), MAC: net.HardwareAddr{2, 0, 0, 0, 5, 9}}
	other := &items.Neighbor{Dev: "v6", IP: netip.MustParseAddr("10.6.0.9"), MAC: net.HardwareAddr{2, 0, 0, 0, 6, 9}}
	a4 := &items.Address{Dev: "v5", Prefix: netip.MustParsePrefix("10.5.0.1/24")}
	a6 := &items.Address{Dev: "v5", Prefix: netip.MustParsePrefix("2001:db8:5::1/64")}
	r4 := &items.Route{Dst: netip.MustParsePrefix("10.7.0.0/16"), Dev: "v5"}
	r6 := &items.Route{Dst: netip.MustParsePrefix("2001:db8:7::/48"), Dev: "v5"}
	intended := dg.New("intended", &down, neigh, other, a4, a6, r4, r6)
	before := dg.New("current", up, neigh, other, a4, a6, r4, r6)
	got := SideEffects(reconciler.OperationLog{op(reconciler.OpModify, &down)}, before, intended, nil)
	want := []string{dg.Ref(a6).String(), dg.Ref(neigh).String(), dg.Ref(r4).String(), dg.Ref(r6).String()}
	slices.Sort(want)
	if refs := refsOf(got, true); !slices.Equal(refs, want) || len(got) != len(want) {
		t.Fatalf("link down: %+v\nwant %v", got, want)
	}
	for _, e := range got {
		if e.After != nil || (e.Ref == dg.Ref(r4)) != (e.Refused != nil) {
			t.Errorf("effect %+v", e)
		}
	}

	newMAC := *up
	newMAC.MAC = net.HardwareAddr{2, 0, 0, 0, 0, 0x55}
	intended = dg.New("intended", &newMAC, neigh, a6)
	got = SideEffects(reconciler.OperationLog{op(reconciler.OpModify, &newMAC)}, before, intended, nil)
	if refs := refsOf(got, true); !slices.Equal(refs, []string{dg.Ref(neigh).String()}) || !strings.Contains(got[0].Reason, "MAC") {
		t.Errorf("MAC change: %+v", got)
	}
}

// A port joining or leaving a bridge without a MAC of its own may change
// the bridge's MAC: the neighbours on it not written after are at risk.
func TestSideEffectsBridgePorts(t *testing.T) {
	br := &items.Interface{IfName: "br0", Kind: items.KindBridge, AdminUp: true}
	port := &items.Port{IfName: "lan0", Master: "br0", MasterKind: items.KindBridge}
	neigh := &items.Neighbor{Dev: "br0", IP: netip.MustParseAddr("10.0.0.9"), MAC: net.HardwareAddr{2, 0, 0, 0, 0, 9}}
	intended := dg.New("intended", br, neigh)
	got := SideEffects(reconciler.OperationLog{op(reconciler.OpDelete, port)}, dg.New("current", br, port, neigh), intended, nil)
	if refs := refsOf(got, false); len(got) != 1 || !slices.Equal(refs, []string{dg.Ref(neigh).String()}) || got[0].Cause != "delete port/lan0" {
		t.Errorf("port leaving: %+v", got)
	}
	ops := reconciler.OperationLog{op(reconciler.OpCreate, port), op(reconciler.OpCreate, neigh)}
	if got := SideEffects(ops, dg.New("current"), intended, nil); len(got) != 0 {
		t.Errorf("neighbour created after the port: %+v", got)
	}
	withMAC := *br
	withMAC.MAC = net.HardwareAddr{2, 0, 0, 0, 0, 1}
	if got := SideEffects(ops[:1], dg.New("current"), dg.New("intended", &withMAC, neigh), nil); len(got) != 0 {
		t.Errorf("bridge with its own MAC: %+v", got)
	}
}
