package agent

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/netagent/netagent/agent/member"
	"github.com/netagent/netagent/agent/source"
	"github.com/netagent/netagent/agent/status"
	"github.com/netagent/netagent/fleet"
	"github.com/netagent/netagent/internal/memstore"
)

// The fleet tests: an agent over a fake kernel whose documents come from a
// memstore.Store through a StoreSource, its status written back by a
// StatusWriter, under synctest's clock.

var testLayout = fleet.Layout{Prefix: "/na"}

const testTTL = 3 * time.Second // renewals every second

// fleetRig is a rig whose source is a StoreSource for host h1 in group g1.
type fleetRig struct {
	*rig
	m   *memstore.Store
	src *member.StoreSource
	w   *member.StatusWriter
}

func newFleetRig(t *testing.T, m *memstore.Store, opts ...rigOption) *fleetRig {
	t.Helper()
	f := &fleetRig{m: m}
	var err error
	setup := func(c *Config) {
		f.src, err = member.NewStoreSource(member.StoreSourceConfig{Store: m, Layout: testLayout, Host: "h1", Groups: []string{"g1"}, Log: c.Log})
		if err != nil {
			t.Fatal(err)
		}
		f.w, err = member.NewStatusWriter(member.StatusWriterConfig{Store: m, Layout: testLayout, Host: "h1", Log: c.Log, TTL: testTTL, Source: f.src})
		if err != nil {
			t.Fatal(err)
		}
		c.Sources = []source.IntentSource{f.src}
		c.Report = f.w.Report
	}
	f.rig = newRig(t, nil, append([]rigOption{setup}, opts...)...)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); f.w.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	return f
}

// settle lets the watches, the debounce, a reconcile and a renewal pass.
func settle() {
	time.Sleep(testTTL/3 + 2*DefaultIntentDebounce)
	synctest.Wait()
}

// fleetStatus reads h1's status from the store.
func (f *fleetRig) fleetStatus(t *testing.T) (fleet.Status, bool) {
	t.Helper()
	e, ok := f.m.Get(testLayout.Status("h1"))
	if !ok {
		return fleet.Status{}, false
	}
	var st fleet.Status
	if err := json.Unmarshal(e.Value, &st); err != nil {
		t.Fatal(err)
	}
	return st, true
}

func agentCondition(t *testing.T, st status.Status, typ string) status.Condition {
	t.Helper()
	for _, c := range st.Conditions {
		if c.Type == typ {
			return c
		}
	}
	t.Fatalf("no condition %s in %+v", typ, st.Conditions)
	return status.Condition{}
}

