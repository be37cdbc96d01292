package l3

import (
	"context"
	"errors"
	"fmt"

	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/items"
	"github.com/netagent/netagent/reconciler"
	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// routeNL is the part of netlink.Handle the route configurator uses: the
// dumps. Route changes go over a conn (see routeBatch).
type routeNL interface {
	RouteListFilteredIter(family int, filter *netlink.Route, filterMask uint64, f func(netlink.Route) bool) error
}

var _ routeNL = (*netlink.Handle)(nil)

// routeConfigurator manages items.Route. Every operation is a batch of
// one; ApplyBatch handles many routes with one socket, pipelined requests
// and at most one dump per family.
type routeConfigurator struct {
	nlh  routeNL
	open opener
	// adopt takes over the one route of another protocol of the item's
	// identity instead of refusing it (ErrNotOwned): a replace, in place,
	// writes our protocol (only that when the route equals the item, the
	// item's attributes too when it differs).
	adopt bool
}

var _ reconciler.BatchConfigurator = (*routeConfigurator)(nil)

// Create adds the route, marked with items.RouteProtocol.
func (c *routeConfigurator) Create(ctx context.Context, item dg.Item) error {
	return c.ApplyBatch(ctx, []reconciler.BatchOp{{Op: reconciler.OpCreate, New: item}})[0]
}

// Modify replaces the route in place (NLM_F_REPLACE), unless the kernel
// already holds it as wanted.
func (c *routeConfigurator) Modify(ctx context.Context, oldItem, newItem dg.Item) error {
	return c.ApplyBatch(ctx, []reconciler.BatchOp{{Op: reconciler.OpModify, Old: oldItem, New: newItem}})[0]
}

// Delete removes the route if it carries netagent's protocol.
func (c *routeConfigurator) Delete(ctx context.Context, item dg.Item) error {
	return c.ApplyBatch(ctx, []reconciler.BatchOp{{Op: reconciler.OpDelete, Old: item}})[0]
}

// NeedsRecreate delegates to items.NeedsRecreate (never, for routes).
func (c *routeConfigurator) NeedsRecreate(oldItem, newItem dg.Item) bool {
	return items.NeedsRecreate(oldItem, newItem)
}

// ApplyBatch applies the route operations together; see routeBatch.
func (c *routeConfigurator) ApplyBatch(ctx context.Context, ops []reconciler.BatchOp) []error {
	b := &routeBatch{c: c, ops: ops, errs: make([]error, len(ops))}
	if err := ctx.Err(); err != nil {
		fillErr(b.errs, err)
		return b.errs
	}
	b.run()
	return b.errs
}

// kernelRoutes indexes the kernel's routes of one family by identity (the
// Name their item would have), tos 0 only: routes with a tos are other
// kernel objects.
type kernelRoutes map[string][]routeMsg

// ownedOf splits the routes of one identity into netagent's (the first
// one) and whether any other is there.
func ownedOf(rs []routeMsg) (owned *routeMsg, foreign bool) {
	for i := range rs {
		if rs[i].Protocol == items.RouteProtocol {
			if owned == nil {
				owned = &rs[i]
			}
		} else {
			foreign = true
		}
	}
	return owned, foreign
}

// dumpRoutes indexes the routes of family in the given tables (see
// routeTables: all tables for none or many), dumped raw over conn and
// decoded with the writer's codec (routeMsg); with keep, only the routes
// of its identities (the others are decoded and dropped as they come:
// a route batch that looks up one route in a table of 100k holds one,
// not 20 MB of them). Only the tables of the items in question are
// dumped: another owner's full table elsewhere costs nothing.
func dumpRoutes(conn rawOps, family int, tables []uint32, keep map[string]bool) (kernelRoutes, error) {
	idx := make(kernelRoutes)
	err := eachRouteIn(conn, family, tableFilters(conn, 0, tables), func(m *routeMsg) {
		if m.Tos != 0 {
			return
		}
		if id := m.identity(); keep == nil || keep[id] {
			idx[id] = append(idx[id], *m)
		}
	}, func() { clear(idx) })
	if err != nil {
		return nil, err
	}
	return idx, nil
}

// adoptable reports whether rs, the kernel's routes of an item's
// identity, is one route of another protocol that a tool made (not the
// kernel's own: an address's subnet route, a route of a router
// advertisement): adopt takes it over.
func adoptable(rs []routeMsg) bool {
	if len(rs) != 1 {
		return false
	}
	switch rs[0].Protocol {
	case items.RouteProtocol, unix.RTPROT_RA:
		return false
	case unix.RTPROT_KERNEL: // but ifupdown2 adds its gateway routes as kernel's too
		return rs[0].Gw.IsValid()
	}
	return true
}

// errRouteNotOwned: a route of another protocol holds the item's identity.
var errRouteNotOwned = fmt.Errorf("%w: a route of another protocol has this table, destination and metric", ErrNotOwned)

// sameRoute reports whether the kernel route k is want, as far as the
// kernel knows it.
func sameRoute(k *routeMsg, want *items.Route, names map[int]string) bool {
	got, ok := decodeRoute(*k, names)
	if !ok {
		return false
	}
	applyRouteHint(got, want)
	return got.Equal(want)
}

// errno reports whether err is the given errno.
func isErrno(err error, errno unix.Errno) bool { return errors.Is(err, errno) }
