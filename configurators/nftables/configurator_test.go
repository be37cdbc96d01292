package nftables

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/netagent/netagent/items"
	"github.com/netagent/netagent/reconciler"
)

var ctx = context.Background()

func prio(v int) *items.NftPriority { return &items.NftPriority{Value: v} }

// edgeTable is a firewall with a base chain, a regular chain it jumps to,
// a nat chain and two sets.
func edgeTable() *items.NftTable {
	return &items.NftTable{Family: "inet", Table: "netagent",
		Sets: []items.NftSet{
			{Name: "mgmt", Type: "ipv4_addr", Interval: true, Elements: []string{"192.0.2.0/24", "198.51.100.7"}},
			{Name: "ports", Type: "inet_service", Elements: []string{"22", "443"}},
		},
		Chains: []items.NftChain{
			{Name: "input", Type: "filter", Hook: "input", Priority: prio(0), Policy: "drop", Rules: []items.NftRule{
				{CtState: []string{"established", "related"}, Verdict: "accept"},
				{Saddr: "@mgmt", Verdict: "jump", Target: "mgmt"},
				{Protocol: "tcp", Dport: "@ports", Counter: true, Verdict: "accept"},
				{Protocol: "udp", Dport: "53", Counter: true, Verdict: "accept"},
			}},
			{Name: "mgmt", Rules: []items.NftRule{{Protocol: "tcp", Dport: "22", Counter: true, Verdict: "accept"}}},
			{Name: "post", Type: "nat", Hook: "postrouting", Priority: prio(100), Rules: []items.NftRule{{OIfName: "wan0", Masquerade: true}}},
		}}
}

// created returns a fake holding tbl, made by the configurator, and it.
func created(t *testing.T, tbl *items.NftTable) (*FakeKernel, *configurator) {
	t.Helper()
	f := NewFakeKernel()
	c := &configurator{k: f}
	if err := c.Create(ctx, tbl); err != nil {
		t.Fatal(err)
	}
	return f, c
}

// dumped returns the fake's table, failing the test unless it is
// netagent's.
func dumped(t *testing.T, f *FakeKernel, want *items.NftTable) Dumped {
	t.Helper()
	d, ok, err := f.DumpTable(want.Family, want.Table)
	if err != nil || !ok || !d.Owned {
		t.Fatalf("dump %s: %v %v %v", want.Name(), ok, d.Owned, err)
	}
	return d
}

// checkTable fails the test unless the fake holds want exactly.
func checkTable(t *testing.T, f *FakeKernel, want *items.NftTable) Dumped {
	t.Helper()
	d := dumped(t, f, want)
	if !d.Table.Equal(want) {
		t.Fatalf("table %s:\n got  %+v\n want %+v", want.Name(), d.Table.Canonical(), want.Canonical())
	}
	return d
}

// ruleHandles returns each rule's handle by its chain and its content.
func ruleHandles(d Dumped) map[string]uint64 {
	out := map[string]uint64{}
	for _, c := range d.Table.Canonical().Chains {
		for i, r := range c.Rules {
			out[fmt.Sprintf("%s %+v", c.Name, r)] = d.Handles[c.Name][i]
		}
	}
	return out
}

