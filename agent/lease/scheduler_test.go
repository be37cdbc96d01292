package lease

import (
	"context"
	"errors"
	"net/netip"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/netagent/netagent/configurators/dhcp"
	"github.com/netagent/netagent/configurators/dhcp6"
	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/items"
	"github.com/netagent/netagent/items/lease4"
)

// client4 answers each exchange with what answers gives (a lease or an
// error), and tells calls of each with the options it was given; with
// answers empty it hangs until its context ends.
type client4 struct {
	calls   chan string
	opts    chan dhcp.Options
	answers chan func(l *lease4.Lease) (*lease4.Lease, error)
}

func newClient4() *client4 {
	return &client4{calls: make(chan string, 8), opts: make(chan dhcp.Options, 8),
		answers: make(chan func(*lease4.Lease) (*lease4.Lease, error), 8)}
}

func (c *client4) Renew(ctx context.Context, l *lease4.Lease, o dhcp.Options) (*lease4.Lease, error) {
	return c.answer(ctx, dhcp.ObtainedRenew, l, o)
}

func (c *client4) Rebind(ctx context.Context, l *lease4.Lease, o dhcp.Options) (*lease4.Lease, error) {
	return c.answer(ctx, dhcp.ObtainedRebind, l, o)
}

func (c *client4) answer(ctx context.Context, how string, l *lease4.Lease, o dhcp.Options) (*lease4.Lease, error) {
	c.calls <- how
	c.opts <- o
	select {
	case f := <-c.answers:
		return f(l)
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// rig4 is a DHCPv4 scheduler over a book, the graphs it reads, the
// reports of its exchanges and the events it counted.
type rig4 struct {
	s       *Scheduler[*lease4.Lease]
	book    *dhcp.Leases
	c       *client4
	g       Graphs
	reports chan Report
	events  []string
}

func newRig4(t *testing.T, dir string) *rig4 { return newRig4With(t, dir, newClient4()) }

// newRig4With is newRig4 with client c (nil: none).
func newRig4With(t *testing.T, dir string, c *client4) *rig4 {
	r := &rig4{book: &dhcp.Leases{}, c: c, reports: make(chan Report),
		g: Graphs{Intended: dg.New("intended"), Current: dg.New("current")}}
	stop := make(chan struct{})
	t.Cleanup(func() { close(stop) })
	f := V4{}
	if c != nil {
		f.Client = c
	}
	r.s = New[*lease4.Lease](f, r.book, Config{StateDir: dir, Reports: r.reports, Stop: stop,
		Observe: func(ifname, event string) { r.events = append(r.events, ifname+" "+event) }})
	return r
}

// take hands the next report back to the scheduler.
func (r *rig4) take() Changes { return (<-r.reports).Take(r.g) }

func lease4At(name string, at time.Time) *lease4.Lease {
	return &lease4.Lease{Interface: name, Address: netip.MustParsePrefix("10.77.0.100/24"),
		Server: netip.MustParseAddr("10.77.0.1"), LeaseTime: 2 * time.Minute, Renew: time.Minute,
		Rebind: 105 * time.Second, Acquired: at, Obtained: dhcp.ObtainedDiscover}
}

// A lease acquired is in use and due at T1; the renewal sends what the
// intended lease item asks; an unanswered one keeps the lease held, says
// why in status and is tried again at RetryAt; a NAK lets the lease go:
// its item is to be acquired afresh.
func TestSchedulerRenewsRetriesAndRestartsOnNAK(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig4(t, "")
		r.g.Intended.Put(&items.DHCP4Lease{Dev: "up0", Hostname: "edge1"})
		l := lease4At("up0", time.Now())
		r.book.Set(l)
		if c := r.s.Sync(r.g); !c.Rerender || r.s.Used()["up0"] != l || !r.s.Next().Equal(l.RenewAt()) {
			t.Fatalf("after the acquisition: %+v, used %v, next %v", c, r.s.Used(), r.s.Next())
		}
		time.Sleep(time.Until(r.s.Next()))
		r.s.Due(context.Background(), r.g)
		if how, o := <-r.c.calls, <-r.c.opts; how != dhcp.ObtainedRenew || o.Hostname != "edge1" {
			t.Errorf("at T1: %s with %+v, want a renewal as edge1", how, o)
		}
		if !r.s.Next().Equal(l.Expires()) {
			t.Errorf("with the renewal in flight the lease is next due at %v, want its expiry", r.s.Next())
		}
		r.c.answers <- func(*lease4.Lease) (*lease4.Lease, error) { return nil, errors.New("i/o timeout") }
		if c := r.take(); c != (Changes{}) {
			t.Errorf("an unanswered renewal asks %+v", c)
		}
		if st := r.s.Statuses(); len(st) != 1 || !st[0].Held || st[0].LastError != "i/o timeout" {
			t.Errorf("status %+v", st)
		}
		if want := RetryAt(l, true, time.Now()); !r.s.Next().Equal(want) {
			t.Errorf("tried again at %v, want %v", r.s.Next(), want)
		}
		time.Sleep(time.Until(r.s.Next()))
		r.s.Due(context.Background(), r.g)
		<-r.c.calls
		r.c.answers <- func(*lease4.Lease) (*lease4.Lease, error) { return nil, dhcp.ErrNAK }
		if c := r.take(); !c.Rerender || !c.Reconcile {
			t.Errorf("a NAK asks %+v", c)
		}
		if refs := r.s.TakeRestarts(); !slices.Equal(refs, []dg.ItemRef{items.DHCP4LeaseRef("up0")}) || r.book.Get("up0") != nil {
			t.Errorf("after the NAK: restarts %v, book %v", refs, r.book.Get("up0"))
		}
		if want := []string{"up0 acquired", "up0 refused"}; !slices.Equal(r.events, want) {
			t.Errorf("events %v, want %v", r.events, want)
		}
	})
}

