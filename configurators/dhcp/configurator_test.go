package dhcp

import (
	"context"
	"errors"
	"net/netip"
	"slices"
	"testing"
	"time"

	"github.com/insomniacslk/dhcp/dhcpv4"
	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/items"
	"github.com/netagent/netagent/reconciler"
)

// blockingExchanger answers once release is closed, or fails when the
// exchange's context ends.
type blockingExchanger struct {
	ack     *dhcpv4.DHCPv4
	release chan struct{}
	started chan string
}

func (x *blockingExchanger) Request(ctx context.Context, ifname string, mods ...dhcpv4.Modifier) (*dhcpv4.DHCPv4, time.Time, error) {
	ack, err := x.Send(ctx, ifname, netip.Addr{}, mods...)
	return ack, time.Time{}, err
}

func (x *blockingExchanger) Send(ctx context.Context, ifname string, dest netip.Addr, mods ...dhcpv4.Modifier) (*dhcpv4.DHCPv4, error) {
	x.started <- ifname
	select {
	case <-x.release:
		return x.ack, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// stub is an item of any type, with dependencies; its configurator
// (noop) does nothing.
type stub struct {
	typ, name string
	deps      []dg.ItemRef
}

func (s *stub) Type() string         { return s.typ }
func (s *stub) Name() string         { return s.name }
func (s *stub) External() bool       { return false }
func (s *stub) Equal(o dg.Item) bool { return o == dg.Item(s) }
func (s *stub) String() string       { return s.typ + "/" + s.name }
func (s *stub) Dependencies() []dg.Dependency {
	var out []dg.Dependency
	for _, r := range s.deps {
		out = append(out, dg.Dependency{RequiredItem: r})
	}
	return out
}

type noop struct{}

func (noop) Create(context.Context, dg.Item) error          { return nil }
func (noop) Modify(context.Context, dg.Item, dg.Item) error { return nil }
func (noop) Delete(context.Context, dg.Item) error          { return nil }
func (noop) NeedsRecreate(dg.Item, dg.Item) bool            { return false }

func ops(st reconciler.Status) []string {
	var out []string
	for _, e := range st.OperationLog {
		out = append(out, e.String())
	}
	return out
}

// leaseGraph: an uplink up0 with a lease and an item needing the lease
// (its gateway route), and a static interface lan0 with its address.
func leaseGraph() (current, intended *dg.Graph) {
	current = dg.New("current", &items.Link{IfName: "up0", Carrier: true}, &items.Link{IfName: "lan0", Carrier: true})
	intended = dg.New("intended",
		&stub{typ: items.TypeInterface, name: "up0"},
		&items.DHCP4Lease{Dev: "up0", Hostname: "edge-1"},
		&stub{typ: "route", name: "via-dhcp-gateway", deps: []dg.ItemRef{items.DHCP4LeaseRef("up0")}},
		&stub{typ: items.TypeInterface, name: "lan0"},
		&stub{typ: "address", name: "lan0/192.0.2.1/24", deps: []dg.ItemRef{items.InterfaceRef("lan0")}},
	)
	return current, intended
}

func leaseRegistry(c *Configurator) *reconciler.TypeRegistry {
	reg := &reconciler.TypeRegistry{}
	reg.Register(items.TypeDHCP4Lease, c)
	for _, typ := range []string{items.TypeInterface, "route", "address"} {
		reg.Register(typ, noop{})
	}
	return reg
}

// Acquiring a lease runs in the background: the static interface and its
// address converge while the server has not answered, the route through
// the DHCP gateway waits for the lease, and is created once it is held.
func TestLeaseIsAsyncAndDependantsWait(t *testing.T) {
	x := &blockingExchanger{ack: ack(t), release: make(chan struct{}), started: make(chan string, 1)}
	dir := t.TempDir()
	c := &Configurator{Client: &Client{X: x}, Leases: &Leases{}, StateDir: dir}
	records := reconciler.NewRecords()
	current, intended := leaseGraph()
	st := reconciler.New(leaseRegistry(c), reconciler.WithRecords(records)).Reconcile(context.Background(), current, intended)
	got := ops(st)
	for _, want := range []string{"create dhcp4-lease/up0: in progress", "create address/lan0/192.0.2.1/24"} {
		if !slices.Contains(got, want) {
			t.Errorf("first run %q, want %q", got, want)
		}
	}
	if slices.Contains(got, "create route/via-dhcp-gateway") {
		t.Errorf("first run %q created the route before the lease", got)
	}
	if _, ok := st.Blocked[dg.ItemRef{Type: "route", Name: "via-dhcp-gateway"}]; !ok {
		t.Errorf("route not blocked: %v", st.Blocked)
	}
	if ifname := <-x.started; ifname != "up0" {
		t.Errorf("exchange on %q", ifname)
	}
	if c.Leases.Get("up0") != nil {
		t.Error("a lease is held before the server answered")
	}
	close(x.release)
	<-st.ReadyToResume
	st = reconciler.New(leaseRegistry(c), reconciler.WithRecords(records)).Reconcile(context.Background(), st.NewCurrentState, intended)
	if got := ops(st); !slices.Equal(got, []string{"create dhcp4-lease/up0", "create route/via-dhcp-gateway"}) {
		t.Errorf("second run %q", got)
	}
	l := c.Leases.Get("up0")
	if l == nil || l.Address.String() != "192.0.2.10/24" {
		t.Fatalf("lease held %v", l)
	}
	if kept, err := LoadLease(dir, "up0"); err != nil || kept == nil || kept.Address != l.Address {
		t.Errorf("kept lease %v, %v", kept, err)
	}
}

// Canceling the acquisition (the intent dropped the uplink, the agent
// stops) ends the exchange; the lease item is not created and nothing is
// held.
func TestLeaseAcquisitionCanceled(t *testing.T) {
	x := &blockingExchanger{ack: ack(t), release: make(chan struct{}), started: make(chan string, 1)}
	c := &Configurator{Client: &Client{X: x}, Leases: &Leases{}}
	records := reconciler.NewRecords()
	current, intended := leaseGraph()
	st := reconciler.New(leaseRegistry(c), reconciler.WithRecords(records)).Reconcile(context.Background(), current, intended)
	<-x.started
	st.CancelAsyncOps(nil)
	st.WaitForAsyncOps()
	st = reconciler.New(leaseRegistry(c), reconciler.WithRecords(records)).Reconcile(context.Background(), st.NewCurrentState, intended)
	var failed error
	for _, e := range st.OperationLog {
		if e.Ref == items.DHCP4LeaseRef("up0") && e.Err != nil {
			failed = e.Err
		}
	}
	if !errors.Is(failed, context.Canceled) {
		t.Errorf("operations %q, want the lease's create failed with context.Canceled", ops(st))
	}
	if c.Leases.Get("up0") != nil {
		t.Error("a canceled acquisition holds a lease")
	}
	if slices.Contains(ops(st), "create route/via-dhcp-gateway") {
		t.Error("the route was created without a lease")
	}
	if st.AsyncOpsInProgress { // a retry: end it too
		st.CancelAsyncOps(nil)
		st.WaitForAsyncOps()
	}
}