// TestFleetPushToHostAndGroup: documents written to the host's key and to
// its group's reach the kernel; the status in the store says Ready with the
// revisions of both; a document removed from the store is withdrawn.
func TestFleetPushToHostAndGroup(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := memstore.New()
		hostRev := m.Put(testLayout.HostDoc("h1", "uplink.json"), uplinkDoc)
		m.Put(testLayout.HostDoc("h2", "other.json"), twoRoutesDoc) // another host's
		f := newFleetRig(t, m, func(c *Config) { c.StateDir = t.TempDir() })
		f.start()
		settle()
		if !f.k.has(addrRef) || f.k.has(route2Ref) {
			t.Fatalf("kernel after start: %v", f.k.takeOps())
		}
		groupRev := m.Put(testLayout.GroupDoc("g1", "routes.json"), routeDoc)
		settle()
		if !f.k.has(routeRef) {
			t.Fatalf("the group's document did not reach the kernel: %v", f.k.takeOps())
		}
		st, ok := f.fleetStatus(t)
		if !ok {
			t.Fatal("no status in the store")
		}
		want := map[string]int64{"hosts/h1/uplink.json": int64(hostRev), "groups/g1/routes.json": int64(groupRev)}
		if !st.Ready || st.Degraded || st.Host != "h1" || st.Version == 0 || st.Digest == "" || st.Converged.IsZero() ||
			len(st.Revisions) != 2 || st.Revisions["hosts/h1/uplink.json"] != want["hosts/h1/uplink.json"] ||
			st.Revisions["groups/g1/routes.json"] != want["groups/g1/routes.json"] {
			t.Errorf("status in the store %+v, want ready with revisions %v", st, want)
		}
		if local := f.status(); !local.Ready || local.Version != int(st.Version) {
			t.Errorf("local status ready %v version %d, store's %d", local.Ready, local.Version, st.Version)
		}
		// Bad input: rejected naming the document and the JSON path, the
		// last good version stays.
		m.Put(testLayout.GroupDoc("g1", "routes.json"), brokenDoc)
		settle()
		bad := fileNamed(t, f.status(), "groups/g1/routes.json")
		if bad.Conditions[0].Status || !slices.ContainsFunc(bad.Errors, func(e string) bool {
			return strings.Contains(e, "groups/g1/routes.json") && strings.Contains(e, "routes[0].to")
		}) {
			t.Errorf("a broken document: %+v", bad)
		}
		if !f.k.has(routeRef) {
			t.Error("a broken document withdrew its last good version")
		}
		if bst, _ := f.fleetStatus(t); bst.Ready || bst.Revisions["groups/g1/routes.json"] != int64(groupRev) ||
			bst.Version != st.Version || !bst.Converged.Equal(st.Converged) {
			t.Errorf("status with a broken document: %+v, want the last converged %+v", bst, st)
		}
		m.Del(testLayout.GroupDoc("g1", "routes.json"))
		settle()
		if f.k.has(routeRef) {
			t.Error("a document deleted from the store stays applied")
		}
		if st, _ := f.fleetStatus(t); st.Revisions["groups/g1/routes.json"] != 0 || !st.Ready {
			t.Errorf("status after the delete: %+v", st)
		}
	})
}

// TestFleetConflictNamesBothDocuments: an object defined by the host's
// document and by the group's is applied from neither, and each names
// the other.
func TestFleetConflictNamesBothDocuments(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := memstore.New()
		m.Put(testLayout.HostDoc("h1", "uplink.json"), uplinkDoc)
		m.Put(testLayout.HostDoc("h1", "routes.json"), routeDoc)
		m.Put(testLayout.GroupDoc("g1", "routes.json"), routeDoc)
		f := newFleetRig(t, m)
		f.start()
		settle()
		st := f.status()
		host, group := fileNamed(t, st, "hosts/h1/routes.json"), fileNamed(t, st, "groups/g1/routes.json")
		if !slices.ContainsFunc(host.Errors, func(e string) bool { return strings.Contains(e, "groups/g1/routes.json") }) ||
			!slices.ContainsFunc(group.Errors, func(e string) bool { return strings.Contains(e, "hosts/h1/routes.json") }) {
			t.Errorf("errors do not name both documents:\nhost %q\ngroup %q", host.Errors, group.Errors)
		}
		if f.k.has(routeRef) {
			t.Error("the route both define was applied")
		}
	})
}