// A renewal that hangs past the lease's end does not keep the lease: it
// expires on time, and the exchange's late outcome is ignored.
func TestSchedulerExpiresWhileTheExchangeHangs(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig4(t, "")
		l := lease4At("up0", time.Now())
		r.book.Set(l)
		r.s.Sync(r.g)
		time.Sleep(time.Until(l.RenewAt()))
		r.s.Due(context.Background(), r.g)
		<-r.c.calls
		time.Sleep(time.Until(r.s.Next()))
		if c := r.s.Due(context.Background(), r.g); !c.Reconcile || len(r.s.Used()) != 0 {
			t.Fatalf("at the expiry: %+v, used %v", c, r.s.Used())
		}
		if c := r.take(); c != (Changes{}) || len(r.s.Used()) != 0 { // it ended at T2, taken in after the expiry
			t.Errorf("the late outcome asks %+v, used %v", c, r.s.Used())
		}
		if want := []string{"up0 acquired", "up0 expired"}; !slices.Equal(r.events, want) {
			t.Errorf("events %v, want %v", r.events, want)
		}
	})
}

// Without a client a lease due at T1 is not extended: it is next due at
// its expiry, and ends then.
func TestSchedulerWithoutClientEnds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig4With(t, "", nil)
		l := lease4At("up0", time.Now())
		r.book.Set(l)
		r.s.Sync(r.g)
		time.Sleep(time.Until(l.RenewAt()))
		if c := r.s.Due(context.Background(), r.g); c != (Changes{}) || !r.s.Next().Equal(l.Expires()) {
			t.Errorf("at T1 without a client: %+v, next %v", c, r.s.Next())
		}
	})
}

// A DHCPv4 lease the state directory keeps is in use from the start but
// not held (its item asks the server again), due at its expiry; it stays
// in use while its item is in the current state and another lease comes,
// and goes with its item.
func TestSchedulerKeptLease4(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		dir := t.TempDir()
		kept := lease4At("up0", time.Now())
		if err := dhcp.SaveLease(dir, kept); err != nil {
			t.Fatal(err)
		}
		r := newRig4(t, dir)
		r.s.Seed(time.Now())
		if st := r.s.Statuses(); len(st) != 1 || st[0].Held || !r.s.Next().Equal(kept.Expires()) {
			t.Fatalf("seeded: %+v, next %v", st, r.s.Next())
		}
		r.g.Current.Put(&items.DHCP4Lease{Dev: "up0"})
		r.book.Set(lease4At("up1", time.Now()))
		if r.s.Sync(r.g); len(r.s.Used()) != 2 {
			t.Errorf("another lease came: used %v, want the kept one too", r.s.Used())
		}
		r.g.Current.Delete(items.DHCP4LeaseRef("up0"))
		r.book.Drop("up1")
		if c := r.s.Sync(r.g); !c.Rerender || len(r.s.Used()) != 0 {
			t.Errorf("the kept lease's item went: %+v, used %v", c, r.s.Used())
		}
	})
}

// A DHCPv6 lease the state directory keeps is held at start and due at
// T1; it is forgotten (book and state directory) once neither graph has
// its item: the intent no longer asks for DHCPv6 there.
func TestSchedulerKeptLease6(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		dir := t.TempDir()
		l := &dhcp6.Lease{Interface: "up0", Address: netip.MustParseAddr("2001:db8::5"), Preferred: time.Hour,
			Valid: 2 * time.Hour, Acquired: time.Now()}
		if err := dhcp6.SaveLease(dir, l); err != nil {
			t.Fatal(err)
		}
		book := &dhcp6.Leases{}
		s := New[*dhcp6.Lease](V6{}, book, Config{StateDir: dir})
		s.Seed(time.Now())
		if st := s.Statuses(); len(st) != 1 || !st[0].Held || st[0].Address != "2001:db8::5/128" || !s.Next().Equal(st[0].RenewAt) {
			t.Fatalf("seeded: %+v, next %v", st, s.Next())
		}
		g := Graphs{Intended: dg.New("intended"), Current: dg.New("current")}
		g.Intended.Put(&items.DHCP6Lease{Dev: "up0"})
		if c := s.Sync(g); c.Rerender || len(s.Used()) != 1 {
			t.Errorf("with its item intended: %+v, used %v", c, s.Used())
		}
		g.Intended.Delete(items.DHCP6LeaseRef("up0"))
		if c := s.Sync(g); !c.Rerender || len(s.Used()) != 0 || len(dhcp6.KeptLeases(dir, time.Now())) != 0 {
			t.Errorf("without its item: %+v, used %v, kept %v", c, s.Used(), dhcp6.KeptLeases(dir, time.Now()))
		}
	})
}

