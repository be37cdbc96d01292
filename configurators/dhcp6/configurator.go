package dhcp6

import (
	"context"
	"fmt"
	"net/netip"
	"sync"
	"time"

	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/items"
	"github.com/netagent/netagent/reconciler"
)

// Leases holds the lease currently held on each interface; the
// configurator writes it, the agent reads it (for render's Facts and
// status).
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

// Configurator manages DHCP6Lease items (see the package doc).
type Configurator struct {
	Client   *Client
	Leases   *Leases
	StateDir string // "": leases are not kept
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
	c.Leases.set(l)
	if c.StateDir != "" {
		return SaveLease(c.StateDir, l)
	}
	return nil
}

// Modify is never called: NeedsRecreate.
func (c *Configurator) Modify(ctx context.Context, oldItem, newItem dg.Item) error {
	return fmt.Errorf("dhcp6 lease on %s: %w", oldItem.Name(), errModify)
}

// Delete forgets the lease held on the interface (its address, an item
// depending on the lease item, is gone first).
func (c *Configurator) Delete(ctx context.Context, it dg.Item) error {
	c.Leases.drop(it.Name())
	if c.StateDir != "" {
		return DropLease(c.StateDir, it.Name())
	}
	return nil
}

// NeedsRecreate: any change is a new exchange.
func (c *Configurator) NeedsRecreate(oldItem, newItem dg.Item) bool { return !oldItem.Equal(newItem) }

// ReadBack returns the hint's lease items whose interface has a kept lease
// that has not expired at now: the lease is held, and a fresh read-back
// does not ask the server again.
func ReadBack(stateDir string, hint *dg.Graph, now time.Time) []dg.Item {
	if hint == nil || stateDir == "" {
		return nil
	}
	var out []dg.Item
	for it := range hint.Items() {
		if l, ok := it.(*items.DHCP6Lease); ok && LoadValid(stateDir, l.Dev, now) != nil {
			out = append(out, l)
		}
	}
	return out
}
