package host

import (
	"bytes"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/vishvananda/netlink/nl"
	"golang.org/x/sys/unix"

	"github.com/netagent/netagent/configurators/l3"
	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/items"
	"github.com/netagent/netagent/reconciler"
)

// foreignRoute is someone else's route (proto static) 10.9.0.0/16 via
// interface index 7, as l3.ForeignAtRisk saves it, named dev.
func foreignRoute(dev string) l3.ForeignObject {
	m := []byte{unix.AF_INET, 16, 0, 0, unix.RT_TABLE_MAIN, unix.RTPROT_STATIC, unix.RT_SCOPE_UNIVERSE, unix.RTN_UNICAST, 0, 0, 0, 0}
	attr := func(typ uint16, v []byte) {
		m = append(m, nl.NewRtAttr(int(typ), v).Serialize()...)
	}
	attr(unix.RTA_DST, []byte{10, 9, 0, 0})
	attr(unix.RTA_OIF, nl.Uint32Attr(7))
	return l3.ForeignObject{Kind: items.TypeRoute, Msg: m, Devs: []string{dev}}
}

// journalWith writes a journal of one record of a sysctl's before-image
// and the foreign objects fo, and returns what reading it says is not
// accounted for.
func journalWith(t *testing.T, fo ...l3.ForeignObject) (journaled, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "journal")
	j, err := createJournal(path)
	if err != nil {
		t.Fatal(err)
	}
	j.atRisk = func([]string) ([]l3.ForeignObject, error) { return fo, nil }
	addr := &items.Address{Dev: "lan0", Prefix: netip.MustParsePrefix("10.0.0.1/24")}
	if err := j.Record([]reconciler.PlannedOp{{Op: reconciler.OpDelete, Ref: dg.Ref(addr), Old: addr}}); err != nil {
		t.Fatal(err)
	}
	j.Close()
	jd, err := readJournal(path)
	if err != nil {
		t.Fatal(err)
	}
	return jd, jd.Unaccounted(path)
}

// The saved foreign netlink messages, which the revert replays to the
// kernel, are held to what netagent saves: a message of a kind it never
// saves, of inconsistent lengths, or not someone else's object is damage
// (the journal does not account for its record: RevertIncompleteError),
// never sent. Before, the record was taken as it stood and its messages
// went to the kernel at revert.
func TestJournalForeignObjectsChecked(t *testing.T) {
	if jd, u := journalWith(t, foreignRoute("lan0")); u != "" || len(jd.Foreign) != 1 {
		t.Fatalf("a foreign route as netagent saves it: unaccounted %q, %d objects read", u, len(jd.Foreign))
	}
	bad := func(f func(*l3.ForeignObject)) l3.ForeignObject {
		o := foreignRoute("lan0")
		o.Msg = bytes.Clone(o.Msg)
		f(&o)
		return o
	}
	for name, o := range map[string]l3.ForeignObject{
		"a kind netagent never saves": bad(func(o *l3.ForeignObject) { o.Kind = "link" }),
		"a rule (RTM_NEWRULE)":        bad(func(o *l3.ForeignObject) { o.Kind = items.TypeRule }),
		"shorter than rtmsg":          bad(func(o *l3.ForeignObject) { o.Msg = o.Msg[:8] }),
		"an attribute longer than the message": bad(func(o *l3.ForeignObject) {
			nl.NativeEndian().PutUint16(o.Msg[unix.SizeofRtMsg:], 200)
		}),
		"an attribute shorter than its header": bad(func(o *l3.ForeignObject) {
			nl.NativeEndian().PutUint16(o.Msg[unix.SizeofRtMsg:], 2)
		}),
		"trailing bytes":            bad(func(o *l3.ForeignObject) { o.Msg = append(o.Msg, 1, 2) }),
		"netagent's own route":      bad(func(o *l3.ForeignObject) { o.Msg[5] = items.RouteProtocol }),
		"a cached route":            bad(func(o *l3.ForeignObject) { nl.NativeEndian().PutUint32(o.Msg[8:], unix.RTM_F_CLONED) }),
		"another family":            bad(func(o *l3.ForeignObject) { o.Msg[0] = unix.AF_PACKET }),
		"names for no index":        bad(func(o *l3.ForeignObject) { o.Devs = append(o.Devs, "lan1") }),
		"a name no interface has":   bad(func(o *l3.ForeignObject) { o.Devs = []string{"../../etc"} }),
		"a neighbour not permanent": {Kind: items.TypeNeighbor, Msg: []byte{unix.AF_INET, 0, 0, 0, 7, 0, 0, 0, 2, 0, 0, 1}, Devs: []string{"lan0"}},
	} {
		t.Run(name, func(t *testing.T) {
			jd, u := journalWith(t, foreignRoute("lan0"), o)
			if !strings.Contains(u, "foreign object 2") || jd.Records != 0 || len(jd.Foreign) != 0 {
				t.Errorf("unaccounted %q, %d records, %d foreign objects; want the record refused for its foreign object 2", u, jd.Records, len(jd.Foreign))
			}
		})
	}
}

