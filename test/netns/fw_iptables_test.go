package netns_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/netagent/netagent/configurators/firewall"
	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/items"
	"github.com/netagent/netagent/reconciler"
)

const (
	fwV4 = items.FamilyIPv4
	fwV6 = items.FamilyIPv6
)

// fwPlaceForeign puts foreign rules and a foreign chain into the namespace,
// as another tool would, and returns a snapshot of everything to compare
// with at the end.
func (e *fwEnv) placeForeign() string {
	e.t.Helper()
	e.ipt(fwV4, "-A", "FORWARD", "-s", "10.9.9.9/32", "-j", "DROP")
	e.ipt(fwV4, "-N", "FOREIGN")
	e.ipt(fwV4, "-A", "FOREIGN", "-m", "comment", "--comment", "not netagent", "-j", "RETURN")
	e.ipt(fwV4, "-A", "OUTPUT", "-j", "FOREIGN")
	e.ipt(fwV4, "-t", "nat", "-A", "POSTROUTING", "-o", "other0", "-j", "MASQUERADE")
	e.ipt(fwV6, "-A", "FORWARD", "-s", "fd00:99::/64", "-j", "DROP")
	return e.snapshotS()
}

// snapshotS returns iptables -S of every table the tests use.
func (e *fwEnv) snapshotS() string {
	e.t.Helper()
	return e.ipt(fwV4, "-S") + e.ipt(fwV4, "-t", "nat", "-S") + e.ipt(fwV6, "-S")
}

// assertReadBackEquals checks that read-back returns exactly the chains of
// intended, each Equal to what was applied.
func (e *fwEnv) assertReadBackEquals(intended *dg.Graph) {
	e.t.Helper()
	cur := e.readBack(intended)
	for item := range intended.Items() {
		got, ok := cur.Get(dg.Ref(item))
		if !ok {
			e.t.Errorf("read-back lacks %v", dg.Ref(item))
			continue
		}
		if !got.Equal(item) {
			e.t.Errorf("read back %v\n  rules %q\napplied %v\n  rules %q", got, fwRulesOf(got), item, fwRulesOf(item))
		}
	}
	if cur.Len() != intended.Len() {
		e.t.Errorf("read back %d items, applied %d", cur.Len(), intended.Len())
	}
}

func fwRulesOf(item dg.Item) any {
	if c, ok := item.(*items.IptablesChain); ok {
		return c.Rules
	}
	return item.String()
}

