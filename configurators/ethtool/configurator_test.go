package ethtool

import (
	"context"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/internal/statefile"
	"github.com/netagent/netagent/items"
)

func ethtoolItem(settings map[string]uint32) *items.Ethtool {
	return &items.Ethtool{Interface: "et0", Settings: settings}
}

func TestConvergeRecordsTwiceWritesNothingAndGivesBack(t *testing.T) {
	k := NewFakeKernel()
	nic := k.AddVeth("et0", 3)
	dir := t.TempDir()
	c := k.Configurator(dir)
	want := ethtoolItem(map[string]uint32{"features/rx-gro": 1, "features/rx-checksum": 0, "channels/rx": 2})
	if err := c.Create(context.Background(), want); err != nil {
		t.Fatal(err)
	}
	if !nic.Features.Active["rx-gro"] || nic.Features.Active["rx-checksum"] || nic.Groups["channels"].Cur["rx"] != 2 {
		t.Fatalf("not applied: %+v", nic)
	}
	writes := k.Writes
	if err := c.Modify(context.Background(), want, want); err != nil {
		t.Fatal(err)
	}
	if k.Writes != writes {
		t.Errorf("a second apply wrote %d times", k.Writes-writes)
	}
	got, err := k.ReadBack(dir, dg.New("hint", want))
	if err != nil || len(got) != 1 || !got[0].Equal(want) {
		t.Fatalf("read back %v, %v; want %v", got, err, want)
	}
	// rx-checksum leaves the intent: its found value (on) comes back.
	less := ethtoolItem(map[string]uint32{"features/rx-gro": 1, "channels/rx": 2})
	got, _ = k.ReadBack(dir, dg.New("hint", less))
	if got[0].Equal(less) {
		t.Error("the read-back hides the recorded setting that left the intent")
	}
	if err := c.Modify(context.Background(), got[0], less); err != nil {
		t.Fatal(err)
	}
	if !nic.Features.Active["rx-checksum"] {
		t.Error("rx-checksum not given back")
	}
	if err := c.Delete(context.Background(), less); err != nil {
		t.Fatal(err)
	}
	if nic.Features.Active["rx-gro"] || nic.Groups["channels"].Cur["rx"] != 1 {
		t.Errorf("not given back: %+v", nic)
	}
	if got, _ := k.ReadBack(dir, nil); len(got) != 0 {
		t.Errorf("records left after delete: %v", got)
	}
}

func TestRefusedBeforeAnythingChanges(t *testing.T) {
	for name, tc := range map[string]struct {
		settings map[string]uint32
		want     string
	}{
		"fixed feature": {map[string]uint32{"features/rx-gro": 1, "features/rx-lro": 1}, "feature rx-lro of et0 is fixed (off by the driver)"},
		"above maximum": {map[string]uint32{"features/rx-gro": 1, "channels/rx": 3}, "channels rx of et0: 3 is above the NIC's maximum 2"},
		"no such group": {map[string]uint32{"features/rx-gro": 1, "rings/rx": 512}, "ethtool rings of et0"},
		"no such field": {map[string]uint32{"features/rx-gro": 1, "channels/combined": 1}, "channels combined of et0: the driver reports no such setting"},
	} {
		t.Run(name, func(t *testing.T) {
			k := NewFakeKernel()
			nic := k.AddVeth("et0", 3)
			c := k.Configurator(t.TempDir())
			it := ethtoolItem(tc.settings)
			check := c.Check(it)
			err := c.Create(context.Background(), it)
			if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
			if check == nil || check.Error() != err.Error() {
				t.Errorf("Check = %v, apply = %v", check, err)
			}
			if k.Writes != 0 || nic.Features.Active["rx-gro"] {
				t.Errorf("something changed: %d writes", k.Writes)
			}
		})
	}
}

func TestNewNICOfTheSameNameStartsFromItsOwnSettings(t *testing.T) {
	k := NewFakeKernel()
	k.AddVeth("et0", 3)
	dir := t.TempDir()
	c := k.Configurator(dir)
	if err := c.Create(context.Background(), ethtoolItem(map[string]uint32{"channels/rx": 2})); err != nil {
		t.Fatal(err)
	}
	nic := k.AddVeth("et0", 9) // replugged: a new ifindex
	nic.Groups["channels"].Cur["rx"] = 2
	if err := c.Delete(context.Background(), ethtoolItem(nil)); err != nil {
		t.Fatal(err)
	}
	if got := nic.Groups["channels"].Cur["rx"]; got != 2 {
		t.Errorf("the old NIC's original was given to the new one: rx %d", got)
	}
	if !maps.Equal(nic.Groups["channels"].Max, map[string]uint32{"rx": 2, "tx": 2}) {
		t.Error("maxima changed")
	}
}

// A damaged record is never read as empty (netagent's own values would
// be taken for the originals): converge fails naming it and writes
// nothing.
func TestDamagedRecordStopsConverge(t *testing.T) {
	k := NewFakeKernel()
	k.AddVeth("et0", 3)
	dir := t.TempDir()
	path := filepath.Join(dir, stateFileName)
	if err := os.WriteFile(path, []byte("netagent-state 1 3 00\nxyz"), 0o600); err != nil {
		t.Fatal(err)
	}
	err := k.Configurator(dir).Create(context.Background(), ethtoolItem(map[string]uint32{"features/rx-gro": 1}))
	if !errors.Is(err, statefile.ErrDamaged) || !strings.Contains(err.Error(), path) || k.Writes != 0 {
		t.Errorf("err %v, %d writes; want the damaged record named, nothing written", err, k.Writes)
	}
}

// A record that is whole but that no apply could have written (a value
// out of its range, a setting that does not exist) is refused like a
// damaged one: its values never reach the kernel.
func TestForgedRecordIsRefused(t *testing.T) {
	for name, forge := range map[string]func(map[string]uint32){
		"feature value 7":   func(s map[string]uint32) { s["features/rx-gro"] = 7 },
		"unknown setting":   func(s map[string]uint32) { s["rings/rx-bogus"] = 1 },
		"flag out of range": func(s map[string]uint32) { s["pause/tx"] = 9 },
	} {
		t.Run(name, func(t *testing.T) {
			k := NewFakeKernel()
			k.AddVeth("et0", 3)
			dir := t.TempDir()
			c := k.Configurator(dir)
			it := ethtoolItem(map[string]uint32{"features/rx-gro": 1})
			if err := c.Create(context.Background(), it); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, stateFileName)
			var rec stateRecord
			if _, err := statefile.LoadJSON(path, &rec); err != nil || len(rec.Namespaces) != 1 {
				t.Fatalf("record %+v, %v", rec, err)
			}
			forge(rec.Namespaces[0].Originals["et0"].Settings)
			if err := statefile.SaveJSON(path, &rec); err != nil {
				t.Fatal(err)
			}
			writes := k.Writes
			err := c.Delete(context.Background(), it)
			if !errors.Is(err, statefile.ErrDamaged) || !strings.Contains(err.Error(), path) || k.Writes != writes {
				t.Errorf("give-back over a forged record: %v, %d writes; want it refused naming %s, nothing written", err, k.Writes-writes, path)
			}
		})
	}
}
