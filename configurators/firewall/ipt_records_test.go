package firewall

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/netagent/netagent/items"
)

// TestRecordFileRoundTrip: a record reads back as written, empty rules
// and empty arguments included; a record in the older form (lists of
// lists, one file per chain) still reads, and moves into the records file
// at the next write; a batch writes once, at its end.
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

	// The next write takes the older record into the records file and
	// removes its own file; a batch's puts are written at its end.
	other := &items.IptablesChain{Family: items.FamilyIPv4, Table: "filter", Chain: "NA-NEW", Rules: [][]string{{"-j", "ACCEPT"}}}
	err = again.batch(func() {
		_ = again.put(other, [][]string{{"-j", "ACCEPT"}, {"-j", "ACCEPT"}})
		if loaded, _ := loadRecords(dir); loaded.get(other.Name()) != nil {
			t.Error("a put inside a batch was written before the batch's end")
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "ipv4.filter.NA-OLD.json")); !os.IsNotExist(err) {
		t.Errorf("the older record's file after a write: %v, want removed", err)
	}
	third, err := loadRecords(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{ch.Name(), "ipv4/filter/NA-OLD", other.Name()} {
		if third.get(name) == nil {
			t.Errorf("record %s lost in the records file", name)
		}
	}
}

// TestSharedRecordsFollowTheDisk: the process's shared store is loaded
// again when its records file is removed or written by another process
// (the records are a cache of the kernel's spelling: one lost must read
// as lost, TestFwChainRecordLost in test/netns), and kept otherwise.
func TestSharedRecordsFollowTheDisk(t *testing.T) {
	dir := t.TempDir()
	ch := &items.IptablesChain{Family: items.FamilyIPv4, Table: "filter", Chain: "NA-FWD", Rules: [][]string{{"-s", "10.0.0.1", "-j", "DROP"}}}
	s, err := sharedRecords(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.put(ch, [][]string{{"-s", "10.0.0.1/32", "-j", "DROP"}}); err != nil {
		t.Fatal(err)
	}
	if again, _ := sharedRecords(dir); again != s {
		t.Error("an unchanged records file was loaded again")
	}
	other, _ := loadRecords(dir) // another process: drops the record
	if err := other.drop(ch); err != nil {
		t.Fatal(err)
	}
	if again, _ := sharedRecords(dir); again.get(ch.Name()) != nil {
		t.Error("a record another process dropped is still held")
	}
	if err := s.put(ch, [][]string{{"-s", "10.0.0.1/32", "-j", "DROP"}}); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if again, _ := sharedRecords(dir); again.get(ch.Name()) != nil {
		t.Error("a record whose file was removed is still held")
	}
}

// TestRecordFromRestoreLines: a record put with the restore input's lines
// that wrote the chain (putWritten) writes the same file as one put
// without them (quoting the rules itself), also for an empty rule, an
// empty argument and one that needs quotes; a store loaded from that file
// writes it again unchanged; lines that are not the chain's are ignored.
func TestRecordFromRestoreLines(t *testing.T) {
	ch := &items.IptablesChain{Family: items.FamilyIPv4, Table: "filter", Chain: "NA-FWD",
		Rules: [][]string{{"-s", "10.0.0.1", "-j", "DROP"}, {}, {"-m", "comment", "--comment", ""}, ruleHost}}
	kernel := [][]string{{"-s", "10.0.0.1/32", "-j", "DROP"}, {}, {"-m", "comment", "--comment", `""`}, ruleHost}
	fill, err := fillLines(ch)
	if err != nil {
		t.Fatal(err)
	}
	write := func(put func(*recordStore) error) []byte {
		t.Helper()
		dir := t.TempDir()
		s, _ := loadRecords(dir)
		if err := put(s); err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(filepath.Join(dir, recordsFileName))
		if err != nil {
			t.Fatal(err)
		}
		loaded, _ := loadRecords(dir)
		_ = loaded.drop(&items.IptablesChain{Family: items.FamilyIPv4, Table: "filter", Chain: "NA-NONE"})
		loaded.dirty = true
		if err := loaded.batch(func() {}); err != nil {
			t.Fatal(err)
		}
		if again, _ := os.ReadFile(filepath.Join(dir, recordsFileName)); string(again) != string(data) {
			t.Errorf("written again from the loaded store:\n%s\nwant\n%s", again, data)
		}
		return data
	}
	want := write(func(s *recordStore) error { return s.put(ch, kernel) })
	lines := strings.SplitAfter(fill, "\n")
	for name, lines := range map[string]string{
		"restore lines":        fill,
		"another chain's":      strings.ReplaceAll(fill, "NA-FWD", "NA-FWDX"),
		"not as many as rules": strings.Join(lines[:2], ""),
		"more than rules":      fill + lines[1],
	} {
		if got := write(func(s *recordStore) error { return s.putWritten(ch, kernel, lines, nil) }); string(got) != string(want) {
			t.Errorf("%s: records file\n%s\nwant\n%s", name, got, want)
		}
	}
}

// TestRecordsEncodeAsJSON: the records file is written byte for byte as
// encoding/json writes it, for arguments that JSON escapes (quotes,
// backslashes, <, >, &, control characters, non-ASCII, invalid UTF-8),
// empty lists and the older versions' fields.
func TestRecordsEncodeAsJSON(t *testing.T) {
	odd := []string{`"a b"`, `a\b`, "<x>&y", "tab\there", "é", "\xff", "", "-j ACCEPT"}
	files := []recordFile{
		{Family: "ipv4", Table: "filter", Chain: "NA-FWD", IntendedRules: odd, KernelRules: odd[2:]},
		{Family: "ipv6", Table: "nat", Chain: "NA-<&>"},
		{Family: "ipv4", Table: "filter", Chain: "NA-OLD", IntendedRules: []string{}, Intended: [][]string{{"-s", "é"}}, Kernel: [][]string{{}}},
	}
	want, err := json.Marshal(recordsOnDisk{Chains: files})
	if err != nil {
		t.Fatal(err)
	}
	var parts [][]byte
	for i := range files {
		p, err := appendRecordFile(nil, &files[i])
		if err != nil {
			t.Fatal(err)
		}
		parts = append(parts, p)
	}
	if got := appendRecords(nil, parts); string(got) != string(want) {
		t.Errorf("records file\n%s\nwant\n%s", got, want)
	}
}

// TestRecordFromSavedText: a record learnt from iptables-save's output
// keeps the kernel's rules as iptables printed them (its own quoting, a
// rule without arguments), and they load back as the same arguments; a
// view whose chain gained a rule without text quotes the rules itself.
func TestRecordFromSavedText(t *testing.T) {
	out := "*filter\n:NA-FWD - [0:0]\n-A NA-FWD -m comment --comment netagent\n" +
		"-A NA-FWD -s 10.0.0.1/32 -m comment --comment \"a \\\"q\\\" it\\'s\" -j ACCEPT\n-A NA-FWD\n" +
		"-A NA-FWD -p tcp -m tcp --dport 22 -j DROP\nCOMMIT\n"
	ch := &items.IptablesChain{Family: items.FamilyIPv4, Table: "filter", Chain: "NA-FWD", Rules: [][]string{
		{"-s", "10.0.0.1", "-m", "comment", "--comment", `a "q" it's`, "-j", "ACCEPT"}, {}, {"-p", "tcp", "--dport", "22", "-j", "DROP"}}}
	for _, extra := range []bool{false, true} {
		tables, err := parseSave([]byte(out))
		if err != nil {
			t.Fatal(err)
		}
		v := tables["filter"]
		if extra {
			v.addRule("NA-FWD", []string{"-j", "LOG"})
		}
		dir := t.TempDir()
		recs, _ := loadRecords(dir)
		c := &chainConfigurator{records: recs}
		c.learnFrom(v, ch, "")
		if text := v.ruleText("NA-FWD"); (text != nil) == extra {
			t.Errorf("extra rule %v: text %q", extra, text)
		}
		loaded, _ := loadRecords(dir)
		rec := loaded.get(ch.Name())
		quoted := `-s 10.0.0.1/32 -m comment --comment "a \"q\" it\'s" -j ACCEPT` // iptables', not quoteArg's
		if f, _ := rec.file(); (len(f.KernelRules) == 3 && f.KernelRules[0] == quoted) == extra {
			t.Errorf("extra rule %v: on disk %q", extra, f.KernelRules)
		}
		if want := v.chains["NA-FWD"][1:]; rec == nil || !equalRules(rec.Kernel, want) || !equalRules(rec.Intended, ch.Rules) {
			t.Errorf("extra rule %v: record %+v, want kernel %q", extra, rec, want)
		}
	}
}