func TestFwChainLifecycle(t *testing.T) {
	e := fwNewEnv(t)
	before := e.placeForeign()
	fwd, nat, fwd6, out := fwChains()
	intended := fwGraph(fwd, nat, fwd6, out)

	st := e.reconcile(nil, intended)
	if n := fwOps(st); n[reconciler.OpCreate] != 4 || len(st.OperationLog) != 4 {
		t.Fatalf("first apply ran:\n%s", st.OperationLog)
	}
	// Independently, with iptables -S: the jump is at its position after
	// the foreign rule, and the chains hold the rules in the kernel's form.
	if got := e.rulesS(fwV4, "filter", "FORWARD"); !slices.Equal(got, []string{
		"-s 10.9.9.9/32 -j DROP",
		"-m comment --comment netagent -j NA-FWD",
	}) {
		t.Errorf("FORWARD = %q", got)
	}
	if got := e.rulesS(fwV4, "filter", "NA-FWD"); !slices.Equal(got, []string{
		"-m comment --comment netagent",
		"-i br-lan -o uplink0 -j ACCEPT",
		"-m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT",
	}) {
		t.Errorf("NA-FWD = %q", got)
	}
	if got := e.rulesS(fwV4, "nat", "POSTROUTING"); !slices.Equal(got, []string{
		"-m comment --comment netagent -j NA-NAT",
		"-o other0 -j MASQUERADE",
	}) {
		t.Errorf("POSTROUTING = %q", got)
	}
	if got := e.rulesS(fwV4, "nat", "NA-NAT"); !slices.Equal(got, []string{
		"-m comment --comment netagent",
		"-s 192.168.50.0/24 -o uplink0 -j MASQUERADE",
	}) {
		t.Errorf("NA-NAT = %q", got)
	}
	if got := e.rulesS(fwV6, "filter", "NA-FWD6"); !slices.Equal(got, []string{
		"-m comment --comment netagent",
		"-i br-lan -o uplink0 -j ACCEPT",
		"-m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT",
		`-s fd00:50::1/128 -p tcp -m tcp --dport 22 -m comment --comment "ssh from the \"admin\" host" -j ACCEPT`,
	}) {
		t.Errorf("NA-FWD6 = %q", got)
	}
	if got := e.rulesS(fwV6, "filter", "FORWARD"); got[1] != "-m comment --comment netagent -j NA-FWD6" {
		t.Errorf("ip6tables FORWARD = %q", got)
	}
	e.assertReadBackEquals(intended)

	// Twice: nothing to do.
	if st2 := e.reconcile(st.NewCurrentState, intended); len(st2.OperationLog) != 0 {
		t.Errorf("second apply ran:\n%s", st2.OperationLog)
	}
	// A restarted agent: fresh configurators, current state read back.
	// Nothing planned, nothing written (counters would reset on a write).
	e.sendLoopback()
	saved4, saved6 := e.saveWithCounters(fwV4), e.saveWithCounters(fwV6)
	if !strings.Contains(saved4, "[3:87] -A NA-OUT -o lo -p udp") {
		t.Errorf("loopback traffic not counted:\n%s", saved4)
	}
	e.reg = e.newRegistry()
	if st3 := e.reconcile(e.readBack(intended), intended); len(st3.OperationLog) != 0 {
		t.Errorf("apply after restart ran:\n%s", st3.OperationLog)
	}
	if e.saveWithCounters(fwV4) != saved4 || e.saveWithCounters(fwV6) != saved6 {
		t.Error("apply after restart wrote to the kernel")
	}

	// Modify in place: new rules, the jump moves before the foreign rule.
	fwd2 := *fwd
	fwd2.Position = 1
	fwd2.Rules = [][]string{
		{"-m", "conntrack", "--ctstate", "ESTABLISHED,RELATED", "-j", "ACCEPT"},
		{"-i", "br-lan", "-o", "uplink0", "-j", "ACCEPT"},
		{"-i", "br-lan", "-p", "udp", "--dport", "53", "-j", "ACCEPT"},
	}
	intended2 := fwGraph(&fwd2, nat, fwd6, out)
	st = e.reconcile(e.readBack(intended2), intended2)
	if n := fwOps(st); n[reconciler.OpModify] != 1 || len(st.OperationLog) != 1 {
		t.Fatalf("modify ran:\n%s", st.OperationLog)
	}
	if got := e.rulesS(fwV4, "filter", "FORWARD"); !slices.Equal(got, []string{
		"-m comment --comment netagent -j NA-FWD",
		"-s 10.9.9.9/32 -j DROP",
	}) {
		t.Errorf("FORWARD after modify = %q", got)
	}
	if got := e.rulesS(fwV4, "filter", "NA-FWD"); !slices.Equal(got, []string{
		"-m comment --comment netagent",
		"-m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT",
		"-i br-lan -o uplink0 -j ACCEPT",
		"-i br-lan -p udp -m udp --dport 53 -j ACCEPT",
	}) {
		t.Errorf("NA-FWD after modify = %q", got)
	}
	if !strings.Contains(e.saveWithCounters(fwV4), "[3:87] -A NA-OUT -o lo -p udp") {
		t.Error("modifying NA-FWD rewrote NA-OUT")
	}
	e.assertReadBackEquals(intended2)
	if st2 := e.reconcile(st.NewCurrentState, intended2); len(st2.OperationLog) != 0 {
		t.Errorf("second modify ran:\n%s", st2.OperationLog)
	}

	// Delete everything: what was there before is there, untouched.
	st = e.reconcile(st.NewCurrentState, fwGraph())
	if n := fwOps(st); n[reconciler.OpDelete] != 4 {
		t.Fatalf("delete ran:\n%s", st.OperationLog)
	}
	if after := e.snapshotS(); after != before {
		t.Errorf("after delete:\n%s\nbefore:\n%s", after, before)
	}
	if got := e.readBack(nil); got.Len() != 0 {
		t.Errorf("read back after delete: %d items", got.Len())
	}
	// Deleting again succeeds and changes nothing.
	for _, c := range []*items.IptablesChain{&fwd2, nat, fwd6, out} {
		if err := e.cfg(c).Delete(e.ctx, c); err != nil {
			t.Errorf("second delete of %s: %v", c.Name(), err)
		}
	}
	if after := e.snapshotS(); after != before {
		t.Errorf("after second delete:\n%s", after)
	}
}

