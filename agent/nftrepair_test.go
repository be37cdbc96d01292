package agent

import (
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/netagent/netagent/agent/status"
	"github.com/netagent/netagent/configurators/nftables"
	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/items"
)

// nftDoc is one table of netagent's, an input chain with a rule and
// extra, in a file whose drift policy is drift ("": none said).
func nftDoc(drift, extra string) string {
	if drift != "" {
		drift = `, "drift": "` + drift + `"`
	}
	return `{"version": 1` + drift + `, "nftables": {"tables": [{"family": "inet", "name": "netagent",
  "chains": [{"name": "input", "type": "filter", "hook": "input", "priority": "filter", "policy": "drop",
    "rules": [{"ctState": ["established", "related"], "verdict": "accept"}` + extra + `]}]}]}}`
}

var nftRef = dg.ItemRef{Type: items.TypeNftTable, Name: "inet/netagent"}

const nftKey = "inet netagent"

// nftRig is a rig with an nftables table and a FakeWatcher, started and
// past the read-back that verifies its first reconcile.
func nftRig(t *testing.T, fileDrift string, opts ...rigOption) (*rig, *nftables.FakeWatcher) {
	t.Helper()
	w := nftables.NewFakeWatcher()
	opts = append([]rigOption{func(c *Config) { c.Nftables = w; c.DriftInterval = time.Hour }}, opts...)
	r := newRig(t, map[string]string{"10-uplink.json": uplinkDoc, "30-nft.json": nftDoc(fileDrift, "")}, opts...).start()
	if !r.k.has(nftRef) {
		t.Fatalf("the table was not created: ops %v", r.k.takeOps())
	}
	time.Sleep(2 * verifyDelay)
	synctest.Wait()
	r.k.takeOps()
	return r, w
}

// flush deletes the table behind the agent's back and says so, as the
// watcher would after `nft flush ruleset`.
func flush(r *rig, w *nftables.FakeWatcher) {
	r.k.tamper(func(o map[dg.ItemRef]dg.Item) { delete(o, nftRef) })
	w.Send(nftables.Event{Tables: []string{nftKey, "ip filter"}})
}

func (k *fakeKernel) nftReadCount() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.nftReads
}

// TestNftEventRepairsAFlushedTable: the watcher follows the intended
// table; an event naming it (a flush by someone else) reads the tables
// back alone and puts the table back within the debounce, an hour before
// the drift check.
func TestNftEventRepairsAFlushedTable(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r, w := nftRig(t, "")
		if got := w.Followed(); !slices.Equal(got, []string{nftKey}) {
			t.Errorf("followed %v, want [%s]", got, nftKey)
		}
		reads := r.k.nftReadCount()
		start := time.Now()
		flush(r, w)
		time.Sleep(time.Second)
		synctest.Wait()
		at := r.k.writesOf(nftRef)
		if ops := r.k.takeOps(); !slices.Equal(ops, []string{"create " + nftRef.String()}) {
			t.Fatalf("after the flush: ops %v", ops)
		}
		if d := at[0].Sub(start); d > 10*DefaultNftDebounce {
			t.Errorf("repaired after %v, want within %v", d, 10*DefaultNftDebounce)
		}
		if n := r.k.nftReadCount() - reads; n != 1 {
			t.Errorf("%d nftables read-backs, want 1", n)
		}
		if !slices.Contains(r.reasons(), reasonDrift) {
			t.Errorf("reasons %v", r.reasons())
		}
		// An event that changes nothing (a transaction of netagent's own
		// the watcher did not recognise) reads back and writes nothing.
		time.Sleep(2 * verifyDelay)
		synctest.Wait()
		w.Send(nftables.Event{Tables: []string{nftKey}})
		time.Sleep(time.Second)
		synctest.Wait()
		if ops := r.k.takeOps(); len(ops) != 0 {
			t.Errorf("an event with nothing changed: ops %v", ops)
		}
	})
}

// TestNftEventsCoalesce: a burst of events (a script of nft commands, a
// flush seen as many transactions) is one read-back and one repair.
func TestNftEventsCoalesce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r, w := nftRig(t, "")
		reads := r.k.nftReadCount()
		flush(r, w)
		for range 50 {
			time.Sleep(DefaultNftDebounce / 4)
			w.Send(nftables.Event{Tables: []string{nftKey}})
		}
		time.Sleep(time.Second)
		synctest.Wait()
		if ops := r.k.takeOps(); !slices.Equal(ops, []string{"create " + nftRef.String()}) {
			t.Errorf("after a burst: ops %v, want one create", ops)
		}
		// 50 events over 250 ms: the debounce's longest wait (200 ms)
		// cuts it in two at most.
		if n := r.k.nftReadCount() - reads; n < 1 || n > 2 {
			t.Errorf("%d read-backs for a burst of 51 events, want 1 or 2", n)
		}
	})
}

// TestNftReadBacksRateLimited: a writer that touches the table every 30
// ms for 3 s without changing it (each burst ends in the debounce's
// quiet) costs at most one read-back per nftMinInterval, and no write.
func TestNftReadBacksRateLimited(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r, w := nftRig(t, "")
		reads := r.k.nftReadCount()
		for range 100 {
			w.Send(nftables.Event{Tables: []string{nftKey}})
			time.Sleep(30 * time.Millisecond)
		}
		time.Sleep(time.Second)
		synctest.Wait()
		n := r.k.nftReadCount() - reads
		if limit := int(3*time.Second/nftMinInterval) + 2; n > limit || n < 3 {
			t.Errorf("%d read-backs for 100 events over 3 s, want at most %d (and some)", n, limit)
		}
		t.Logf("%d read-backs for 100 events 30 ms apart", n)
		if ops := r.k.takeOps(); len(ops) != 0 {
			t.Errorf("ops %v", ops)
		}
	})
}

