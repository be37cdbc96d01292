package configurators

import (
	"net/netip"
	"reflect"
	"testing"

	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/items"
	"github.com/netagent/netagent/reconciler"
)

// Predict says the same of every operation from PredictInputs(before) as
// from before, and PredictInputs keeps no route, rule or sysctl.
func TestPredictInputs(t *testing.T) {
	eth := &items.Interface{IfName: "eth0", Kind: items.KindPhysical, AdminUp: true, MTU: 1500}
	br := &items.Interface{IfName: "br0", Kind: items.KindBridge, AdminUp: true}
	p1 := &items.Port{IfName: "p1", Master: "br0", MasterKind: items.KindBridge}
	a1 := &items.Address{Dev: "eth0", Prefix: netip.MustParsePrefix("10.0.0.1/24")}
	a2 := &items.Address{Dev: "eth0", Prefix: netip.MustParsePrefix("10.0.1.1/24")}
	route := &items.Route{Dst: netip.MustParsePrefix("10.9.0.0/16"), Dev: "eth0", Table: 254}
	sysctl := &items.Sysctl{Key: "net.ipv4.ip_forward", Value: "1"}
	before := dg.New("current", eth, br, p1, a1, a2, route, sysctl)

	in := PredictInputs(before)
	for it := range in.Items() {
		switch it.(type) {
		case *items.Interface, *items.Port, *items.Address:
		default:
			t.Errorf("PredictInputs keeps %s", dg.Ref(it))
		}
	}
	if in.Len() != 5 {
		t.Errorf("PredictInputs keeps %d items, want the 5 links, ports and addresses", in.Len())
	}
	mtu := *eth
	mtu.MTU = 9000
	down := *eth
	down.AdminUp = false
	ops := []reconciler.OpLogEntry{
		op(reconciler.OpModify, &mtu), op(reconciler.OpModify, &down), op(reconciler.OpDelete, p1),
		op(reconciler.OpDelete, a1), op(reconciler.OpModify, route), op(reconciler.OpCreate, sysctl),
	}
	for _, e := range ops {
		if got, want := Predict(e, in), Predict(e, before); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: from PredictInputs %+v, from the whole state %+v", e, got, want)
		}
	}
	if p := Predict(ops[0], in); p.Effect != "flap" {
		t.Errorf("mtu 1500 -> 9000 on a NIC: %+v, want a possible flap", p)
	}
}