// TestFwChainCreateTwice calls the configurator directly: creating what
// exists as wanted writes nothing.
func TestFwChainCreateTwice(t *testing.T) {
	e := fwNewEnv(t)
	e.placeForeign()
	_, _, fwd6, out := fwChains()
	for _, c := range []*items.IptablesChain{fwd6, out} {
		if err := e.cfg(c).Create(e.ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	e.sendLoopback()
	saved4, saved6 := e.saveWithCounters(fwV4), e.saveWithCounters(fwV6)
	for _, c := range []*items.IptablesChain{fwd6, out} {
		if err := e.cfg(c).Create(e.ctx, c); err != nil {
			t.Fatal(err)
		}
		if err := e.cfg(c).Modify(e.ctx, c, c); err != nil {
			t.Fatal(err)
		}
	}
	if e.saveWithCounters(fwV4) != saved4 || e.saveWithCounters(fwV6) != saved6 {
		t.Error("creating the same chains again wrote to the kernel")
	}
}

// TestFwChainRecordLost: the record of the kernel's spelling is a cache.
// Without it, read-back shows the kernel's form, one apply rewrites the
// chain, and the next apply is empty again.
func TestFwChainRecordLost(t *testing.T) {
	e := fwNewEnv(t)
	_, _, fwd6, _ := fwChains()
	intended := fwGraph(fwd6)
	e.reconcile(nil, intended)
	if err := os.RemoveAll(filepath.Join(e.stateDir, "iptables")); err != nil {
		t.Fatal(err)
	}
	e.reg = e.newRegistry()
	cur := e.readBack(intended)
	got, _ := cur.Get(dg.Ref(fwd6))
	if rules := got.(*items.IptablesChain).Rules; rules[2][1] != "fd00:50::1/128" {
		t.Errorf("read back without record: %q, want the kernel's form", rules)
	}
	st := e.reconcile(cur, intended)
	if len(st.OperationLog) != 1 || st.OperationLog[0].Op != reconciler.OpModify {
		t.Fatalf("apply ran:\n%s", st.OperationLog)
	}
	if st := e.reconcile(e.readBack(intended), intended); len(st.OperationLog) != 0 {
		t.Errorf("apply after relearning ran:\n%s", st.OperationLog)
	}
}

// TestFwChainClash: a chain of the same name that netagent did not create
// is refused, never taken over or deleted.
func TestFwChainClash(t *testing.T) {
	e := fwNewEnv(t)
	e.placeForeign()
	before := e.snapshotS()
	clash := &items.IptablesChain{Family: fwV4, Table: "filter", Chain: "FOREIGN", JumpFrom: "FORWARD",
		Rules: [][]string{{"-j", "ACCEPT"}}}
	st := reconciler.New(e.reg).Reconcile(e.ctx, nil, fwGraph(clash))
	if !errors.Is(st.Err, firewall.ErrNotOwned) {
		t.Fatalf("reconcile err = %v, want ErrNotOwned", st.Err)
	}
	if err := e.cfg(clash).Modify(e.ctx, clash, clash); !errors.Is(err, firewall.ErrNotOwned) {
		t.Errorf("modify err = %v", err)
	}
	if err := e.cfg(clash).Delete(e.ctx, clash); !errors.Is(err, firewall.ErrNotOwned) {
		t.Errorf("delete err = %v", err)
	}
	if after := e.snapshotS(); after != before {
		t.Errorf("foreign chain changed:\n%s\nwas:\n%s", after, before)
	}
	if got := e.readBack(nil); got.Len() != 0 {
		t.Errorf("read back foreign chains: %v", got.Refs())
	}
}

// TestFwChainQuoting: arguments with spaces, quotes and backslashes reach
// the kernel as single arguments and read back equal.
func TestFwChainQuoting(t *testing.T) {
	e := fwNewEnv(t)
	c := &items.IptablesChain{Family: fwV4, Table: "filter", Chain: "NA-QUOTE", Rules: [][]string{
		{"-m", "comment", "--comment", `spaces, "double" and 'single' quotes, a \ backslash`, "-j", "ACCEPT"},
		{"-m", "comment", "--comment", "", "-j", "RETURN"},
	}}
	intended := fwGraph(c)
	e.reconcile(nil, intended)
	got := e.rulesS(fwV4, "filter", "NA-QUOTE")
	if want := `-m comment --comment "spaces, \"double\" and \'single\' quotes, a \\ backslash" -j ACCEPT`; len(got) != 3 || got[1] != want {
		t.Errorf("NA-QUOTE = %q\nwant rule %s", got, want)
	}
	e.assertReadBackEquals(intended)
}

// TestFwChainPositions: a position past the end of the built-in chain
// appends; a chain may have no jump; both read back equal.
func TestFwChainPositions(t *testing.T) {
	e := fwNewEnv(t)
	e.placeForeign()
	far := &items.IptablesChain{Family: fwV4, Table: "filter", Chain: "NA-FAR", JumpFrom: "FORWARD", Position: 5,
		Rules: [][]string{{"-j", "RETURN"}}}
	none := &items.IptablesChain{Family: fwV4, Table: "filter", Chain: "NA-NONE", Rules: [][]string{{"-j", "RETURN"}}}
	intended := fwGraph(far, none)
	st := e.reconcile(nil, intended)
	if got := e.rulesS(fwV4, "filter", "FORWARD"); len(got) != 2 || got[1] != "-m comment --comment netagent -j NA-FAR" {
		t.Errorf("FORWARD = %q", got)
	}
	e.assertReadBackEquals(intended)
	if st := e.reconcile(st.NewCurrentState, intended); len(st.OperationLog) != 0 {
		t.Errorf("second apply ran:\n%s", st.OperationLog)
	}
	// A foreign rule appended after the jump: the jump is no longer at the
	// end, so one modify moves it back there.
	e.ipt(fwV4, "-A", "FORWARD", "-j", "ACCEPT")
	st = e.reconcile(e.readBack(intended), intended)
	if len(st.OperationLog) != 1 {
		t.Fatalf("re-apply ran:\n%s", st.OperationLog)
	}
	if got := e.rulesS(fwV4, "filter", "FORWARD"); len(got) != 3 || got[2] != "-m comment --comment netagent -j NA-FAR" {
		t.Errorf("FORWARD = %q", got)
	}
}

// TestFwChainAtomicModify: while a chain is modified 50 times, a reader
// polling the whole table never sees the jump point at a missing chain, nor
// the chain with a mix of two generations or a missing rule.
func TestFwChainAtomicModify(t *testing.T) {
	e := fwNewEnv(t)
	const nRules, nModifies = 20, 50
	gen := func(g int) *items.IptablesChain {
		c := &items.IptablesChain{Family: fwV4, Table: "filter", Chain: "NA-ATOM", JumpFrom: "FORWARD", Position: 1 + g%2}
		for i := range nRules {
			c.Rules = append(c.Rules, []string{"-s", fmt.Sprintf("10.%d.%d.0/24", g%200, i),
				"-m", "comment", "--comment", fmt.Sprintf("gen %d", g), "-j", "ACCEPT"})
		}
		return c
	}
	e.ipt(fwV4, "-A", "FORWARD", "-j", "LOG")
	cfg := e.cfg(gen(0))
	if err := cfg.Create(e.ctx, gen(0)); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	var polls int
	var bad []string
	wg.Add(1)
	go func() {
		defer wg.Done()
		deadline := time.Now().Add(2 * time.Minute)
		for time.Now().Before(deadline) {
			select {
			case <-done:
				return
			default:
			}
			out, err := fwRunIn(e.tgt, "iptables-save", "-t", "filter")
			if err != nil {
				bad = append(bad, "iptables-save: "+err.Error())
				return
			}
			polls++
			if msg := fwCheckAtomic(out, nRules); msg != "" {
				bad = append(bad, msg)
			}
		}
	}()
	for g := 1; g <= nModifies; g++ {
		if err := cfg.Modify(e.ctx, gen(g-1), gen(g)); err != nil {
			t.Error(err)
			break
		}
	}
	close(done)
	wg.Wait()
	t.Logf("%d snapshots of the table during %d modifies", polls, nModifies)
	if len(bad) > 0 {
		t.Fatalf("%d torn snapshots, first: %s", len(bad), bad[0])
	}
	if polls < 5 {
		t.Errorf("only %d snapshots: the reader did not overlap the writes", polls)
	}
}

// fwCheckAtomic checks one iptables-save snapshot: exactly one jump to
// NA-ATOM, the chain declared, the marker first, then nRules rules of one
// generation.
func fwCheckAtomic(save string, nRules int) string {
	var jumps, rules int
	declared := false
	gens := map[string]bool{}
	marker := false
	for _, line := range strings.Split(save, "\n") {
		switch {
		case line == ":NA-ATOM - [0:0]":
			declared = true
		case line == "-A FORWARD -m comment --comment netagent -j NA-ATOM":
			jumps++
		case line == "-A NA-ATOM -m comment --comment netagent":
			marker = rules == 0
		case strings.HasPrefix(line, "-A NA-ATOM "):
			rules++
			_, g, _ := strings.Cut(line, "--comment ")
			gens[g] = true
		}
	}
	if jumps != 1 || !declared || !marker || rules != nRules || len(gens) != 1 {
		return fmt.Sprintf("jumps=%d declared=%v marker=%v rules=%d generations=%d:\n%s",
			jumps, declared, marker, rules, len(gens), save)
	}
	return ""
}

// TestFwChainBatch drives many chains of both families and several tables
// through the reconciler at once (one ApplyBatch per wave); one bad chain
// fails alone.
func TestFwChainBatch(t *testing.T) {
	e := fwNewEnv(t)
	before := e.placeForeign()
	var all []dg.Item
	for i := range 12 {
		fam, table, from := fwV4, "filter", "FORWARD"
		switch i % 3 {
		case 1:
			table, from = "nat", "POSTROUTING"
		case 2:
			fam = fwV6
		}
		all = append(all, &items.IptablesChain{Family: fam, Table: table, Chain: fmt.Sprintf("NA-B%02d", i),
			JumpFrom: from, Position: 1 + i/3, Rules: [][]string{
				{"-m", "comment", "--comment", fmt.Sprintf("chain %d", i), "-j", "RETURN"},
			}})
	}
	bad := &items.IptablesChain{Family: fwV4, Table: "filter", Chain: "NA-BAD", JumpFrom: "NOSUCHCHAIN"}
	st := reconciler.New(e.reg).Reconcile(e.ctx, nil, fwGraph(append(all, bad)...))
	var failed []string
	for _, op := range st.OperationLog {
		if op.Err != nil {
			failed = append(failed, op.Ref.Name)
		}
	}
	if !slices.Equal(failed, []string{"ipv4/filter/NA-BAD"}) {
		t.Fatalf("failed ops %q:\n%s", failed, st.OperationLog)
	}
	if e.chainExists(fwV4, "filter", "NA-BAD") {
		t.Error("the failed chain was left behind")
	}
	intended := fwGraph(all...)
	e.assertReadBackEquals(intended)
	// Jump positions: chain i sits at 1+i/3 in its built-in chain.
	if got := e.rulesS(fwV4, "nat", "POSTROUTING"); !slices.Equal(got[:4], []string{
		"-m comment --comment netagent -j NA-B01", "-m comment --comment netagent -j NA-B04",
		"-m comment --comment netagent -j NA-B07", "-m comment --comment netagent -j NA-B10",
	}) {
		t.Errorf("POSTROUTING = %q", got)
	}
	st = e.reconcile(e.readBack(intended), intended)
	if len(st.OperationLog) != 0 {
		t.Errorf("second apply ran:\n%s", st.OperationLog)
	}
	e.reconcile(st.NewCurrentState, fwGraph())
	if after := e.snapshotS(); after != before {
		t.Errorf("after delete:\n%s\nbefore:\n%s", after, before)
	}
}