// A planted journal of one 100 MiB line without a newline is damage,
// found with a bounded allocation (the line is not read whole). Before,
// it was read whole (some 200 MiB allocated) and taken for a torn record.
func TestJournalHugeLineBounded(t *testing.T) {
	path := filepath.Join(t.TempDir(), "journal")
	if err := os.WriteFile(path, bytes.Repeat([]byte{'a'}, 100<<20), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(countPath(path), countLine(1), 0o600); err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	jd, err := readJournal(path)
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 3*maxRecordLine {
		t.Errorf("reading a 100 MiB line allocated %d MiB, want at most %d", alloc>>20, 3*maxRecordLine>>20)
	}
	if u := jd.Unaccounted(path); !strings.Contains(u, "longer than") || jd.Torn {
		t.Errorf("unaccounted %q, torn %v; want damage naming the line too long, no tear", u, jd.Torn)
	}
}

// A journal larger than a trial writes is damage, not read.
func TestJournalTooLarge(t *testing.T) {
	path := filepath.Join(t.TempDir(), "journal")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(maxJournalSize + 1); err != nil { // sparse
		t.Fatal(err)
	}
	f.Close()
	if err := os.WriteFile(countPath(path), countLine(1), 0o600); err != nil {
		t.Fatal(err)
	}
	jd, err := readJournal(path)
	if err != nil {
		t.Fatal(err)
	}
	if u := jd.Unaccounted(path); !strings.Contains(u, fmt.Sprintf("more than the %d", maxJournalSize)) {
		t.Errorf("unaccounted %q; want the journal's size named", u)
	}
}

// A wave larger than recordSplit is journaled as several records, each a
// line within maxRecordLine, all accounted for and read back.
func TestJournalSplitsALargeWave(t *testing.T) {
	path := filepath.Join(t.TempDir(), "journal")
	j, err := createJournal(path)
	if err != nil {
		t.Fatal(err)
	}
	var fo []l3.ForeignObject
	for range 20000 {
		fo = append(fo, foreignRoute("lan0"))
	}
	j.atRisk = func([]string) ([]l3.ForeignObject, error) { return fo, nil }
	var ops []reconciler.PlannedOp
	for i := range 30000 {
		it := &items.Sysctl{Key: fmt.Sprintf("net.ipv4.conf.d%d.forwarding", i), Value: "1"}
		ops = append(ops, reconciler.PlannedOp{Op: reconciler.OpDelete, Ref: dg.Ref(it), Old: it})
	}
	addr := &items.Address{Dev: "lan0", Prefix: netip.MustParsePrefix("10.0.0.1/24")}
	ops = append(ops, reconciler.PlannedOp{Op: reconciler.OpDelete, Ref: dg.Ref(addr), Old: addr})
	if err := j.Record(ops); err != nil {
		t.Fatal(err)
	}
	j.Close()
	data, _ := os.ReadFile(path)
	lines := bytes.SplitAfter(data, []byte{'\n'})
	lines = lines[:len(lines)-1]
	for i, l := range lines {
		if len(l) > maxRecordLine {
			t.Errorf("line %d of %d bytes", i+1, len(l))
		}
	}
	jd, err := readJournal(path)
	if err != nil {
		t.Fatal(err)
	}
	if u := jd.Unaccounted(path); u != "" || len(lines) < 3 || jd.Records != len(lines) || len(jd.Images) != len(ops) || len(jd.Foreign) != len(fo) {
		t.Errorf("%d lines, %d records, %d images, %d foreign objects, unaccounted %q; want several records holding %d images and %d objects", len(lines), jd.Records, len(jd.Images), len(jd.Foreign), u, len(ops), len(fo))
	}
}