// TestFleetStoreUnreachable: while the store cannot be reached, nothing
// is withdrawn and the agent is Degraded, IntentSourceUnreachable; a
// change another client made meanwhile is applied once it is back, and
// the agent is Ready again, in its status and in the store's.
func TestFleetStoreUnreachable(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := memstore.New()
		m.Put(testLayout.HostDoc("h1", "uplink.json"), uplinkDoc)
		m.Put(testLayout.GroupDoc("g1", "routes.json"), routeDoc)
		f := newFleetRig(t, m)
		f.start()
		settle()
		if !f.k.has(routeRef) {
			t.Fatal("not applied")
		}
		f.k.takeOps()
		m.SetDown(true)
		settle()
		st := f.status()
		if d := agentCondition(t, st, status.CondDegraded); !d.Status || d.Reason != status.ReasonSourceUnreachable || !strings.Contains(d.Message, "intent source unreachable") {
			t.Errorf("Degraded while the store is down: %+v", d)
		}
		if st.Ready {
			t.Error("ready while the store is down")
		}
		if ops := f.k.takeOps(); len(ops) > 0 || !f.k.has(routeRef) || !f.k.has(addrRef) {
			t.Errorf("the kernel changed while the store was down: %v", ops)
		}
		rev := m.Put(testLayout.GroupDoc("g1", "routes.json"), twoRoutesDoc) // by another client, elsewhere
		settle()
		if f.k.has(route2Ref) {
			t.Fatal("a change arrived through a store that is down")
		}
		m.SetDown(false)
		settle()
		if !f.k.has(route2Ref) {
			t.Fatal("the change made while the store was down was not applied")
		}
		st = f.status()
		if d := agentCondition(t, st, status.CondDegraded); d.Status || !st.Ready {
			t.Errorf("after the store came back: ready %v, degraded %+v", st.Ready, d)
		}
		fs, ok := f.fleetStatus(t)
		if !ok || !fs.Ready || fs.Degraded || fs.Revisions["groups/g1/routes.json"] != int64(rev) {
			t.Errorf("status in the store after the outage: %+v", fs)
		}
	})
}

// TestFleetCompactionRelists: a watch the store ends because its history
// was compacted is listed again, and the change it missed is applied.
func TestFleetCompactionRelists(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := memstore.New()
		m.Put(testLayout.HostDoc("h1", "uplink.json"), uplinkDoc)
		m.Put(testLayout.GroupDoc("g1", "routes.json"), routeDoc)
		f := newFleetRig(t, m)
		f.start()
		settle()
		m.Hold(true)
		rev := m.Put(testLayout.GroupDoc("g1", "routes.json"), twoRoutesDoc)
		m.Compact(context.Background(), rev)
		m.Hold(false)
		settle()
		if !f.k.has(route2Ref) {
			t.Fatal("the change before the compaction was not applied")
		}
		relisted := false
		for _, e := range f.hook.AllEntries() {
			relisted = relisted || e.Message == "the store ended the watch; listing again"
		}
		if !relisted {
			t.Error("no re-list logged")
		}
		if st := f.status(); !st.Ready {
			t.Errorf("not ready after the re-list: %v", st.Errors)
		}
	})
}

// TestFleetRestartWhileStoreDown: an agent started while the store is
// down applies the documents it last accepted from it (the state
// directory), and shows the store unreachable.
func TestFleetRestartWhileStoreDown(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := memstore.New()
		m.Put(testLayout.HostDoc("h1", "uplink.json"), uplinkDoc)
		m.Put(testLayout.GroupDoc("g1", "routes.json"), routeDoc)
		dir := t.TempDir()
		withState := func(c *Config) { c.StateDir = dir }
		f := newFleetRig(t, m, withState)
		f.start()
		settle()
		if !f.k.has(routeRef) {
			t.Fatal("not applied")
		}
		f.stop()
		m.SetDown(true)
		g := newFleetRig(t, m, withState) // a new fake kernel: nothing in it
		g.start()
		if !g.k.has(routeRef) || !g.k.has(addrRef) {
			t.Fatalf("the documents of the state directory were not applied: %v", g.k.takeOps())
		}
		settle()
		if d := agentCondition(t, g.status(), status.CondDegraded); !d.Status || d.Reason != status.ReasonSourceUnreachable {
			t.Errorf("Degraded: %+v", d)
		}
		if !g.k.has(routeRef) {
			t.Error("withdrawn while the store is down")
		}
		m.SetDown(false)
		settle()
		if st := g.status(); !st.Ready || !g.k.has(routeRef) {
			t.Errorf("after the store came back: ready %v, errors %v", st.Ready, st.Errors)
		}
	})
}

