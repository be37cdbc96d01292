package agent

import (
	"context"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/netagent/netagent/configurators/dhcp6"
	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/items"
)

// client6 answers RENEW and REBIND with extend (nil: never, until block
// is closed), and tells calls of each. The test sets extend (setExtend)
// while exchanges run in their goroutines: mu guards it.
type client6 struct {
	calls  chan string
	mu     sync.Mutex
	extend func(l *dhcp6.Lease) *dhcp6.Lease
	block  chan struct{}
}

func (c *client6) setExtend(f func(l *dhcp6.Lease) *dhcp6.Lease) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.extend = f
}

func (c *client6) Renew(ctx context.Context, l *dhcp6.Lease) (*dhcp6.Lease, error) {
	return c.answer(ctx, "renew", l)
}

func (c *client6) Rebind(ctx context.Context, l *dhcp6.Lease) (*dhcp6.Lease, error) {
	return c.answer(ctx, "rebind", l)
}

func (c *client6) answer(ctx context.Context, how string, l *dhcp6.Lease) (*dhcp6.Lease, error) {
	c.calls <- how
	c.mu.Lock()
	f := c.extend
	c.mu.Unlock()
	if f != nil {
		return f(l), nil
	}
	<-c.block
	return nil, ctx.Err()
}

// wantLeaseEvents checks that the metrics counted each event once on
// ifname (family: dhcp4 or dhcp6).
func wantLeaseEvents(t *testing.T, r *rig, family, ifname string, events ...string) {
	t.Helper()
	var text strings.Builder
	if err := r.a.Metrics().WriteText(&text); err != nil {
		t.Fatal(err)
	}
	for _, event := range events {
		want := `netagent_` + family + `_lease_events_total{event="` + event + `",interface="` + ifname + `"} 1`
		if !strings.Contains(text.String(), want) {
			t.Errorf("metrics lack %s", want)
		}
	}
}

// object returns the item the fake kernel holds for ref.
func (k *fakeKernel) object(ref dg.ItemRef) dg.Item {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.objects[ref]
}

// The daemon renders a DHCPv6 lease's address as soon as the lease item
// holds a lease (it used to wait for the next change of the intent),
// valid until the lease's end; it renews at T1, which moves the address's
// end; and when no server answers until the lease's end, the address is
// withdrawn and the lease item acquired again.
func TestLease6AcquiredRenewedExpired(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		leases := &dhcp6.Leases{}
		c := &client6{calls: make(chan string, 8), block: make(chan struct{})}
		defer close(c.block)
		release := make(chan struct{})
		doc := `{"version": 1, "interfaces": [{"name": "uplink0", "type": "physical", "ipv6": {"dhcp6": true}}]}`
		r := newRig(t, map[string]string{"up.json": doc}, func(cfg *Config) { cfg.Leases6, cfg.LeaseClient6 = leases, c })
		leaseRef := items.DHCP6LeaseRef("uplink0")
		r.k.slow[leaseRef] = release
		r.start()
		a := netip.MustParseAddr("2001:db8:77::123")
		l := &dhcp6.Lease{Interface: "uplink0", Address: a, Server: "000300010200000000aa", DNS: []netip.Addr{netip.MustParseAddr("2001:db8:77::53")},
			Preferred: 2 * time.Minute, Valid: 4 * time.Minute, T1: time.Minute, T2: 90 * time.Second, Acquired: time.Now()}
		leases.Set(l) // what the lease item's configurator does
		close(release)
		synctest.Wait()
		addrRef := items.AddressRef("uplink0", netip.PrefixFrom(a, 128))
		got, _ := r.k.object(addrRef).(*items.Address)
		if got == nil {
			t.Fatalf("the lease's address was not made once the lease came: ops %v", r.k.takeOps())
		}
		if !got.ValidUntil.Equal(l.Expires()) {
			t.Errorf("address valid until %v, want the lease's end %v", got.ValidUntil, l.Expires())
		}
		if st := r.status(); len(st.Leases) != 1 || st.Leases[0].Family != "ipv6" || st.Leases[0].Address != a.String()+"/128" ||
			!st.Leases[0].Held || !st.Leases[0].RenewAt.Equal(l.RenewAt()) {
			t.Errorf("status leases %+v", st.Leases)
		}

		c.setExtend(func(old *dhcp6.Lease) *dhcp6.Lease {
			n := *old
			n.Acquired = time.Now()
			return &n
		})
		time.Sleep(time.Minute + time.Second)
		synctest.Wait()
		if how := <-c.calls; how != "renew" {
			t.Errorf("at T1: %s, want a renewal", how)
		}
		renewed := leases.Get("uplink0")
		if renewed == nil || renewed == l {
			t.Fatalf("the renewal is not held: %v", renewed)
		}
		if got, _ := r.k.object(addrRef).(*items.Address); got == nil || !got.ValidUntil.Equal(renewed.Expires()) {
			t.Errorf("after the renewal the address is %v, want valid until %v", got, renewed.Expires())
		}

		c.setExtend(nil) // the server is gone
		time.Sleep(4*time.Minute + time.Second)
		synctest.Wait()
		if r.k.has(addrRef) {
			t.Errorf("the address outlived its lease: ops %v", r.k.takeOps())
		}
		if st := r.status(); len(st.Leases) != 0 {
			t.Errorf("status leases %+v after the expiry", st.Leases)
		}
		if !r.k.has(leaseRef) {
			t.Error("the lease item is not acquired again")
		}
		wantLeaseEvents(t, r, "dhcp6", "uplink0", "acquired", "renewed", "expired")
	})
}

