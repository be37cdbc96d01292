package nftables

import (
	"bytes"
	"context"
	"encoding/gob"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/internal/testns"
	"github.com/netagent/netagent/items"
)

// writtenTable is a table of most of the model: a drop base chain, a nat
// chain, a regular chain jumped to, set lookups, an interval set of
// adjacent ranges and a hash set, in an order other than the kernel's.
func writtenTable() *items.NftTable {
	mark := uint32(7)
	return &items.NftTable{Family: "inet", Table: "netagent",
		Sets: []items.NftSet{
			{Name: "nets", Type: "ipv4_addr", Interval: true, Elements: []string{"10.0.1.0/24", "10.0.0.0/24", "192.0.2.1"}},
			{Name: "ports", Type: "inet_service", Elements: []string{"443", "22"}},
		},
		Chains: []items.NftChain{
			{Name: "z", Rules: []items.NftRule{{Protocol: "udp", Dport: "53", Counter: true, Verdict: "accept"}}},
			{Name: "input", Type: "filter", Hook: "input", Priority: &items.NftPriority{Name: "filter"}, Policy: "drop", Rules: []items.NftRule{
				{CtState: []string{"related", "established"}, Verdict: "accept"},
				{Saddr: "@nets", Protocol: "tcp", Dport: "@ports", Verdict: "accept"},
				{Mark: &mark, Verdict: "jump", Target: "z"},
			}},
			{Name: "post", Type: "nat", Hook: "postrouting", Priority: &items.NftPriority{Name: "srcnat"}, Rules: []items.NftRule{{OIfName: "uplink0", Masquerade: true}}},
		}}
}

// sortedTables sorts a read-back's tables' chains and sets by name.
func sortedTables(list []dg.Item) []items.NftTable {
	var out []items.NftTable
	for _, it := range list {
		t := *it.(*items.NftTable)
		t.Chains, t.Sets = slices.Clone(t.Chains), slices.Clone(t.Sets)
		slices.SortFunc(t.Chains, func(a, b items.NftChain) int { return strings.Compare(a.Name, b.Name) })
		slices.SortFunc(t.Sets, func(a, b items.NftSet) int { return strings.Compare(a.Name, b.Name) })
		out = append(out, t)
	}
	return out
}

// dumpedHandles are the handles of a full dump of tgt's table.
func dumpedHandles(t *testing.T, k netlinkKernel) map[string][]uint64 {
	t.Helper()
	conn, err := k.dial()
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	full, _, err := netlinkKernel{nsfd: k.nsfd}.dumpTable(conn, "inet", "netagent")
	if err != nil {
		t.Fatal(err)
	}
	return full.Handles
}

// sameHandles compares handles as a dump has them: every chain, the
// empty ones too.
func sameHandles(a, b map[string][]uint64) bool {
	for c, h := range a {
		if len(h) != 0 && !slices.Equal(h, b[c]) {
			return false
		}
	}
	for c, h := range b {
		if len(h) != 0 && !slices.Equal(h, a[c]) {
			return false
		}
	}
	return true
}

