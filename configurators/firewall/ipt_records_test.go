package firewall

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/netagent/netagent/items"
)

// TestRecordFileRoundTrip: a record reads back as written, empty rules
// and empty arguments included, and a record in the older form (lists of
// lists) still reads.
func TestRecordFileRoundTrip(t *testing.T) {
	dir := t.TempDir()
	s, err := loadRecords(dir)
	if err != nil {
		t.Fatal(err)
	}
	ch := &items.IptablesChain{Family: items.FamilyIPv4, Table: "filter", Chain: "NA-FWD",
		Rules: [][]string{{"-s", "10.0.0.1", "-j", "DROP"}, {}, {"-m", "comment", "--comment", ""}}}
	kernel := [][]string{{"-s", "10.0.0.1/32", "-j", "DROP"}, {}, {"-m", "comment", "--comment", `""`}}
	if err := s.put(ch, kernel); err != nil {
		t.Fatal(err)
	}
	legacy, _ := json.Marshal(map[string]any{"family": "ipv4", "table": "filter", "chain": "NA-OLD",
		"intended": [][]string{{"-s", "10.0.0.2", "-j", "DROP"}}, "kernel": [][]string{{"-s", "10.0.0.2/32", "-j", "DROP"}}})
	if err := os.WriteFile(filepath.Join(dir, "ipv4.filter.NA-OLD.json"), legacy, 0o600); err != nil {
		t.Fatal(err)
	}
	again, err := loadRecords(dir)
	if err != nil {
		t.Fatal(err)
	}
	got := again.get(ch.Name())
	if got == nil || !reflect.DeepEqual(got.Intended, ch.Rules) || !reflect.DeepEqual(got.Kernel, kernel) {
		t.Errorf("record read back %+v, want intended %q kernel %q", got, ch.Rules, kernel)
	}
	old := again.get("ipv4/filter/NA-OLD")
	if old == nil || !equalRules(old.Intended, [][]string{{"-s", "10.0.0.2", "-j", "DROP"}}) ||
		!equalRules(old.Kernel, [][]string{{"-s", "10.0.0.2/32", "-j", "DROP"}}) {
		t.Errorf("older record read back %+v", old)
	}
}