// TestCreateModifyDelete: a create writes the table in one batch; doing
// it again writes nothing; a modify of one rule keeps the handles and
// counters of the others in one batch; a delete removes the table and a
// second delete is a no-op.
func TestCreateModifyDelete(t *testing.T) {
	want := edgeTable()
	f, c := created(t, want)
	before := checkTable(t, f, want)
	if err := c.Create(ctx, want); err != nil || f.Batches() != 1 {
		t.Fatalf("second create: %v, %d batches (want 1)", err, f.Batches())
	}
	f.Traffic("inet", "netagent", 7)
	udp := before.Handles["input"][3]

	next := edgeTable()
	next.Chains[0].Rules[2].Dport = "@ports"
	next.Chains[0].Rules[2].Verdict = "drop"
	if err := c.Modify(ctx, want, next); err != nil {
		t.Fatal(err)
	}
	after := checkTable(t, f, next)
	if f.Batches() != 2 {
		t.Errorf("modify took %d batches, want 1", f.Batches()-1)
	}
	if n, ok := f.Counter("inet", "netagent", "input", udp); !ok || n != 7 {
		t.Errorf("the unchanged udp rule's counter after the modify: %d %v, want 7", n, ok)
	}
	keptHandles(t, before, after, 1)

	if err := c.Delete(ctx, next); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := f.DumpTable("inet", "netagent"); ok {
		t.Fatal("table still there after the delete")
	}
	if err := c.Delete(ctx, next); err != nil || f.Batches() != 3 {
		t.Errorf("second delete: %v, %d batches (want 3)", err, f.Batches())
	}
}

// keptHandles fails the test unless exactly changed rules of after are
// new (a handle before did not have) and the others kept their handles
// and contents.
func keptHandles(t *testing.T, before, after Dumped, changed int) {
	t.Helper()
	old := map[uint64]string{}
	for r, h := range ruleHandles(before) {
		old[h] = r
	}
	fresh := 0
	for r, h := range ruleHandles(after) {
		switch was, ok := old[h]; {
		case !ok:
			fresh++
		case was != r:
			t.Errorf("handle %d was rule %s, is %s", h, was, r)
		}
	}
	if fresh != changed {
		t.Errorf("%d new rules, want %d", fresh, changed)
	}
}

// TestModifyInPlace: every kind of change is one batch that leaves the
// rest alone: a policy in place, rules inserted at their position and
// deleted, set elements, sets and chains added and deleted.
func TestModifyInPlace(t *testing.T) {
	for _, tc := range []struct {
		name    string
		change  func(*items.NftTable)
		changed int // new rules
	}{
		{"policy", func(x *items.NftTable) { x.Chains[0].Policy = "accept" }, 0},
		{"insert first", func(x *items.NftTable) {
			x.Chains[0].Rules = slices.Insert(x.Chains[0].Rules, 0, items.NftRule{IIfName: "lo", Verdict: "accept"})
		}, 1},
		{"insert two in the middle", func(x *items.NftTable) {
			x.Chains[0].Rules = slices.Insert(x.Chains[0].Rules, 2, items.NftRule{Protocol: "icmp", Verdict: "accept"}, items.NftRule{Protocol: "tcp", Dport: "80", Verdict: "accept"})
		}, 2},
		{"append", func(x *items.NftTable) {
			x.Chains[0].Rules = append(x.Chains[0].Rules, items.NftRule{Counter: true, Verdict: "drop"})
		}, 1},
		{"delete and reorder", func(x *items.NftTable) {
			r := x.Chains[0].Rules
			x.Chains[0].Rules = []items.NftRule{r[3], r[0], r[2]}
		}, 1},
		{"elements", func(x *items.NftTable) {
			x.Sets[0].Elements = []string{"198.51.100.7", "203.0.113.0/25"}
			x.Sets[1].Elements = append(x.Sets[1].Elements, "8443")
		}, 0},
		{"sets", func(x *items.NftTable) {
			x.Sets = append(x.Sets, items.NftSet{Name: "v6", Type: "ipv6_addr", Elements: []string{"2001:db8::1"}})
			x.Chains[2].Rules = append(x.Chains[2].Rules, items.NftRule{Daddr: "@v6", Verdict: "accept"})
		}, 1},
		{"set type", func(x *items.NftTable) { x.Sets[0].Interval = false; x.Sets[0].Elements = []string{"198.51.100.7"} }, 1},
		{"chains", func(x *items.NftTable) {
			x.Chains = append(x.Chains[:2], items.NftChain{Name: "fwd", Type: "filter", Hook: "forward", Priority: prio(0), Policy: "drop",
				Rules: []items.NftRule{{OIfName: "wan0", Verdict: "accept"}}})
		}, 1},
		{"regular chain dropped", func(x *items.NftTable) {
			x.Chains[0].Rules = slices.Delete(x.Chains[0].Rules, 1, 2)
			x.Chains = slices.Delete(x.Chains, 1, 2)
		}, 0},
		{"hook priority", func(x *items.NftTable) { x.Chains[2].Priority = prio(110) }, 1},
		{"base to regular", func(x *items.NftTable) { x.Chains[2] = items.NftChain{Name: "post", Rules: x.Chains[2].Rules} }, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := NewFakeKernel()
			c := &configurator{k: f}
			old := edgeTable()
			if err := c.Create(ctx, old); err != nil {
				t.Fatal(err)
			}
			before := dumped(t, f, old)
			next := edgeTable()
			tc.change(next)
			if err := c.Modify(ctx, old, next); err != nil {
				t.Fatal(err)
			}
			after := checkTable(t, f, next)
			if f.Batches() != 2 {
				t.Errorf("modify took %d batches, want 1", f.Batches()-1)
			}
			keptHandles(t, before, after, tc.changed)
			if err := c.Modify(ctx, next, next); err != nil || f.Batches() != 2 {
				t.Errorf("a modify to the same table: %v, %d batches (want none)", err, f.Batches()-2)
			}
		})
	}
}

