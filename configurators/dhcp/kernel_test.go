package dhcp_test

import (
	"context"
	"net/netip"
	"testing"
	"time"

	"github.com/netagent/netagent/agent/intent"
	"github.com/netagent/netagent/agent/render"
	"github.com/netagent/netagent/configurators"
	"github.com/netagent/netagent/configurators/dhcp"
	"github.com/netagent/netagent/internal/dnsmasqtest"
	"github.com/netagent/netagent/internal/testns"
	"github.com/netagent/netagent/items"
	"github.com/netagent/netagent/reconciler"
	"github.com/vishvananda/netlink"
)

// The whole path with the real configurators and a real server: the lease
// item is acquired in the background, then the lease's address, default
// route and option 121 route are in the kernel of the client namespace.
func TestLeaseIntoKernel(t *testing.T) {
	client := testns.New(t)
	extra := netip.MustParsePrefix("198.51.100.0/24")
	dnsmasqtest.Start(t, client, "up0", dnsmasqtest.Options{
		Routes: []netip.Prefix{netip.MustParsePrefix("0.0.0.0/0"), extra}})
	stateDir := t.TempDir()

	in, err := intent.Parse([]byte(`{"version": 1, "interfaces": [{"name": "up0", "type": "physical"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	intended, err := render.Render(in)
	if err != nil {
		t.Fatal(err)
	}
	intended.Put(&items.DHCP4Lease{Dev: "up0"})
	reg, err := configurators.NewRegistry(client, stateDir)
	if err != nil {
		t.Fatal(err)
	}
	leases := &dhcp.Leases{}
	reg.Register(items.TypeDHCP4Lease, &dhcp.Configurator{Client: &dhcp.Client{X: &dhcp.NetnsExchanger{Target: client}}, Leases: leases, StateDir: stateDir})
	current, err := configurators.ReadBack(client, stateDir, intended)
	if err != nil {
		t.Fatal(err)
	}
	records := reconciler.NewRecords()
	reconcile := func() reconciler.Status {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		t.Cleanup(cancel)
		st := reconciler.New(reg, reconciler.WithRecords(records)).Reconcile(ctx, current, intended)
		current = st.NewCurrentState
		return st
	}
	st := reconcile()
	if st.AsyncOpsInProgress {
		<-st.ReadyToResume
		st = reconcile()
	}
	if st.Err != nil {
		t.Fatal(st.Err)
	}
	l := leases.Get("up0")
	if l == nil {
		t.Fatalf("no lease held; operations:\n%s", st.OperationLog)
	}
	for _, it := range dhcp.LeaseItems(l, dhcp.RouteOptions{UseRoutes: true, Physical: true}) {
		intended.Put(it)
	}
	if st = reconcile(); st.Err != nil || len(st.Blocked) > 0 {
		t.Fatalf("applying the lease: %v, blocked %v\n%s", st.Err, st.Blocked, st.OperationLog)
	}

	link, err := client.NL.LinkByName("up0")
	if err != nil {
		t.Fatal(err)
	}
	addrs, err := client.NL.AddrList(link, netlink.FAMILY_V4)
	if err != nil {
		t.Fatal(err)
	}
	if len(addrs) != 1 || addrs[0].IPNet.String() != l.Address.String() {
		t.Errorf("addresses %v, want %v", addrs, l.Address)
	}
	routes, err := client.NL.RouteList(link, netlink.FAMILY_V4)
	if err != nil {
		t.Fatal(err)
	}
	gw := dnsmasqtest.ServerAddr.Addr().String()
	var haveDefault, haveExtra bool
	for _, r := range routes {
		switch {
		case r.Dst == nil || r.Dst.String() == "0.0.0.0/0":
			haveDefault = r.Gw.String() == gw
		case r.Dst.String() == extra.String():
			haveExtra = r.Gw.String() == gw
		}
	}
	if !haveDefault || !haveExtra {
		t.Errorf("routes %v, want the default route and %v via %s", routes, extra, gw)
	}
}
