package firewall

import (
	"context"
	"errors"
	"slices"
	"testing"

	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/internal/statefile"
	"github.com/netagent/netagent/items"
)

var testNs = statefile.NsIdentity{BootID: "boot-1", Netns: "na-test", NsID: "NS(1:2)"}

// newFakeMadeChains is newFakeChains with the record of made chains in dir.
func newFakeMadeChains(t *testing.T, dir string, ns statefile.NsIdentity) (*chainConfigurator, *FakeIPTables) {
	t.Helper()
	c, fb := newFakeChains(t)
	c.made = loadMade(dir, ns)
	return c, fb
}

// readBackOne reads the fake back, with intended as the hint, and returns
// the chain NA-FWD (nil if read-back does not count it as netagent's).
func readBackOne(t *testing.T, c *chainConfigurator, intended *items.IptablesChain) *items.IptablesChain {
	t.Helper()
	got, err := readBackChains(context.Background(), c.backends, c.records, c.made, dg.New("intended", intended))
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range got {
		if ch := it.(*items.IptablesChain); ch.Chain == "NA-FWD" {
			return ch
		}
	}
	return nil
}

// converge modifies what read-back found into intended, or creates it.
func converge(t *testing.T, c *chainConfigurator, intended *items.IptablesChain) error {
	t.Helper()
	if cur := readBackOne(t, c, intended); cur != nil {
		if cur.Equal(intended) {
			return nil
		}
		return c.Modify(context.Background(), cur, intended)
	}
	return c.Create(context.Background(), intended)
}

// A chain netagent made whose marker rule someone removed (iptables -F of
// the table, iptables -F of the chain, iptables -D of rule 1) is still
// netagent's: read back, repaired, marker and jump included. A fresh
// configurator (a restarted agent) knows it from the state directory.
func TestChainMarkRemovedByHandIsRepaired(t *testing.T) {
	want := fwdChain(ruleLAN, ruleEst)
	for _, c := range []struct {
		name string
		edit func(v *tableView)
	}{
		{"iptables -F", func(v *tableView) { v.chains["NA-FWD"], v.chains["FORWARD"] = nil, nil }},
		{"iptables -F NA-FWD", func(v *tableView) { v.chains["NA-FWD"] = nil }},
		{"iptables -D NA-FWD 1", func(v *tableView) { v.chains["NA-FWD"] = v.chains["NA-FWD"][1:] }},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			a, fb := newFakeMadeChains(t, dir, testNs)
			seedForward(fb)
			if err := a.Create(context.Background(), want); err != nil {
				t.Fatal(err)
			}
			c.edit(fb.tables["filter"])
			b, _ := newFakeMadeChains(t, dir, testNs)
			b.backends, b.records = a.backends, a.records // one state directory
			if err := converge(t, b, want); err != nil {
				t.Fatalf("repair: %v", err)
			}
			rules, _ := fb.tables["filter"].rules("NA-FWD")
			if len(rules) == 0 || !slices.Equal(rules[0], markerRule) && c.name != "iptables -D NA-FWD 1" {
				t.Errorf("NA-FWD after the repair: %q", rules)
			}
			if got := readBackOne(t, b, want); got == nil || !got.Equal(want) {
				t.Errorf("read back after the repair: %v, want %v", got, want)
			}
			if pos := fb.tables["filter"].jumps("FORWARD", "NA-FWD"); len(pos) != 1 {
				t.Errorf("jumps from FORWARD: %v", pos)
			}
		})
	}
}

// A chain without the mark is never taken when netagent did not make it
// in this namespace instance, or when it holds rules of someone else's;
// and once netagent deleted its chain, an empty one of that name someone
// makes later is someone else's.
func TestChainWithoutMarkStaysForeign(t *testing.T) {
	want := fwdChain(ruleLAN)
	foreign := func(fb *FakeIPTables, rules ...[]string) {
		v := newTableView()
		v.addChain("NA-FWD")
		for _, r := range rules {
			v.addRule("NA-FWD", r)
		}
		fb.tables["filter"] = v
	}
	refused := func(t *testing.T, c *chainConfigurator, what string) {
		t.Helper()
		if err := converge(t, c, want); !errors.Is(err, ErrNotOwned) {
			t.Errorf("%s: %v, want ErrNotOwned", what, err)
		}
		if err := c.Delete(context.Background(), want); !errors.Is(err, ErrNotOwned) {
			t.Errorf("%s: delete: %v, want ErrNotOwned", what, err)
		}
	}

	c, fb := newFakeMadeChains(t, t.TempDir(), testNs)
	foreign(fb)
	refused(t, c, "an empty chain netagent never made")

	dir := t.TempDir()
	c, fb = newFakeMadeChains(t, dir, testNs)
	if err := c.Create(context.Background(), want); err != nil {
		t.Fatal(err)
	}
	foreign(fb, ruleForeign)
	refused(t, c, "a chain netagent made, now with someone's rules")

	other := testNs
	other.NsID = "NS(1:3)" // the namespace was deleted and made again
	c, fb = newFakeMadeChains(t, dir, other)
	foreign(fb)
	refused(t, c, "an empty chain in a new namespace of the same name")

	c, fb = newFakeMadeChains(t, dir, testNs)
	foreign(fb)
	if err := c.Delete(context.Background(), want); err != nil {
		t.Fatalf("deleting netagent's flushed chain: %v", err)
	}
	foreign(fb)
	c, _ = newFakeMadeChains(t, dir, testNs)
	c.backends[items.FamilyIPv4] = fb
	refused(t, c, "an empty chain made after netagent deleted its own")
}
