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
	return c.converge(it.(*items.Ethtool))
}

// Modify converges the link to the new item's settings (also when only
// the MTU they follow changed: what a driver reset with it is written
// again).
func (c *Configurator) Modify(_ context.Context, _, it dg.Item) error {
	return c.converge(it.(*items.Ethtool))
}

// Delete gives back what netagent changed on the link.
func (c *Configurator) Delete(_ context.Context, it dg.Item) error {
	return c.converge(&items.Ethtool{Interface: it.(*items.Ethtool).Interface})
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
	// sets are the same for the set-valued settings.
	sets   setPlan
	forget []string
}

// setPlan is the part of a plan for the set-valued settings.
type setPlan struct{ target, changes, record map[string][]string }

// converge makes the link hold want and the originals of what left it.
func (c *Configurator) converge(want *items.Ethtool) error {
	ifname := want.Interface
	p, err := c.plan(want)
	if err != nil {
		return err
	}
	if err := c.state.update(ifname, p.ifindex, func(rec *found) bool {
		maps.Copy(rec.Settings, p.record)
		maps.Copy(rec.Sets, p.sets.record)
		return len(p.record)+len(p.sets.record) > 0
	}); err != nil {
		return fmt.Errorf("recording the ethtool settings of %s: %w", ifname, err)
	}
	if err := write(c.k, p.ifindex, p.changes, p.sets.changes); err != nil {
		return fmt.Errorf("ethtool %s: %w", ifname, err)
	}
	if err := c.verify(ifname, p); err != nil {
		return err
	}
	return c.state.update(ifname, p.ifindex, func(rec *found) bool {
		for _, k := range p.forget {
			delete(rec.Settings, k)
			delete(rec.Sets, k)
		}
		return len(p.forget) > 0
	})
}

// plan reads the link and works out the convergence; a refused setting
// fails it before anything is written.
func (c *Configurator) plan(want *items.Ethtool) (*plan, error) {
	ifname := want.Interface
	idx, err := c.k.Index(ifname)
	if err != nil {
		return nil, err
	}
	orig, err := c.state.originals(ifname, idx)
	if err != nil {
		return nil, err
	}
	p := &plan{ifindex: idx, target: maps.Clone(want.Settings), changes: map[string]uint32{}, record: map[string]uint32{},
		sets: setPlan{target: maps.Clone(want.Sets), changes: map[string][]string{}, record: map[string][]string{}}}
	if p.target == nil {
		p.target = map[string]uint32{}
	}
	if p.sets.target == nil {
		p.sets.target = map[string][]string{}
	}
	p.forget = append(givenBack(p.target, orig.Settings), givenBack(p.sets.target, orig.Sets)...)
	keys := slices.Concat(slices.Collect(maps.Keys(p.target)), slices.Collect(maps.Keys(p.sets.target)))
	slices.Sort(keys)
	snap, err := readSnapshot(c.k, idx, keys)
	if err != nil {
		return nil, fmt.Errorf("reading the ethtool settings of %s: %w", ifname, err)
	}
	if err := p.fill(snap, ifname, orig.Settings); err != nil {
		return nil, err
	}
	return p, p.fillSets(snap, ifname, want.Sets, orig.Sets)
}

// givenBack adds to target the recorded originals of the settings it
// does not name and returns their keys: they are given back, then
// forgotten.
func givenBack[V any](target, orig map[string]V) []string {
	var keys []string
	for key, v := range orig {
		if _, named := target[key]; !named {
			target[key], keys = v, append(keys, key)
		}
	}
	return keys
}

// fill finds the changes and the originals to record, refusing what the
// kernel reports cannot be done.
func (p *plan) fill(snap *snapshot, ifname string, orig map[string]uint32) error {
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

// fillSets is fill for the set-valued settings: the advertised modes,
// which are autonegotiation's. The intent's are refused when the NIC
// does not support one; with autoneg off after the convergence, they are
// refused too (the NIC would not offer them), and a give-back
// writes nothing (nothing is offered; the record goes). With autoneg off
// now, what the NIC would offer is not reported: the original recorded
// is every mode it supports, what autonegotiation offers by default.
func (p *plan) fillSets(snap *snapshot, ifname string, want, orig map[string][]string) error {
	autonegAfter := snap.autoneg(p.target)
	for _, key := range slices.Sorted(maps.Keys(p.sets.target)) {
		v := p.sets.target[key]
		if _, named := want[key]; !autonegAfter {
			if !named {
				continue
			}
			if err := snap.refuseSet(ifname, key, v); err != nil {
				return err // a NIC that supports none says so first
			}
			return fmt.Errorf("%w: %s of %s: advertised link modes need autoneg on, and it is off (set link.autoneg true)", ErrRefused, key, ifname)
		}
		cur, ok := snap.setValue(key)
		if ok && slices.Equal(cur, v) {
			continue
		}
		if err := snap.refuseSet(ifname, key, v); err != nil {
			return err
		}
		p.sets.changes[key] = v
		if _, recorded := orig[key]; !recorded && ok {
			if !snap.autoneg(nil) {
				cur = snap.allowed(key)
			}
			p.sets.record[key] = cur
		}
	}
	return nil
}

// verify reads the changed settings back: a driver may take a request
// and keep another value (a feature its dependencies hold).
func (c *Configurator) verify(ifname string, p *plan) error {
	if len(p.changes)+len(p.sets.changes) == 0 {
		return nil
	}
	keys := slices.Concat(slices.Collect(maps.Keys(p.changes)), slices.Collect(maps.Keys(p.sets.changes)))
	slices.Sort(keys)
	snap, err := readSnapshot(c.k, p.ifindex, keys)
	if err != nil {
		return fmt.Errorf("reading back the ethtool settings of %s: %w", ifname, err)
	}
	for _, key := range slices.Sorted(maps.Keys(p.changes)) {
		if got, _ := snap.value(key); got != p.changes[key] {
			return fmt.Errorf("ethtool %s: %s is %d after setting %d (the driver kept it)", ifname, key, got, p.changes[key])
		}
	}
	for _, key := range slices.Sorted(maps.Keys(p.sets.changes)) {
		if got, _ := snap.setValue(key); !slices.Equal(got, p.sets.changes[key]) {
			return fmt.Errorf("ethtool %s: %s is %v after setting %v (the driver kept it)", ifname, key, got, p.sets.changes[key])
		}
	}
	return nil
}

// Check returns the error converging the item would fail with (a fixed
// feature, a value above the NIC's maximum, a link mode the NIC does not
// support or advertised with autoneg off, a setting the driver lacks),
// nil when it would succeed; it writes nothing. Plan predicts with it.
func (c *Configurator) Check(it dg.Item) error {
	e, ok := it.(*items.Ethtool)
	if !ok {
		return nil
	}
	if _, err := c.k.Index(e.Interface); err != nil {
		return nil // a link the same apply creates: its driver is not known yet
	}
	_, err := c.plan(e)
	return err
}
