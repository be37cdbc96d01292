package configurators

import (
	"strings"
	"testing"

	"github.com/netagent/netagent/items"
	"github.com/netagent/netagent/reconciler"
)

// A dry run predicts the ethtool settings the kernel would refuse, from
// what the NIC reports, and nothing for those it takes.
func TestDryRunPredictsEthtoolRefusals(t *testing.T) {
	f := NewFake(nil)
	f.Ethtool.AddVeth("eth0", 2)
	d, err := f.NewDryRun()
	if err != nil {
		t.Fatal(err)
	}
	fixed := &items.Ethtool{Interface: "eth0", Settings: map[string]uint32{"features/rx-lro": 1}}
	if err := d.Predict(reconciler.OpModify, fixed); err == nil || !strings.Contains(err.Error(), "feature rx-lro of eth0 is fixed") {
		t.Errorf("a fixed feature: %v", err)
	}
	ok := &items.Ethtool{Interface: "eth0", Settings: map[string]uint32{"features/rx-gro": 1, "channels/rx": 2}}
	if err := d.Predict(reconciler.OpModify, ok); err != nil {
		t.Errorf("settings the NIC takes: %v", err)
	}
	if err := d.Predict(reconciler.OpDelete, fixed); err != nil {
		t.Errorf("a delete (giving back) predicted to fail: %v", err)
	}
	if f.Ethtool.Writes != 0 {
		t.Errorf("the dry run wrote %d times", f.Ethtool.Writes)
	}
}
