package agent

import (
	"context"
	"fmt"
	"net/netip"
	"testing"
	"testing/synctest"
	"time"

	"github.com/netagent/netagent/configurators/dhcp"
	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/items"
	"github.com/netagent/netagent/items/lease4"
)

// hangingClient's exchanges never answer, not even to their context (a
// syscall stuck on the rtnl lock): until block is closed.
type hangingClient struct {
	calls chan string
	block chan struct{}
}

func (c *hangingClient) Renew(ctx context.Context, l *lease4.Lease, o dhcp.Options) (*lease4.Lease, error) {
	c.calls <- dhcp.ObtainedRenew
	<-c.block
	return nil, ctx.Err()
}

func (c *hangingClient) Rebind(ctx context.Context, l *lease4.Lease, o dhcp.Options) (*lease4.Lease, error) {
	c.calls <- dhcp.ObtainedRebind
	<-c.block
	return nil, ctx.Err()
}

// The daemon renders a lease's address and default route once the lease
// item holds a lease, renews at T1 and, when that exchange hangs past the
// lease's end, still expires the lease on time: its address and route are
// withdrawn, the lease item acquired again.
func TestLeaseExpiresWhileItsRenewalHangs(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		leases := &dhcp.Leases{}
		hang := &hangingClient{calls: make(chan string, 4), block: make(chan struct{})}
		defer close(hang.block)
		release := make(chan struct{})
		doc := `{"version": 1, "interfaces": [{"name": "uplink0", "type": "physical", "dhcp4": true}]}`
		r := newRig(t, map[string]string{"up.json": doc}, func(c *Config) { c.Leases, c.LeaseClient = leases, hang })
		leaseRef := items.DHCP4LeaseRef("uplink0")
		r.k.slow[leaseRef] = release
		r.start()
		l := &lease4.Lease{Interface: "uplink0", Address: netip.MustParsePrefix("10.77.0.100/24"),
			Server: netip.MustParseAddr("10.77.0.1"), Router: netip.MustParseAddr("10.77.0.1"),
			LeaseTime: 2 * time.Minute, Renew: time.Minute, Rebind: 105 * time.Second, Acquired: time.Now(), Obtained: dhcp.ObtainedDiscover}
		leases.Set(l) // what the lease item's configurator does
		close(release)
		synctest.Wait()
		addr := items.AddressRef("uplink0", l.Address)
		if !r.k.has(addr) {
			t.Fatalf("the lease's address was not made: ops %v", r.k.takeOps())
		}
		if st := r.status(); len(st.Leases) != 1 || st.Leases[0].Address != "10.77.0.100/24" || !st.Leases[0].Held {
			t.Errorf("status leases %+v", st.Leases)
		}
		time.Sleep(time.Minute + time.Second)
		synctest.Wait()
		if got := <-hang.calls; got != dhcp.ObtainedRenew {
			t.Errorf("at T1: %s, want a renewal", got)
		}
		time.Sleep(time.Minute)
		synctest.Wait()
		if r.k.has(addr) {
			t.Errorf("the address outlived its lease while the renewal hung: ops %v", r.k.takeOps())
		}
		if st := r.status(); len(st.Leases) != 0 {
			t.Errorf("status leases %+v after the expiry", st.Leases)
		}
		if !r.k.has(leaseRef) {
			t.Error("the lease item is not acquired again")
		}
		wantLeaseEvents(t, r, "dhcp4", "uplink0", "acquired", "expired")
	})
}

// A lease whose server does not answer stays in flight as long as the
// server is away; the drift checks go on meanwhile (they used to wait for
// every operation in flight): a deleted route is repaired.
func TestDriftChecksGoOnWhileALeaseIsAcquired(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		never := make(chan struct{})
		defer close(never)
		docs := baseDocs()
		docs["30-up.json"] = `{"version": 1, "interfaces": [{"name": "up0", "type": "physical", "dhcp4": true}]}`
		r := newRig(t, docs, func(c *Config) { c.DriftInterval = time.Minute; c.Leases = &dhcp.Leases{} })
		up := uplink(3, true)
		up.IfName = "up0"
		r.k.setLink(up)
		r.k.slow[items.DHCP4LeaseRef("up0")] = never
		r.start()
		time.Sleep(2 * time.Second)
		synctest.Wait()
		if !r.k.has(routeRef) {
			t.Fatalf("the static route waited for the lease: ops %v", r.k.takeOps())
		}
		r.k.tamper(func(objs map[dg.ItemRef]dg.Item) { delete(objs, routeRef) })
		time.Sleep(time.Minute + time.Second)
		synctest.Wait()
		if !r.k.has(routeRef) {
			t.Errorf("the drift check waited for the lease: ops %v", r.k.takeOps())
		}
	})
}

// At start the leases the state directory keeps stay in use while their
// items ask the servers again: one server answering first does not
// withdraw the other uplink's address, which is still being asked for.
func TestKeptLeaseStaysWhileAnotherIsConfirmed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		dir := t.TempDir()
		kept := map[string]*lease4.Lease{}
		leases := &dhcp.Leases{}
		doc := `{"version": 1, "interfaces": [
			{"name": "up0", "type": "physical", "dhcp4": {"routeMetric": 10}},
			{"name": "up1", "type": "physical", "dhcp4": {"routeMetric": 20}}]}`
		r := newRig(t, map[string]string{"up.json": doc}, func(c *Config) { c.Leases, c.StateDir = leases, dir })
		for i, name := range []string{"up0", "up1"} {
			l := &lease4.Lease{Interface: name, Address: netip.MustParsePrefix(fmt.Sprintf("10.7%d.0.100/24", i)),
				Server: netip.MustParseAddr(fmt.Sprintf("10.7%d.0.1", i)), LeaseTime: time.Hour, Renew: 30 * time.Minute,
				Rebind: 50 * time.Minute, Acquired: time.Now(), Obtained: dhcp.ObtainedDiscover}
			if err := dhcp.SaveLease(dir, l); err != nil {
				t.Fatal(err)
			}
			kept[name] = l
			link := uplink(3+i, true)
			link.IfName = name
			r.k.setLink(link)
			// What the last run left in the kernel: the lease's address,
			// and the lease item being asked for again (its read-back).
			for _, it := range append(lease4.Items(l, lease4.RouteOptions{}), &items.DHCP4Lease{Dev: name}) {
				r.k.objects[dg.Ref(it)] = it
			}
		}
		r.start()
		up1 := items.AddressRef("up1", kept["up1"].Address)
		confirmed := *kept["up0"]
		confirmed.Obtained = dhcp.ObtainedReboot
		leases.Set(&confirmed) // up0's server answered; up1's has not yet
		r.src.set("z.json", `{"version": 1}`)
		time.Sleep(time.Second)
		synctest.Wait()
		if !r.k.has(up1) {
			t.Errorf("up1's kept address was withdrawn when up0's lease was confirmed: ops %v", r.k.takeOps())
		}
		st := r.status()
		if len(st.Leases) != 2 || !st.Leases[0].Held || st.Leases[1].Held {
			t.Errorf("status leases %+v, want up0 held, up1 being asked for", st.Leases)
		}
	})
}