// TestClash: a table of the intent's name that netagent did not make is
// a ClashError for create, modify and delete, and stays as it was.
func TestClash(t *testing.T) {
	f := NewFakeKernel()
	if err := f.AddForeignTable("inet", "netagent", items.NftChain{Name: "mine", Type: "filter", Hook: "input", Priority: prio(0),
		Rules: []items.NftRule{{Protocol: "udp", Dport: "53", Verdict: "accept"}}}); err != nil {
		t.Fatal(err)
	}
	gen := f.Gen()
	c := &configurator{k: f}
	var clash *ClashError
	for name, err := range map[string]error{
		"create": c.Create(ctx, edgeTable()), "modify": c.Modify(ctx, edgeTable(), edgeTable()), "delete": c.Delete(ctx, edgeTable()),
	} {
		if !errors.As(err, &clash) {
			t.Errorf("%s over a foreign table: %v, want a ClashError", name, err)
		}
	}
	if f.Gen() != gen || f.Batches() != 0 {
		t.Errorf("the foreign table was written: generation %d→%d, %d batches", gen, f.Gen(), f.Batches())
	}
	if items, _ := f.ReadBack(); len(items) != 0 {
		t.Errorf("read back a foreign table as netagent's: %v", items)
	}
}

// TestCrashLeftTable: a create over a table netagent left (a crash before
// its state was saved) makes it what the intent says in one batch,
// keeping the rules it already has.
func TestCrashLeftTable(t *testing.T) {
	f := NewFakeKernel()
	left := edgeTable()
	left.Chains[0].Rules = left.Chains[0].Rules[:2]
	if err := f.ApplyBatch(0, []Op{{Kind: OpCreateTable, Table: *left}}); err != nil {
		t.Fatal(err)
	}
	before := dumped(t, f, left)
	c := &configurator{k: f}
	if err := c.Create(ctx, edgeTable()); err != nil {
		t.Fatal(err)
	}
	keptHandles(t, before, checkTable(t, f, edgeTable()), 2)
	if f.Batches() != 2 {
		t.Errorf("create over a left table took %d batches, want 1", f.Batches()-1)
	}
}

