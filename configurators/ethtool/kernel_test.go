package ethtool

import (
	"maps"
	"testing"

	"github.com/mdlayher/ethtool"

	"github.com/netagent/netagent/items"
)

// TestLinkModeTranslation: settings as the library's update.
func TestLinkModeTranslation(t *testing.T) {
	u := linkUpdate(map[string]uint32{"speed": 100, "duplex": items.EthtoolDuplexHalf, "autoneg": 0})
	if u.SpeedMegabits == nil || *u.SpeedMegabits != 100 || u.Duplex == nil || *u.Duplex != ethtool.Half || u.Autoneg == nil || *u.Autoneg != ethtool.AutonegOff {
		t.Errorf("update %+v", u)
	}
	if u := linkUpdate(map[string]uint32{"autoneg": 1}); u.SpeedMegabits != nil || u.Duplex != nil || *u.Autoneg != ethtool.AutonegOn {
		t.Errorf("an update of autoneg only: %+v", u)
	}
}

// TestCodecGroupsAreTheItemsFields: the fields the intent and the item
// know are the codec's, group by group.
func TestCodecGroupsAreTheItemsFields(t *testing.T) {
	for name, g := range Groups {
		var fields []string
		for _, f := range g.Fields {
			fields = append(fields, f.Name)
		}
		want := items.EthtoolFields[name]
		if !maps.Equal(set(fields), set(want)) {
			t.Errorf("%s: codec %v, items %v", name, fields, want)
		}
	}
}

// TestRecordedFeaturesAreKnownNames: every feature the kernel named in
// the recorded answer is in the items' table of names.
func TestRecordedFeaturesAreKnownNames(t *testing.T) {
	f, err := DecodeFeatures(recordAnswer(t, "veth_features", nil))
	if err != nil {
		t.Fatal(err)
	}
	known := set(items.EthtoolFeatures)
	for _, m := range []map[string]bool{f.Active, f.HW, f.NoChange} {
		for name := range m {
			if !known[name] {
				t.Errorf("the kernel's feature %q is not in items.EthtoolFeatures", name)
			}
		}
	}
}

func set(list []string) map[string]bool {
	m := map[string]bool{}
	for _, s := range list {
		m[s] = true
	}
	return m
}