// Fresh trusts a lease before T1 only; SameLeases tells a new binding or
// a new end from the same leases.
func TestFreshAndSameLeases(t *testing.T) {
	at := time.Date(2026, 11, 23, 20, 0, 0, 0, time.UTC)
	l := lease4At("up0", at)
	if !Fresh(l, at.Add(59*time.Second)) || Fresh(l, at.Add(time.Minute)) {
		t.Error("Fresh is not before T1")
	}
	renewed := *l
	renewed.Acquired = at.Add(time.Minute)
	used := map[string]*lease4.Lease{"up0": l}
	for _, c := range []struct {
		held map[string]*lease4.Lease
		want bool
	}{
		{map[string]*lease4.Lease{"up0": l}, true},
		{map[string]*lease4.Lease{"up0": &renewed}, false},
		{map[string]*lease4.Lease{}, false},
	} {
		if got := SameLeases(used, c.held); got != c.want {
			t.Errorf("SameLeases(%v, %v) = %v", used, c.held, got)
		}
	}
}

// TrustFresh holds only the leases before T1; Extend bounds a renewal by
// T2 and a rebinding by the expiry.
func TestTrustFreshAndExtend(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		fresh, old := lease4At("up0", start), lease4At("up1", start.Add(-time.Minute))
		book := &dhcp.Leases{}
		TrustFresh[*lease4.Lease](book, map[string]*lease4.Lease{"up0": fresh, "up1": old}, start)
		if held, _ := book.Snapshot(); len(held) != 1 || held["up0"] != fresh {
			t.Errorf("trusted %v, want up0's lease only", held)
		}
		c := newClient4()
		x := V4{Client: c}.Exchanger(nil, "up0")
		for _, rebind := range []bool{false, true} {
			from := time.Now()
			_, err := Extend(context.Background(), x, fresh, rebind)
			<-c.calls
			<-c.opts
			want := fresh.RebindAt()
			if rebind {
				want = fresh.Expires()
			}
			if !errors.Is(err, context.DeadlineExceeded) || !time.Now().Equal(want) {
				t.Errorf("rebind %v from +%v: %v at +%v, want the deadline at +%v", rebind, from.Sub(start), err,
					time.Since(start), want.Sub(start))
			}
		}
	})
}

// A found lease (Adopt) is in use where none is, due at its expiry, and
// Adopting until a server confirms it (the book holds the answer): then it
// is an ordinary lease, due at T1. One where a lease is in use is not
// taken.
func TestSchedulerAdoptsFoundLeases(t *testing.T) {
	r := newRig4(t, "")
	r.g.Intended.Put(&items.DHCP4Lease{Dev: "up0"})
	r.g.Current.Put(&items.DHCP4Lease{Dev: "up0", Kept: true})
	now := time.Now()
	found := lease4At("up0", now.Add(-time.Minute))
	found.Obtained = dhcp.ObtainedFound
	if !r.s.Adopt(map[string]*lease4.Lease{"up0": found}) || r.s.Used()["up0"] != found || !r.s.Adopting() ||
		!r.s.Next().Equal(found.Expires()) {
		t.Fatalf("after Adopt: used %v, adopting %v, next %v", r.s.Used(), r.s.Adopting(), r.s.Next())
	}
	if r.s.Adopt(map[string]*lease4.Lease{"up0": lease4At("up0", now)}) {
		t.Error("a second found lease taken where one is in use")
	}
	if c := r.s.Sync(r.g); c != (Changes{}) || !r.s.Adopting() || r.s.Used()["up0"] != found {
		t.Errorf("before the answer: %+v, adopting %v, used %v", c, r.s.Adopting(), r.s.Used())
	}
	confirmed := lease4At("up0", now)
	confirmed.Obtained = dhcp.ObtainedReboot
	r.book.Set(confirmed)
	if c := r.s.Sync(r.g); !c.Rerender || r.s.Adopting() || r.s.Used()["up0"] != confirmed || !r.s.Next().Equal(confirmed.RenewAt()) {
		t.Errorf("after the answer: %+v, adopting %v, used %v, next %v", c, r.s.Adopting(), r.s.Used(), r.s.Next())
	}
}
