package dhcp

import (
	"context"
	"fmt"
	"sync"

	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/items"
	"github.com/netagent/netagent/reconciler"
)

// Leases holds the lease currently held on each interface; the
// configurator writes it, the agent reads it (to report the lease and,
// later, to render the items that depend on it).
type Leases struct {
	mu sync.Mutex
	m  map[string]*Lease
}

// Get returns the lease held on ifname, nil if none.
func (b *Leases) Get(ifname string) *Lease {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.m[ifname]
}

func (b *Leases) set(l *Lease) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.m == nil {
		b.m = map[string]*Lease{}
	}
	b.m[l.Interface] = l
}

func (b *Leases) drop(ifname string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.m, ifname)
}

// Configurator manages DHCP4Lease items. Create acquires a lease in the
// background (reconciler.ContinueInBackground): the reconciler goes on
// with every item that does not depend on the lease, and the operation
// finishes when the server answers or the operation is canceled. The
// lease goes into Leases and, with StateDir set, the state directory.
type Configurator struct {
	Client   *Client
	Leases   *Leases
	StateDir string // "": leases are not kept
}

// Create implements reconciler.Configurator.
func (c *Configurator) Create(ctx context.Context, it dg.Item) error {
	l := it.(*items.DHCP4Lease)
	done := reconciler.ContinueInBackground(ctx)
	go func() { done(c.acquire(ctx, l)) }()
	return nil
}

func (c *Configurator) acquire(ctx context.Context, it *items.DHCP4Lease) error {
	l, err := c.Client.Acquire(ctx, it.Dev, Options{Hostname: it.Hostname, ClientID: it.ClientID, VendorClass: it.VendorClass})
	if err != nil {
		return err
	}
	c.Leases.set(l)
	if c.StateDir != "" {
		return SaveLease(c.StateDir, l)
	}
	return nil
}

// Modify is never called: every change of what the client sends is a new
// client (NeedsRecreate).
func (c *Configurator) Modify(ctx context.Context, oldItem, newItem dg.Item) error {
	return fmt.Errorf("dhcp4 lease on %s: %w", oldItem.Name(), errModify)
}

// Delete forgets the lease held on the interface. (Not yet: a DHCPRELEASE
// to the server, and withdrawing the address and routes, which will be
// items depending on the lease.)
func (c *Configurator) Delete(ctx context.Context, it dg.Item) error {
	c.Leases.drop(it.Name())
	return nil
}

// NeedsRecreate: a new hostname, client id or vendor class is a new
// exchange with the server.
func (c *Configurator) NeedsRecreate(oldItem, newItem dg.Item) bool { return !oldItem.Equal(newItem) }
