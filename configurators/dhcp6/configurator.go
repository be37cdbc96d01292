package dhcp6

import (
	"context"
	"fmt"
	"net/netip"
	"time"

	"github.com/sirupsen/logrus"

	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/internal/leasebook"
	"github.com/netagent/netagent/items"
	"github.com/netagent/netagent/reconciler"
)

// Leases holds the DHCPv6 lease of each interface (leasebook.Book): the
// configurator writes it when it acquires one, the daemon when it renews
// or lets one go; render reads a snapshot (render.Facts).
type Leases struct{ leasebook.Book[*Lease] }

// Set holds l on its interface.
func (b *Leases) Set(l *Lease) { b.Hold(l.Interface, l) }

// Configurator manages DHCP6Lease items (see the package doc).
type Configurator struct {
	Client   *Client
	Leases   *Leases
	StateDir string // "": leases are not kept
	// Carrier reports whether an interface has its carrier (nil: always):
	// a lease let go with the carrier gone is kept and not released.
	Carrier func(ifname string) bool
	Log     logrus.FieldLogger // nil: releases are not logged
}

var _ reconciler.Configurator = (*Configurator)(nil)

// Create acquires the lease in the background, asking for the kept
// lease's address when there is one.
func (c *Configurator) Create(ctx context.Context, it dg.Item) error {
	l := it.(*items.DHCP6Lease)
	done := reconciler.ContinueInBackground(ctx)
	go func() { done(c.acquire(ctx, l.Dev)) }()
	return nil
}

func (c *Configurator) acquire(ctx context.Context, ifname string) error {
	var want netip.Addr
	if c.StateDir != "" {
		if kept, _ := LoadLease(c.StateDir, ifname); kept != nil {
			want = kept.Address
		}
	}
	l, err := c.Client.Acquire(ctx, ifname, want)
	if err != nil {
		return err
	}
	WarnDropped(c.Log, l)
	if c.StateDir != "" {
		if err := SaveLease(c.StateDir, l); err != nil {
			return err
		}
	}
	c.Leases.Set(l) // after it is kept: a reader of the new version finds it there too
	return nil
}

// Modify is never called: NeedsRecreate.
func (c *Configurator) Modify(ctx context.Context, oldItem, newItem dg.Item) error {
	return fmt.Errorf("dhcp6 lease on %s: %w", oldItem.Name(), errModify)
}

// Delete lets the lease go. With the interface's carrier gone (or the
// interface), the lease stays kept in the state directory, so that the
// next acquisition asks for the same address, and nothing is sent. Else
// the intent no longer asks for DHCPv6 on the interface: the lease, held
// or kept and still valid, is given back to the server (RELEASE) and
// forgotten. A release that cannot be sent is logged; the lease is
// forgotten anyway (the server frees the address when it ends).
func (c *Configurator) Delete(ctx context.Context, it dg.Item) error {
	dev := it.Name()
	l := c.Leases.Get(dev)
	c.Leases.Drop(dev)
	if c.Carrier != nil && !c.Carrier(dev) {
		return nil
	}
	if l == nil && c.StateDir != "" {
		l, _ = LoadLease(c.StateDir, dev)
	}
	if l != nil && c.Client.now().Before(l.Expires()) {
		err := c.Client.Release(ctx, l)
		if c.Log != nil {
			log := c.Log.WithField("interface", dev).WithField("address", l.Address.String())
			if err != nil {
				log.WithError(err).Info("dhcp6: the lease is forgotten without a release")
			} else {
				log.Info("dhcp6: lease released")
			}
		}
	}
	if c.StateDir != "" {
		return DropLease(c.StateDir, dev)
	}
	return nil
}

// NeedsRecreate: any change is a new exchange.
func (c *Configurator) NeedsRecreate(oldItem, newItem dg.Item) bool { return !oldItem.Equal(newItem) }

// ReadBack returns the lease items of hint (the intended graph) that are
// held: the interface's lease is in leases, or, until the daemon calls
// IgnoreKept, the state directory keeps one that has not expired at now
// (a fresh read-back, each pass of an apply or a restart, does not ask the
// server again). A lease kept for an interface the hint has no lease item
// for reads back too: the intent dropped dhcp6 there, and the reconciler
// deletes it, which releases it and forgets it (as DHCPv4's read-back).
// It looks only at the interfaces with a lease, never through the graph.
func ReadBack(leases *Leases, stateDir string, hint *dg.Graph, now time.Time) []dg.Item {
	if hint == nil {
		return nil
	}
	held, _ := leases.Snapshot()
	var out []dg.Item
	for dev := range held {
		if want, ok := hint.Get(items.DHCP6LeaseRef(dev)); ok {
			out = append(out, want)
		}
	}
	if stateDir == "" || leases.IgnoresKept() {
		return out
	}
	for dev := range KeptLeases(stateDir, now) {
		if _, h := held[dev]; h {
			continue
		}
		if want, ok := hint.Get(items.DHCP6LeaseRef(dev)); ok {
			out = append(out, want)
			continue
		}
		out = append(out, &items.DHCP6Lease{Dev: dev}) // not intended: deleted, which releases it
	}
	return out
}

// WarnDropped logs, as a warning, what check left out of l or changed
// (the daemon's renewals log the same).
func WarnDropped(log logrus.FieldLogger, l *Lease) {
	if log != nil && len(l.Dropped) > 0 {
		log.WithField("interface", l.Interface).WithField("dropped", l.Dropped).Warn("dhcp6: the server's lease had values that are not used")
	}
}