// A server that takes the address back at a renewal (NoBinding) ends the
// lease at once: the address is withdrawn and a lease acquired again.
func TestLease6RefusedAtRenewal(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		leases := &dhcp6.Leases{}
		c := &client6{calls: make(chan string, 8), block: make(chan struct{})}
		defer close(c.block)
		doc := `{"version": 1, "interfaces": [{"name": "uplink0", "type": "physical", "ipv6": {"dhcp6": true}}]}`
		r := newRig(t, map[string]string{"up.json": doc}, func(cfg *Config) { cfg.Leases6, cfg.LeaseClient6 = leases, &refusing6{c} })
		release := make(chan struct{})
		r.k.slow[items.DHCP6LeaseRef("uplink0")] = release
		r.start()
		a := netip.MustParseAddr("2001:db8:77::124")
		leases.Set(&dhcp6.Lease{Interface: "uplink0", Address: a, Preferred: time.Hour, Valid: 2 * time.Hour, Acquired: time.Now()})
		close(release)
		synctest.Wait()
		addrRef := items.AddressRef("uplink0", netip.PrefixFrom(a, 128))
		if !r.k.has(addrRef) {
			t.Fatal("no address")
		}
		time.Sleep(31 * time.Minute) // T1: half the preferred lifetime
		synctest.Wait()
		if r.k.has(addrRef) {
			t.Errorf("the address stays after the server took it back: ops %v", r.k.takeOps())
		}
	})
}

// refusing6 answers every exchange with dhcp6.ErrRefused.
type refusing6 struct{ *client6 }

func (c *refusing6) Renew(ctx context.Context, l *dhcp6.Lease) (*dhcp6.Lease, error) {
	c.calls <- "renew"
	return nil, dhcp6.ErrRefused
}

// Without a LeaseClient6 nothing extends a lease (the daemon used to call
// a nil client at T1): the lease stays until its end, then its address
// goes and the lease is acquired again.
func TestLease6WithoutClientEnds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		leases := &dhcp6.Leases{}
		doc := `{"version": 1, "interfaces": [{"name": "uplink0", "type": "physical", "ipv6": {"dhcp6": true}}]}`
		r := newRig(t, map[string]string{"up.json": doc}, func(cfg *Config) { cfg.Leases6 = leases })
		release := make(chan struct{})
		r.k.slow[items.DHCP6LeaseRef("uplink0")] = release
		r.start()
		a := netip.MustParseAddr("2001:db8:77::125")
		leases.Set(&dhcp6.Lease{Interface: "uplink0", Address: a, Preferred: time.Minute, Valid: 2 * time.Minute, Acquired: time.Now()})
		close(release)
		synctest.Wait()
		addrRef := items.AddressRef("uplink0", netip.PrefixFrom(a, 128))
		time.Sleep(time.Minute) // past T1 and T2
		synctest.Wait()
		if !r.k.has(addrRef) {
			t.Fatalf("the address went before the lease's end: ops %v", r.k.takeOps())
		}
		time.Sleep(time.Minute + time.Second)
		synctest.Wait()
		if r.k.has(addrRef) {
			t.Errorf("the address outlived its lease: ops %v", r.k.takeOps())
		}
	})
}
