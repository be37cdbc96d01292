package netns_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/netagent/netagent/items"
	"github.com/vishvananda/netlink"
)

// l3Neighs returns `ip -j neigh show` of both families.
func (e *l3Env) l3Neighs() []map[string]any {
	return append(e.ipJSON("-4", "neigh", "show"), e.ipJSON("-6", "neigh", "show")...)
}

func (e *l3Env) mustNeigh(kv ...string) map[string]any {
	e.t.Helper()
	got := l3Find(e.l3Neighs(), kv...)
	if len(got) != 1 {
		e.t.Fatalf("ip neigh: %d entries with %v, want 1", len(got), kv)
	}
	return got[0]
}

func l3NeighborSamples() []*items.Neighbor {
	return []*items.Neighbor{
		{Dev: "up0", IP: l3Addr("10.0.0.5"), MAC: l3MAC("02:00:00:00:00:05")},
		{Dev: "up0", IP: l3Addr("2001:db8::5"), MAC: l3MAC("02:00:00:00:00:06")},
		{Dev: "peer0", IP: l3Addr("10.0.0.6"), MAC: l3MAC("02:00:00:00:00:07")},
	}
}

// mustPermanent checks an `ip -j neigh` entry: ours, permanent, this MAC.
func (e *l3Env) mustOurNeigh(n *items.Neighbor) {
	e.t.Helper()
	got := e.mustNeigh("dst", n.IP.String(), "dev", n.Dev)
	if l3Str(got["lladdr"]) != n.MAC.String() || l3Str(got["state"]) != `["PERMANENT"]` || l3Str(got["protocol"]) != "211" {
		e.t.Errorf("ip neigh for %s: %v, want lladdr %s, PERMANENT, protocol 211", n.Name(), got, n.MAC)
	}
}

func TestL3NeighborCreateModifyDelete(t *testing.T) {
	e := l3NewEnv(t)
	neighs := l3NeighborSamples()
	for _, n := range neighs {
		e.create(n)
		e.mustOurNeigh(n)
	}
	e.mustReadBack(l3Items(neighs)...)

	events := e.l3WatchNeighs()
	for _, n := range neighs {
		e.create(n) // twice
	}
	events.mustBeQuiet(t, "creating existing entries again")

	// A new MAC, in place.
	for i, n := range neighs {
		m := *n
		m.MAC = l3MAC(fmt.Sprintf("02:00:00:00:01:%02x", i))
		e.modify(n, &m)
		neighs[i] = &m
		e.mustOurNeigh(&m)
	}
	e.mustReadBack(l3Items(neighs)...)
	events = e.l3WatchNeighs()
	e.modify(l3NeighborSamples()[0], neighs[0]) // the kernel already has it
	events.mustBeQuiet(t, "modifying an entry the kernel already has")

	for _, n := range neighs {
		e.delete(n)
		e.delete(n) // twice
	}
	if got := l3Find(e.l3Neighs(), "protocol", "211"); len(got) != 0 {
		t.Errorf("entries of protocol 211 left: %v", got)
	}
	e.mustReadBackNone(items.TypeNeighbor)
}

func TestL3NeighborForeignUntouched(t *testing.T) {
	e := l3NewEnv(t)
	e.ip("neigh", "add", "10.0.0.50", "lladdr", "02:00:00:00:00:50", "dev", "up0", "nud", "permanent")
	e.ip("-6", "neigh", "add", "2001:db8::50", "lladdr", "02:00:00:00:00:51", "dev", "up0", "nud", "permanent")
	e.ip("neigh", "add", "10.0.0.52", "lladdr", "02:00:00:00:00:52", "dev", "up0", "nud", "noarp")
	before := fmt.Sprint(e.l3Neighs())

	clashes := []*items.Neighbor{
		{Dev: "up0", IP: l3Addr("10.0.0.50"), MAC: l3MAC("02:00:00:00:00:99")},
		{Dev: "up0", IP: l3Addr("10.0.0.50"), MAC: l3MAC("02:00:00:00:00:50")},
		{Dev: "up0", IP: l3Addr("2001:db8::50"), MAC: l3MAC("02:00:00:00:00:51")},
		{Dev: "up0", IP: l3Addr("10.0.0.52"), MAC: l3MAC("02:00:00:00:00:52")},
	}
	for _, n := range clashes {
		l3MustNotOwn(t, "create "+n.Name(), e.cfg(n).Create(e.ctx, n))
		l3MustNotOwn(t, "modify "+n.Name(), e.cfg(n).Modify(e.ctx, n, n))
		l3MustNotOwn(t, "delete "+n.Name(), e.cfg(n).Delete(e.ctx, n))
	}
	// The same address on another interface is another entry.
	ours := &items.Neighbor{Dev: "peer0", IP: l3Addr("10.0.0.50"), MAC: l3MAC("02:00:00:00:00:53")}
	e.create(ours)
	e.mustReadBack(ours)
	e.delete(ours)
	e.mustReadBackNone(items.TypeNeighbor)
	if after := fmt.Sprint(e.l3Neighs()); after != before {
		t.Errorf("foreign entries changed:\nbefore %s\nafter  %s", before, after)
	}
}

// A learned (dynamic) entry is the kernel's cache, not someone's object:
// our permanent entry replaces it.
func TestL3NeighborReplacesLearnedEntry(t *testing.T) {
	e := l3NewEnv(t)
	e.ip("neigh", "add", "10.0.0.60", "lladdr", "02:00:00:00:00:60", "dev", "up0", "nud", "stale")
	n := &items.Neighbor{Dev: "up0", IP: l3Addr("10.0.0.60"), MAC: l3MAC("02:00:00:00:00:61")}
	e.create(n)
	e.mustOurNeigh(n)
	e.mustReadBack(n)
	e.delete(n)
	if got := l3Find(e.l3Neighs(), "dst", "10.0.0.60"); len(got) != 0 {
		t.Errorf("entry left after delete: %v", got)
	}
	// Ours gone and a learned entry in its place: deleting ours is done,
	// and the learned entry stays.
	e.create(n)
	e.ip("neigh", "del", "10.0.0.60", "dev", "up0")
	e.ip("neigh", "add", "10.0.0.60", "lladdr", "02:00:00:00:00:62", "dev", "up0", "nud", "reachable")
	e.delete(n)
	e.mustNeigh("dst", "10.0.0.60", "lladdr", "02:00:00:00:00:62")
}

// l3NeighEvents watches the namespace's neighbour notifications.
type l3NeighEvents struct {
	ch   chan netlink.NeighUpdate
	done chan struct{}
}

func (e *l3Env) l3WatchNeighs() *l3NeighEvents {
	e.t.Helper()
	ev := &l3NeighEvents{ch: make(chan netlink.NeighUpdate, 256), done: make(chan struct{})}
	ns := e.tgt.NsHandle()
	if err := netlink.NeighSubscribeWithOptions(ev.ch, ev.done, netlink.NeighSubscribeOptions{Namespace: &ns}); err != nil {
		e.t.Fatalf("subscribing to neighbours: %v", err)
	}
	e.t.Cleanup(func() { l3Close(ev.done) })
	return ev
}

func (ev *l3NeighEvents) mustBeQuiet(t *testing.T, what string) {
	t.Helper()
	deadline := time.After(200 * time.Millisecond)
	for {
		select {
		case u := <-ev.ch:
			if u.State&netlink.NUD_PERMANENT != 0 {
				t.Errorf("%s: the kernel reported a change of a permanent entry: %v", what, u.Neigh)
			}
		case <-deadline:
			l3Close(ev.done)
			return
		}
	}
}