// TestAtomicFailure: a batch that fails, injected or at an op the kernel
// refuses midway, changes nothing and leaves the generation.
func TestAtomicFailure(t *testing.T) {
	old := edgeTable()
	f, c := created(t, old)
	gen := f.Gen()
	next := edgeTable()
	next.Chains[0].Policy = "accept"
	next.Sets[1].Elements = []string{"80"}
	f.FailBatch(1, unix.EIO)
	if err := c.Modify(ctx, old, next); !errors.Is(err, unix.EIO) {
		t.Errorf("injected failure: %v, want EIO", err)
	}
	checkTable(t, f, old)

	// A jump to a chain that is not there fails the batch at its last op.
	bad := edgeTable()
	bad.Chains[0].Policy = "accept"
	bad.Chains[0].Rules = append(bad.Chains[0].Rules, items.NftRule{Verdict: "jump", Target: "nowhere"})
	if err := c.Modify(ctx, old, bad); !errors.Is(err, unix.ENOENT) {
		t.Errorf("jump to a missing chain: %v, want ENOENT", err)
	}
	checkTable(t, f, old)
	// So does a create of a table that is there (NLM_F_EXCL).
	if err := f.ApplyBatch(0, []Op{{Kind: OpDeleteSet, Table: *old, Set: items.NftSet{Name: "mgmt"}}}); !errors.Is(err, unix.EBUSY) {
		t.Errorf("deleting a set a rule looks up: %v, want EBUSY", err)
	}
	if err := f.ApplyBatch(0, []Op{{Kind: OpDeleteTable, Table: *old}, {Kind: OpCreateTable, Table: *old}, {Kind: OpCreateTable, Table: *old}}); !errors.Is(err, unix.EEXIST) {
		t.Errorf("a second create of a table: %v, want EEXIST", err)
	}
	checkTable(t, f, old)
	if f.Gen() != gen {
		t.Errorf("failed batches changed the generation %d→%d", gen, f.Gen())
	}
}

// TestGenerationChanged: another writer between the configurator's dump
// and its batch fails the batch with ErrGenerationChanged, changing
// nothing; the retry (the next reconcile) converges.
func TestGenerationChanged(t *testing.T) {
	old := edgeTable()
	f, c := created(t, old)
	next := edgeTable()
	next.Chains[0].Policy = "accept"
	f.BeforeBatch(func() {
		if err := f.AddForeignTable("ip", "other"); err != nil {
			t.Error(err)
		}
	})
	err := c.Modify(ctx, old, next)
	if !errors.Is(err, ErrGenerationChanged) {
		t.Fatalf("modify with a writer in between: %v, want ErrGenerationChanged", err)
	}
	checkTable(t, f, old)
	if err := c.Modify(ctx, old, next); err != nil {
		t.Fatalf("retry: %v", err)
	}
	checkTable(t, f, next)
}

// TestModifyRandom: from every table of a random sequence to the next,
// Modify converges in one batch and keeps the handle of every rule the
// longest common subsequence of the two chains keeps.
func TestModifyRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	pool := []items.NftRule{
		{Protocol: "tcp", Dport: "22", Counter: true, Verdict: "accept"}, {Protocol: "udp", Dport: "53", Verdict: "accept"},
		{Saddr: "@a", Verdict: "drop"}, {Daddr: "10.0.0.0/8", Verdict: "accept"}, {IIfName: "lan0", Verdict: "jump", Target: "r"},
		{Protocol: "icmp", Verdict: "accept"}, {Counter: true}, {Sport: "@p", Protocol: "tcp", Verdict: "return"},
	}
	random := func() *items.NftTable {
		x := &items.NftTable{Family: "inet", Table: "netagent"}
		pick := func() []items.NftRule {
			var rs []items.NftRule
			for range rng.IntN(8) {
				rs = append(rs, pool[rng.IntN(len(pool))])
			}
			return rs
		}
		x.Sets = []items.NftSet{{Name: "a", Type: "ipv4_addr", Interval: rng.IntN(4) == 0}, {Name: "p", Type: "inet_service"}}
		for i := range 3 {
			if rng.IntN(2) == 0 {
				x.Sets[0].Elements = append(x.Sets[0].Elements, fmt.Sprintf("192.0.2.%d", i))
				x.Sets[1].Elements = append(x.Sets[1].Elements, fmt.Sprint(1000+i))
			}
		}
		x.Chains = append(x.Chains, items.NftChain{Name: "r", Rules: slices.DeleteFunc(pick(), func(r items.NftRule) bool { return r.Target == "r" })})
		if rng.IntN(3) > 0 {
			x.Chains = append(x.Chains, items.NftChain{Name: "in", Type: "filter", Hook: "input", Priority: prio(rng.IntN(2)), Policy: []string{"accept", "drop"}[rng.IntN(2)], Rules: pick()})
		}
		if rng.IntN(2) > 0 {
			x.Chains = append(x.Chains, items.NftChain{Name: "out", Type: "filter", Hook: "output", Priority: prio(0), Rules: pick()})
		}
		rng.Shuffle(len(x.Chains), func(i, j int) { x.Chains[i], x.Chains[j] = x.Chains[j], x.Chains[i] })
		return x
	}
	f := NewFakeKernel()
	c := &configurator{k: f}
	cur := random()
	if err := c.Create(ctx, cur); err != nil {
		t.Fatal(err)
	}
	for i := range 300 {
		next := random()
		before := dumped(t, f, cur)
		n := f.Batches()
		if err := c.Modify(ctx, cur, next); err != nil {
			t.Fatalf("step %d: %v\n from %+v\n to   %+v", i, err, cur, next)
		}
		after := checkTable(t, f, next)
		if f.Batches() > n+1 {
			t.Fatalf("step %d took %d batches", i, f.Batches()-n)
		}
		checkLCSKept(t, before, after, next)
		cur = next
	}
}

