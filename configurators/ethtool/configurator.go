package ethtool

import (
	"context"
	"fmt"
	"maps"
	"slices"

	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/items"
	"github.com/netagent/netagent/reconciler"
)

// Configurator applies Ethtool items. Create and Modify converge the
// link to the intended settings and give back the recorded value of each
// setting that left the intent; Delete gives back all of them. Nothing
// is written when a setting is refused (see Check), and a setting is
// recorded, as found, before netagent first changes it.
type Configurator struct {
	k     Kernel
	state *store
}

var _ reconciler.Configurator = (*Configurator)(nil)

// Create converges the link to the item's settings.
func (c *Configurator) Create(_ context.Context, it dg.Item) error {
	e := it.(*items.Ethtool)
	return c.converge(e.Interface, e.Settings)
}

// Modify converges the link to the new item's settings.
func (c *Configurator) Modify(_ context.Context, _, it dg.Item) error {
	e := it.(*items.Ethtool)
	return c.converge(e.Interface, e.Settings)
}

// Delete gives back what netagent changed on the link.
func (c *Configurator) Delete(_ context.Context, it dg.Item) error {
	return c.converge(it.(*items.Ethtool).Interface, nil)
}

// NeedsRecreate returns false: every setting changes in place.
func (c *Configurator) NeedsRecreate(_, _ dg.Item) bool { return false }

// plan is one convergence worked out before anything is written.
type plan struct {
	ifindex int
	// target is every setting's value after: the intent's, and the
	// recorded original of the settings that left it.
	target map[string]uint32
	// changes are the settings whose value differs now.
	changes map[string]uint32
	// record are the originals to record first; forget leave the record.
	record map[string]uint32
	forget []string
}

// converge makes the link hold want and the originals of what left it.
func (c *Configurator) converge(ifname string, want map[string]uint32) error {
	p, err := c.plan(ifname, want)
	if err != nil {
		return err
	}
	if err := c.state.update(ifname, p.ifindex, func(rec map[string]uint32) bool {
		maps.Copy(rec, p.record)
		return len(p.record) > 0
	}); err != nil {
		return fmt.Errorf("recording the ethtool settings of %s: %w", ifname, err)
	}
	if err := write(c.k, p.ifindex, p.changes); err != nil {
		return fmt.Errorf("ethtool %s: %w", ifname, err)
	}
	if err := c.verify(ifname, p); err != nil {
		return err
	}
	return c.state.update(ifname, p.ifindex, func(rec map[string]uint32) bool {
		for _, k := range p.forget {
			delete(rec, k)
		}
		return len(p.forget) > 0
	})
}

// plan reads the link and works out the convergence; a refused setting
// fails it before anything is written.
func (c *Configurator) plan(ifname string, want map[string]uint32) (*plan, error) {
	idx, err := c.k.Index(ifname)
	if err != nil {
		return nil, err
	}
	orig, err := c.state.originals(ifname, idx)
	if err != nil {
		return nil, err
	}
	p := &plan{ifindex: idx, target: maps.Clone(want), changes: map[string]uint32{}, record: map[string]uint32{}}
	if p.target == nil {
		p.target = map[string]uint32{}
	}
	for key, v := range orig {
		if _, named := want[key]; !named {
			p.target[key], p.forget = v, append(p.forget, key)
		}
	}
	snap, err := readSnapshot(c.k, idx, slices.Sorted(maps.Keys(p.target)))
	if err != nil {
		return nil, fmt.Errorf("reading the ethtool settings of %s: %w", ifname, err)
	}
	return p, p.fill(snap, ifname, want, orig)
}

// fill finds the changes and the originals to record, refusing what the
// kernel reports cannot be done.
func (p *plan) fill(snap *snapshot, ifname string, want, orig map[string]uint32) error {
	for _, key := range slices.Sorted(maps.Keys(p.target)) {
		v := p.target[key]
		cur, ok := snap.value(key)
		if ok && cur == v {
			continue
		}
		if err := snap.refuse(ifname, key, v); err != nil {
			return err
		}
		p.changes[key] = v
		if _, recorded := orig[key]; !recorded && ok {
			p.record[key] = cur
		}
	}
	return nil
}

// verify reads the changed settings back: a driver may take a request
// and keep another value (a feature its dependencies hold).
func (c *Configurator) verify(ifname string, p *plan) error {
	if len(p.changes) == 0 {
		return nil
	}
	snap, err := readSnapshot(c.k, p.ifindex, slices.Sorted(maps.Keys(p.changes)))
	if err != nil {
		return fmt.Errorf("reading back the ethtool settings of %s: %w", ifname, err)
	}
	for _, key := range slices.Sorted(maps.Keys(p.changes)) {
		if got, _ := snap.value(key); got != p.changes[key] {
			return fmt.Errorf("ethtool %s: %s is %d after setting %d (the driver kept it)", ifname, key, got, p.changes[key])
		}
	}
	return nil
}

// Check returns the error converging the item would fail with (a fixed
// feature, a value above the NIC's maximum, a setting the driver lacks),
// nil when it would succeed; it writes nothing. Plan predicts with it.
func (c *Configurator) Check(it dg.Item) error {
	e, ok := it.(*items.Ethtool)
	if !ok {
		return nil
	}
	if _, err := c.k.Index(e.Interface); err != nil {
		return nil // a link the same apply creates: its driver is not known yet
	}
	_, err := c.plan(e.Interface, e.Settings)
	return err
}