// TestStatusWriterLeaseExpiry: the status goes with its lease, and comes
// back under a new one at the next renewal; stopping the writer revokes
// it.
func TestStatusWriterLeaseExpiry(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := memstore.New()
		m.Put(testLayout.HostDoc("h1", "uplink.json"), uplinkDoc)
		f := newFleetRig(t, m)
		f.start()
		settle()
		first, ok := f.fleetStatus(t)
		if !ok || !first.Ready {
			t.Fatalf("status %+v", first)
		}
		m.ExpireLeases()
		if _, ok := f.fleetStatus(t); ok {
			t.Fatal("status outlived its lease")
		}
		settle()
		again, ok := f.fleetStatus(t)
		if !ok || !again.Ready || !again.Updated.After(first.Updated) {
			t.Errorf("status after the lease expired: %+v (ok %v)", again, ok)
		}
	})
}

// TestStoreSourcePrime: after Prime the first Load has the documents
// (no watch yet); with the store down it says unreachable instead of
// "not listed yet", and an agent started so applies the documents at its
// first reconcile.
func TestStoreSourcePrime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := memstore.New()
		m.Put(testLayout.HostDoc("h1", "uplink.json"), uplinkDoc)
		m.Put(testLayout.GroupDoc("g1", "routes.json"), routeDoc)
		m.SetDown(true)
		f := newFleetRig(t, m)
		if err := f.src.Prime(context.Background()); err == nil {
			t.Fatal("Prime succeeded with the store down")
		}
		if _, err := f.src.Load(); err == nil || !strings.Contains(err.Error(), member.ErrSourceUnreachable.Error()) {
			t.Errorf("Load after a failed Prime: %v", err)
		}
		m.SetDown(false)
		if err := f.src.Prime(context.Background()); err != nil {
			t.Fatal(err)
		}
		got, err := f.src.Load()
		if err != nil || len(got) != 2 {
			t.Fatalf("Load after Prime: %q %v", got, err)
		}
		f.start()
		if !f.k.has(routeRef) || !f.k.has(addrRef) {
			t.Errorf("the first reconcile did not apply the store's documents: %v", f.k.takeOps())
		}
		if got := f.reasons(); !slices.Equal(got, []string{reasonStart}) {
			t.Errorf("reconciles %v, want only the start's", got)
		}
	})
}

// TestFleetStatusKeepsLastConvergedVersion: a pushed document that the
// kernel refuses is applied (a new version) but not converged: the status
// in the store keeps the version and revisions it last converged to, not
// Ready, Degraded with the failure, until the item is created.
func TestFleetStatusKeepsLastConvergedVersion(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := memstore.New()
		m.Put(testLayout.HostDoc("h1", "uplink.json"), uplinkDoc)
		groupRev := m.Put(testLayout.GroupDoc("g1", "routes.json"), routeDoc)
		f := newFleetRig(t, m, func(c *Config) { c.StateDir = t.TempDir(); c.RetryBase = time.Hour })
		f.start()
		settle()
		good, _ := f.fleetStatus(t)
		if !good.Ready {
			t.Fatalf("status %+v", good)
		}
		f.k.failNext(route2Ref, 1)
		newRev := m.Put(testLayout.GroupDoc("g1", "routes.json"), twoRoutesDoc)
		settle()
		st, _ := f.fleetStatus(t)
		if st.Ready || !st.Degraded || st.Version != good.Version || st.Digest != good.Digest ||
			st.Revisions["groups/g1/routes.json"] != int64(groupRev) || !st.Converged.Equal(good.Converged) {
			t.Errorf("status with a failed item: %+v, want the last converged %+v", st, good)
		}
		if local := f.status(); local.Version <= int(good.Version) {
			t.Errorf("the refused push is no version: %d", local.Version)
		}
		time.Sleep(time.Hour) // the retry
		synctest.Wait()
		settle()
		st, _ = f.fleetStatus(t)
		if !st.Ready || st.Version <= good.Version || st.Revisions["groups/g1/routes.json"] != int64(newRev) || !st.Converged.After(good.Converged) {
			t.Errorf("status after the retry: %+v", st)
		}
	})
}