// TestReadBackAfterOwnWrite: after netagent's own batch, with no other
// writer since, the read-back takes the table the batch wrote (no dump),
// and it is exactly what a dump returns once another writer's commit
// forces one; the rules' handles, from the batch's echoes, are a dump's,
// after the create and after a Modify that deletes one rule and inserts
// others before kept ones; another writer's change is seen by the next
// read-back.
func TestReadBackAfterOwnWrite(t *testing.T) {
	tgt := testns.New(t)
	c := NewConfigurator(NetlinkKernel(tgt, 0))
	ctx := context.Background()
	tbl := writtenTable()
	if err := c.Create(ctx, tbl); err != nil {
		t.Fatal(err)
	}
	k := kernelOf(tgt).(netlinkKernel)
	key, _ := k.key("inet", "netagent")
	conn, err := k.dial()
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	gen, err := getGen(conn)
	if err != nil {
		t.Fatal(err)
	}
	d, ok := dumps.get(key, gen, true)
	if !ok || d.noHandles {
		t.Fatalf("after the create, the cache holds %+v (%v), want the written table of generation %d with its handles", d, ok, gen)
	}
	if h := dumpedHandles(t, k); !sameHandles(d.Handles, h) {
		t.Fatalf("the create's echoed handles %v, a dump's %v", d.Handles, h)
	}
	written, err := ReadBack(tgt)
	if err != nil || len(written) != 1 || !written[0].Equal(tbl) {
		t.Fatalf("read-back after the create: %v, %v", written, err)
	}
	testns.Exec(t, tgt, "nft", "add table ip other") // a commit of another writer: a dump
	dumped, err := ReadBack(tgt)
	if err != nil {
		t.Fatal(err)
	}
	if g, w := sortedTables(written), sortedTables(dumped); !reflect.DeepEqual(g, w) {
		t.Fatalf("the written table differs from the dump:\n written %+v\n dumped  %+v", g, w)
	}

	next := writtenTable()
	next.Chains[1].Rules = append(next.Chains[1].Rules[:1], next.Chains[1].Rules[2:]...)
	next.Sets[0].Elements = append(next.Sets[0].Elements, "10.0.2.0/24")
	if err := c.Modify(ctx, tbl, next); err != nil {
		t.Fatal(err)
	}
	// Inserted before kept rules and appended, in two chains, with a
	// deletion: the handles the echoes give are still a dump's.
	inserted := writtenTable()
	in := inserted.Chains[1].Rules
	inserted.Chains[1].Rules = []items.NftRule{{Protocol: "tcp", Dport: "1", Verdict: "accept"}, {Protocol: "tcp", Dport: "2", Verdict: "accept"},
		in[0], {Protocol: "tcp", Dport: "3", Verdict: "drop"}, in[2], {Protocol: "tcp", Dport: "4", Verdict: "drop"}}
	inserted.Chains[0].Rules = append([]items.NftRule{{Protocol: "udp", Dport: "5", Verdict: "drop"}}, inserted.Chains[0].Rules...)
	if err := c.Modify(ctx, next, inserted); err != nil {
		t.Fatal(err)
	}
	gen, _ = getGen(conn)
	if d, ok := dumps.get(key, gen, true); !ok || !sameHandles(d.Handles, dumpedHandles(t, k)) {
		t.Fatalf("after the modify, the cache holds handles %v (%v), a dump's %v", d.Handles, ok, dumpedHandles(t, k))
	}
	if got, err := ReadBack(tgt); err != nil || len(got) != 1 || !got[0].Equal(inserted) {
		t.Fatalf("read-back after the inserts: %v, %v", got, err)
	}
	if err := c.Modify(ctx, inserted, next); err != nil { // by the echoed handles
		t.Fatal(err)
	}
	if got, err := ReadBack(tgt); err != nil || len(got) != 1 || !got[0].Equal(next) {
		t.Fatalf("read-back after the modify: %v, %v", got, err)
	}
	testns.Exec(t, tgt, "nft", "flush chain inet netagent z")
	got, err := ReadBack(tgt)
	if err != nil || len(got) != 1 {
		t.Fatal(got, err)
	}
	if rules := got[0].(*items.NftTable).Chains; len(rules[slices.IndexFunc(rules, func(c items.NftChain) bool { return c.Name == "z" })].Rules) != 0 {
		t.Fatalf("another writer's flush of chain z is not seen: %+v", rules)
	}
	if err := c.Modify(ctx, next, next); err != nil {
		t.Fatal(err)
	}
	testns.Exec(t, tgt, "nft", "add table ip other2")
	if got, err := ReadBack(tgt); err != nil || len(got) != 1 || !got[0].Equal(next) {
		t.Fatalf("after the repair: %v, %v", got, err)
	}
}

// forget drops this process's cached dumps of tgt's table, as a new
// process starts without them.
func forget(t *testing.T, k netlinkKernel) {
	key, ok := k.key("inet", "netagent")
	if !ok {
		t.Fatal("no key")
	}
	dumps.put(key, Dumped{}, false)
}

