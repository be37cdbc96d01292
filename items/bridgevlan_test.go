package items

import (
	"slices"
	"strings"
	"testing"
)

func TestCanonicalVLANs(t *testing.T) {
	m := map[uint16]VLANFlags{}
	for v := uint16(20); v <= 30; v++ {
		m[v] = VLANFlags{}
	}
	m[10] = VLANFlags{PVID: true, Untagged: true}
	m[11] = VLANFlags{}
	m[31] = VLANFlags{Untagged: true}
	m[32] = VLANFlags{Untagged: true}
	got := CanonicalVLANs(m)
	if s := got.String(); s != "10 pvid untagged, 11, 20-30, 31-32 untagged" {
		t.Errorf("canonical: %s", s)
	}
	if p := got.Problem(); p != "" {
		t.Errorf("canonical set has a problem: %s", p)
	}
	if !slices.Equal(got.Canonical(), got) || CanonicalVLANs(nil) != nil || VLANSet(nil).String() != "none" {
		t.Error("Canonical is not stable, or the empty set is not nil and none")
	}
	if !slices.Equal(DefaultVLANs(1), VLANSet{{From: 1, To: 1, PVID: true, Untagged: true}}) || DefaultVLANs(0) != nil {
		t.Errorf("DefaultVLANs: %s %s", DefaultVLANs(1), DefaultVLANs(0))
	}
}

func TestBridgeVLANsValidate(t *testing.T) {
	ok := &BridgeVLANs{IfName: "v0", Bridge: "br0", VLANs: VLANSet{{From: 1, To: 1, PVID: true}, {From: 2, To: 4094}}}
	if err := ok.Validate(); err != nil {
		t.Errorf("valid set: %v", err)
	}
	for set, want := range map[string]VLANSet{
		"bad vlan range 0-0":    {{From: 0, To: 0}},
		"bad vlan range 1-4095": {{From: 1, To: 4095}},
		"bad vlan range 5-4":    {{From: 5, To: 4}},
		"pvid on range 5-6":     {{From: 5, To: 6, PVID: true}},
		"overlap":               {{From: 5, To: 6}, {From: 6, To: 7}},
		"more than one pvid":    {{From: 5, To: 5, PVID: true}, {From: 7, To: 7, PVID: true}},
	} {
		err := (&BridgeVLANs{IfName: "v0", Bridge: "br0", VLANs: want}).Validate()
		if err == nil || !strings.Contains(err.Error(), set) {
			t.Errorf("%s: %v", set, err)
		}
	}
}

func TestBridgeVLANsEqualAndDeps(t *testing.T) {
	a := &BridgeVLANs{IfName: "v0", Bridge: "br0", VLANs: VLANSet{{From: 1, To: 1}}}
	b := &BridgeVLANs{IfName: "v0", Bridge: "br0", VLANs: VLANSet{{From: 1, To: 1, Untagged: true}}}
	c := &BridgeVLANs{IfName: "v0", Bridge: "br1", VLANs: VLANSet{{From: 1, To: 1}}}
	if !a.Equal(&BridgeVLANs{IfName: "v0", Bridge: "br0", VLANs: VLANSet{{From: 1, To: 1}}}) || a.Equal(b) || a.Equal(c) || NeedsRecreate(a, b) {
		t.Error("Equal compares the member, the bridge and the set; never a recreate")
	}
	self := &BridgeVLANs{IfName: "br0", Bridge: "br0"}
	if d := self.Dependencies(); !self.Self() || len(d) != 1 || d[0].RequiredItem != InterfaceRef("br0") {
		t.Errorf("bridge's own vlans depend on %v", d)
	}
}

func TestPortPriority(t *testing.T) {
	p := func(v uint16) *uint16 { return &v }
	a := &Port{IfName: "v0", Master: "br0", MasterKind: KindBridge, Priority: p(0)}
	if !a.Equal(&Port{IfName: "v0", Master: "br0", MasterKind: KindBridge, Priority: p(0)}) ||
		a.Equal(&Port{IfName: "v0", Master: "br0", MasterKind: KindBridge}) {
		t.Error("Port.Equal compares the priority by value, nil apart")
	}
	for _, bad := range []*Port{
		{IfName: "v0", Master: "br0", MasterKind: KindBridge, Priority: p(64)},
		{IfName: "v0", Master: "br0", MasterKind: KindBridge, Cost: 65536},
		{IfName: "v0", Master: "bond0", MasterKind: KindBond, Priority: p(1)},
	} {
		if bad.Validate() == nil {
			t.Errorf("%s: valid", bad)
		}
	}
	if err := a.Validate(); err != nil {
		t.Error(err)
	}
}
