//go:build vmtest

package corpus_test

import (
	"slices"
	"testing"

	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/internal/netnsx"
	"github.com/netagent/netagent/items"
)

// vmCheckBridgeVLANs compares the VLANs of every bridge member the intent
// declares them for (the intended bridge-vlans items) with the kernel's,
// read over netlink (`bridge vlan show`).
func vmCheckBridgeVLANs(t *testing.T, tgt *netnsx.Target, intended *dg.Graph) {
	t.Helper()
	all, err := tgt.NL.BridgeVlanList()
	if err != nil {
		t.Fatalf("bridge vlan list: %v", err)
	}
	for it := range intended.Items() {
		want, ok := it.(*items.BridgeVLANs)
		if !ok {
			continue
		}
		m := map[uint16]items.VLANFlags{}
		for _, v := range all[int32(vmLink(t, tgt, want.IfName).Attrs().Index)] {
			m[v.Vid] = items.VLANFlags{PVID: v.PortVID(), Untagged: v.EngressUntag()}
		}
		if got := items.CanonicalVLANs(m); !slices.Equal(got, want.VLANs) && len(got)+len(want.VLANs) > 0 {
			t.Errorf("vlans of %s: %s, want %s", want.IfName, got, want.VLANs)
		}
	}
}