// checkLCSKept: in each chain whose hook stayed, as many rules kept
// their handles as the longest common subsequence of its rules.
func checkLCSKept(t *testing.T, before, after Dumped, next *items.NftTable) {
	t.Helper()
	bc := byName(before.Table.Canonical().Chains, chainName)
	for _, ac := range after.Table.Canonical().Chains {
		b, ok := bc[ac.Name]
		if !ok || !sameHook(*b, ac) || setsRecreated(before, after) {
			continue
		}
		kept := 0
		for _, h := range after.Handles[ac.Name] {
			if slices.Contains(before.Handles[ac.Name], h) {
				kept++
			}
		}
		if want := lcsLen(b.Rules, ac.Rules); kept != want {
			t.Fatalf("chain %s: %d rules kept their handles, want %d (the LCS)\n from %+v\n to   %+v", ac.Name, kept, want, b.Rules, ac.Rules)
		}
	}
}

func setsRecreated(before, after Dumped) bool {
	bs := byName(before.Table.Sets, setName)
	for _, s := range after.Table.Sets {
		if b, ok := bs[s.Name]; ok && !sameSet(*b, s) {
			return true
		}
	}
	return false
}

// lcsLen is the length of the longest common subsequence, by brute
// recursion with memo.
func lcsLen(a, b []items.NftRule) int {
	memo := map[[2]int]int{}
	var f func(i, j int) int
	f = func(i, j int) int {
		if i == len(a) || j == len(b) {
			return 0
		}
		if v, ok := memo[[2]int{i, j}]; ok {
			return v
		}
		v := max(f(i+1, j), f(i, j+1))
		if reflect.DeepEqual(a[i], b[j]) {
			v = max(v, 1+f(i+1, j+1))
		}
		memo[[2]int{i, j}] = v
		return v
	}
	return f(0, 0)
}

// TestRegisterFake: the configurator other packages' tests register over
// a FakeKernel writes into it, and the fake's ReadBack returns what was
// written, equal to the intent.
func TestRegisterFake(t *testing.T) {
	f := NewFakeKernel()
	reg := &reconciler.TypeRegistry{}
	if err := RegisterFake(reg, f); err != nil {
		t.Fatal(err)
	}
	want := edgeTable()
	if err := reg.Configurator(want).Create(ctx, want); err != nil {
		t.Fatal(err)
	}
	got, err := f.ReadBack()
	if err != nil || len(got) != 1 || !got[0].Equal(want) {
		t.Fatalf("read-back of the fake: %v, %v; want the created table", got, err)
	}
}