// TestNftOwnWriteIsNoRepair: the events of netagent's own write (a
// changed intent), had the watcher not dropped them, find the table as
// written: the drift check that verifies the write runs at once, finds
// it kept, and nothing is written again.
func TestNftOwnWriteIsNoRepair(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r, w := nftRig(t, "")
		r.src.set("30-nft.json", nftDoc("", `, {"protocol": "tcp", "dport": "22", "verdict": "accept"}`))
		time.Sleep(500 * time.Millisecond)
		synctest.Wait()
		if ops := r.k.takeOps(); !slices.Equal(ops, []string{"modify " + nftRef.String()}) {
			t.Fatalf("the changed intent: ops %v", ops)
		}
		w.Send(nftables.Event{Tables: []string{nftKey}})
		time.Sleep(3 * verifyDelay)
		synctest.Wait()
		if ops := r.k.takeOps(); len(ops) != 0 {
			t.Errorf("netagent's own write's events: ops %v", ops)
		}
		if is := itemNamed(t, r.status(), nftRef); is.State != dg.StateCreated.String() {
			t.Errorf("the table: %+v", is)
		}
	})
}

// TestNftFightingWriterBacksOff: a writer that deletes the table each time
// netagent puts it back. Repaired at once twice (the drift, then the
// Verifier's one rewrite), the table is then held as not converging and
// written again only after a doubling backoff: over a minute of fighting
// every 50 ms, a dozen writes, not a thousand.
func TestNftFightingWriterBacksOff(t *testing.T) {
	for _, drift := range []time.Duration{time.Hour, -1} {
		t.Run("drift interval "+drift.String(), func(t *testing.T) { testNftFight(t, drift) })
	}
}

// testNftFight is TestNftFightingWriterBacksOff with that drift interval
// (-1: no drift checks, where the written items are never verified).
func testNftFight(t *testing.T, drift time.Duration) {
	synctest.Test(t, func(t *testing.T) {
		r, w := nftRig(t, "", func(c *Config) { c.RetryMax = 10 * time.Second; c.DriftInterval = drift })
		flush(r, w)
		for range 1200 { // one minute
			time.Sleep(50 * time.Millisecond)
			if r.k.has(nftRef) {
				flush(r, w)
			}
		}
		synctest.Wait()
		writes := len(r.k.writesOf(nftRef))
		t.Logf("%d writes of the table in a minute of a writer deleting it every 50 ms", writes)
		if writes < 3 || writes > 20 {
			t.Errorf("%d writes of the table in a minute of fighting, want a backoff's few (3..20)", writes)
		}
		if is := itemNamed(t, r.status(), nftRef); is.State != status.StateNotConverging {
			t.Errorf("the fought table: %+v, want not converging", is)
		}
		// The writer gives up: the backoff's next write puts the table back
		// (and the drift check that verifies it finds it kept).
		time.Sleep(10*time.Second + 2*verifyDelay)
		synctest.Wait()
		if !r.k.has(nftRef) {
			t.Error("the table is not back after the fight")
		}
		if is := itemNamed(t, r.status(), nftRef); drift > 0 && is.State != dg.StateCreated.String() {
			t.Errorf("after the fight: %+v, want created", is)
		}
	})
}

// TestNftFlushesApartAreNoFight: flushes seconds apart, each after the
// read-back that verifies the last repair (or, with drift checks off,
// a second after it), are each repaired at once: no fight, no backoff.
func TestNftFlushesApartAreNoFight(t *testing.T) {
	for _, drift := range []time.Duration{time.Hour, -1} {
		t.Run("drift interval "+drift.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				r, w := nftRig(t, "", func(c *Config) { c.DriftInterval = drift })
				for i := range 5 {
					start := time.Now()
					flush(r, w)
					time.Sleep(2 * verifyDelay)
					synctest.Wait()
					at := r.k.writesOf(nftRef)
					if len(at) != 1 || at[0].Sub(start) > 10*DefaultNftDebounce {
						t.Fatalf("flush %d: writes at %v after %v", i+1, at, start)
					}
					r.k.takeOps()
				}
				if is := itemNamed(t, r.status(), nftRef); is.State != dg.StateCreated.String() {
					t.Errorf("the table: %+v", is)
				}
			})
		})
	}
}

// TestNftEventReportPolicy: the table's file says "drift": "report". A
// flush is listed in status and not repaired; a Resync (events dropped)
// finds it again and still writes nothing.
func TestNftEventReportPolicy(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r, w := nftRig(t, "report")
		flush(r, w)
		time.Sleep(time.Second)
		synctest.Wait()
		w.Send(nftables.Event{Resync: true})
		time.Sleep(time.Second)
		synctest.Wait()
		if ops := r.k.takeOps(); len(ops) != 0 {
			t.Errorf("a report table: ops %v", ops)
		}
		st := r.status()
		if len(st.Drifted) != 1 || st.Drifted[0].Item != nftRef.String() {
			t.Errorf("drifted %+v, want the table", st.Drifted)
		}
	})
}

// TestNftResyncRepairs: after dropped notifications (ENOBUFS) the watcher
// sends a Resync, which checks every followed table.
func TestNftResyncRepairs(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r, w := nftRig(t, "")
		r.k.tamper(func(o map[dg.ItemRef]dg.Item) {
			tab := *o[nftRef].(*items.NftTable)
			tab.Chains = nil
			o[nftRef] = &tab
		})
		w.Send(nftables.Event{Resync: true})
		time.Sleep(time.Second)
		synctest.Wait()
		if ops := r.k.takeOps(); !slices.Equal(ops, []string{"modify " + nftRef.String()}) {
			t.Errorf("after a resync: ops %v", ops)
		}
	})
}
