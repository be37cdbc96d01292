package reconciler_test

import (
	"context"
	"errors"
	"fmt"

	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/reconciler"
)

// logger is a configurator that only prints what it is asked to do.
type logger struct{ failOn string }

func (l logger) Create(_ context.Context, it dg.Item) error {
	if dg.Ref(it).String() == l.failOn {
		return errors.New("device busy")
	}
	return nil
}
func (logger) Modify(context.Context, dg.Item, dg.Item) error { return nil }
func (logger) Delete(context.Context, dg.Item) error          { return nil }
func (logger) NeedsRecreate(o, n dg.Item) bool                { return o.(*item).Fixed != n.(*item).Fixed }

func ExampleReconciler_Reconcile() {
	reg := &reconciler.TypeRegistry{}
	reg.Register("interface", logger{})
	reg.Register("address", logger{})
	reg.Register("route", logger{})

	intended := dg.New("intended",
		mk("route", "default", "interface/eth0", "address/192.0.2.10"),
		mk("address", "192.0.2.10", "interface/eth0"),
		mk("interface", "eth0"),
	)
	r := reconciler.New(reg)
	st := r.Reconcile(context.Background(), nil, intended)
	fmt.Print(st.OperationLog)

	// The interface's kind changes: it is recreated with what depends on it.
	intended.Put(mk("interface", "eth0").fixed("vlan"))
	st = r.Reconcile(context.Background(), st.NewCurrentState, intended)
	fmt.Print(st.OperationLog)
	// Output:
	// create interface/eth0
	// create address/192.0.2.10
	// create route/default
	// delete route/default (recreate)
	// delete address/192.0.2.10 (recreate)
	// delete interface/eth0 (recreate)
	// create interface/eth0 (recreate)
	// create address/192.0.2.10 (recreate)
	// create route/default (recreate)
}

func ExampleReconciler_Plan() {
	reg := &reconciler.TypeRegistry{}
	reg.Register("interface", logger{})
	reg.Register("address", logger{})
	intended := dg.New("intended", mk("address", "192.0.2.10", "interface/eth0"), mk("interface", "eth0"))
	plan := reconciler.New(reg).Plan(context.Background(), nil, intended)
	fmt.Print(plan.OperationLog)
	// Output:
	// create interface/eth0
	// create address/192.0.2.10
}

func ExampleStatus_blocked() {
	reg := &reconciler.TypeRegistry{}
	reg.Register("interface", logger{failOn: "interface/eth1"})
	reg.Register("address", logger{})
	intended := dg.New("intended",
		mk("address", "198.51.100.1", "interface/eth1"),
		mk("interface", "eth1"),
	)
	st := reconciler.New(reg).Reconcile(context.Background(), nil, intended)
	fmt.Println(st.Err)
	fmt.Println(st.Blocked[dg.ItemRef{Type: "address", Name: "198.51.100.1"}])
	// Output:
	// create interface/eth1: device busy
	// blocked: waiting for interface/eth1 (failed: device busy)
}

// Make before break, as plan shows it and apply runs it: a default route
// with a new metric, and a new address on the uplink for the routes'
// gateway. The new objects are made first; the route that stays moves to
// the new address by a modify; what is no longer wanted goes last. An IPv6 address under a new prefix length is the same kernel
// object (equal conflict keys): the old one goes first.
func ExampleReconciler_Reconcile_makeBeforeBreak() {
	reg := &reconciler.TypeRegistry{}
	for _, t := range []string{"interface", "address", "route"} {
		reg.Register(t, logger{})
	}
	v6 := func(prefix string) *item {
		return mk("address", "eth0/"+prefix, "interface/eth0").conflicting("address eth0 2001:db8::1")
	}
	intended := dg.New("intended",
		mk("interface", "eth0"),
		mk("address", "eth0/192.0.2.10/24", "interface/eth0"),
		v6("2001:db8::1/64"),
		mk("route", "default metric 100", "interface/eth0", "address/eth0/192.0.2.10/24"),
		mk("route", "10.0.0.0/8", "interface/eth0", "address/eth0/192.0.2.10/24"),
	)
	r := reconciler.New(reg)
	st := r.Reconcile(context.Background(), nil, intended)

	intended = dg.New("intended",
		mk("interface", "eth0"),
		mk("address", "eth0/192.0.2.11/24", "interface/eth0"),
		v6("2001:db8::1/56"),
		mk("route", "default metric 200", "interface/eth0", "address/eth0/192.0.2.11/24"),
		mk("route", "10.0.0.0/8", "interface/eth0", "address/eth0/192.0.2.11/24"),
	)
	plan := r.Plan(context.Background(), st.NewCurrentState, intended)
	fmt.Print(plan.OperationLog)
	st = r.Reconcile(context.Background(), st.NewCurrentState, intended)
	fmt.Println(st.OperationLog.String() == plan.OperationLog.String())
	// Output:
	// delete address/eth0/2001:db8::1/64
	// create address/eth0/192.0.2.11/24
	// modify route/10.0.0.0/8
	// create address/eth0/2001:db8::1/56
	// create route/default metric 200
	// delete route/default metric 100
	// delete address/eth0/192.0.2.10/24
	// true
}