// TestDumpFile: the next process (no cached dumps) takes the table from
// the state directory's file while the generation is the file's: the
// read-back without a dump, a Modify with the handles of a handles-only
// dump, equal to a full dump's; another writer's change is seen; a file
// of another namespace is never taken, even of the same generation.
func TestDumpFile(t *testing.T) {
	tgt, dir := testns.New(t), t.TempDir()
	k := NetlinkKernel(tgt, 0).(netlinkKernel)
	k.stateDir = dir
	c := &configurator{k: k}
	ctx := context.Background()
	tbl := writtenTable()
	if err := c.Create(ctx, tbl); err != nil {
		t.Fatal(err)
	}
	forget(t, k)
	got, err := ReadBackIn(tgt, dir)
	if err != nil || len(got) != 1 || !got[0].Equal(tbl) {
		t.Fatalf("read-back from the file: %v, %v", got, err)
	}
	key, _ := k.key("inet", "netagent")
	conn, err := k.dial()
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	gen, _ := getGen(conn)
	d, ok := dumps.get(key, gen, true)
	if !ok || !sameHandles(d.Handles, dumpedHandles(t, k)) {
		t.Fatalf("the read-back dumped (%v): want the file's table, with the echoed handles %v", ok, d.Handles)
	}
	// A table written without echoes (a batch too large for them): the
	// file has no handles.
	d.Handles, d.noHandles = nil, true
	k.saveDump(conn, "inet", "netagent", d, true)

	forget(t, k)
	d, ok, err = k.DumpTable("inet", "netagent") // needs handles: a handles-only dump
	if err != nil || !ok || d.noHandles {
		t.Fatal(d, ok, err)
	}
	full, _, err := netlinkKernel{nsfd: k.nsfd}.dumpTable(conn, "inet", "netagent")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(d.Handles, full.Handles) || !full.Table.Equal(&d.Table) {
		t.Fatalf("handles %v, a full dump's %v", d.Handles, full.Handles)
	}

	forget(t, k)
	next := writtenTable()
	next.Chains[1].Rules = append(next.Chains[1].Rules[:1], items.NftRule{Protocol: "tcp", Dport: "8080", Verdict: "accept"}, next.Chains[1].Rules[2])
	if err := c.Modify(ctx, tbl, next); err != nil {
		t.Fatal(err)
	}
	testns.Exec(t, tgt, "nft", "add table ip other")
	forget(t, k)
	if got, err := ReadBackIn(tgt, dir); err != nil || len(got) != 1 || !got[0].Equal(next) {
		t.Fatalf("after the modify: %v, %v", got, err)
	}

	testns.Exec(t, tgt, "nft", "flush chain inet netagent z")
	forget(t, k)
	if got, err := ReadBackIn(tgt, dir); err != nil || len(got) != 1 || got[0].Equal(next) {
		t.Fatalf("another writer's flush is not seen: %v, %v", got, err)
	}

	other := testns.New(t)
	ko := NetlinkKernel(other, 0).(netlinkKernel)
	ko.stateDir = dir
	oconn, err := ko.dial()
	if err != nil {
		t.Fatal(err)
	}
	defer oconn.Close()
	ogen, _ := getGen(oconn)
	k.saveDump(conn, "inet", "netagent", Dumped{Table: *next, Owned: true, Gen: ogen}, true)
	if _, ok := k.loadDump(conn, "inet", "netagent", ogen, true); !ok {
		t.Fatal("the file is not taken in its own namespace")
	}
	if _, ok := ko.loadDump(oconn, "inet", "netagent", ogen, false); ok {
		t.Fatal("another namespace's file of the same generation is taken")
	}
}

// TestDumpFileUntrusted: the state directory is not trusted. A file of
// the right namespace, boot and generation whose table does not
// validate, or that is not a dump at all, is ignored: the read-back dumps
// the kernel.
func TestDumpFileUntrusted(t *testing.T) {
	tgt, dir := testns.New(t), t.TempDir()
	k := NetlinkKernel(tgt, 0).(netlinkKernel)
	k.stateDir = dir
	tbl := writtenTable()
	if err := (&configurator{k: k}).Create(context.Background(), tbl); err != nil {
		t.Fatal(err)
	}
	conn, err := k.dial()
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	gen, _ := getGen(conn)
	path := dumpFilePath(dir, "inet", "netagent")
	bad := *tbl
	bad.Family = "inet"
	bad.Sets = []items.NftSet{{Name: "s", Type: "ipv4_addr", Elements: []string{"not an address"}}}
	var forged bytes.Buffer
	if err := gob.NewEncoder(&forged).Encode(&dumpFile{Boot: bootID(), Cookie: netnsCookie(conn), Gen: gen, Table: bad}); err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{"forged": forged.Bytes(), "garbage": []byte("\x00\xffnot gob")} {
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		forget(t, k)
		got, err := ReadBackIn(tgt, dir)
		if err != nil || len(got) != 1 || !got[0].Equal(tbl) {
			t.Fatalf("%s file: read back %v, %v; want the kernel's table", name, got, err)
		}
	}
}
