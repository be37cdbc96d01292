package link

import (
	"context"
	"fmt"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netlink/nl"

	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/internal/netnsx"
	"github.com/netagent/netagent/items"
	"github.com/netagent/netagent/reconciler"
)

// PortConfigurator manages items of type "port": the membership of a link
// in a bond, bridge or vrf that netagent owns.
type PortConfigurator struct {
	k *kernel
}

var _ reconciler.BatchConfigurator = (*PortConfigurator)(nil)

// NewPortConfigurator returns the port configurator for the target
// namespace.
func NewPortConfigurator(t *netnsx.Target) *PortConfigurator {
	return &PortConfigurator{k: &kernel{nl: t.NL, raw: persistentRaw(t.NsHandle()), ns: namedNamespaces{nl: t.NL}}}
}

// Create enslaves the port to its master (releasing it first from another
// master of netagent's; a master that is not netagent's is ErrNotOwned),
// and sets a bridge port's cost. A port already in place is left alone
// apart from a differing cost.
func (c *PortConfigurator) Create(ctx context.Context, item dg.Item) error {
	return c.create(item, nil)
}

// create is Create, with the port's master looked up in d when it holds
// it (see dumped).
func (c *PortConfigurator) create(item dg.Item, d *dumped) error {
	p, err := items.As[*items.Port](item)
	if err != nil {
		return err
	}
	port, master, err := c.k.portLinks(p, d)
	if err != nil {
		return err
	}
	if port.Attrs().MasterIndex != master.Attrs().Index {
		if err := c.k.enslave(port, master, p); err != nil {
			return err
		}
	}
	return c.k.convergeBridgePort(port, p)
}

// Modify moves the port to its new master or changes its cost or
// priority; nothing is
// written when the kernel already matches.
func (c *PortConfigurator) Modify(ctx context.Context, oldItem, newItem dg.Item) error {
	return c.Create(ctx, newItem)
}

// Delete releases the port from its master. A port that is gone, or no
// longer enslaved to that master, is fine; a master of that name that is
// not netagent's is ErrNotOwned. A bond port's admin state is restored
// after the release (the kernel closes a released bond port).
func (c *PortConfigurator) Delete(ctx context.Context, item dg.Item) error {
	p, err := items.As[*items.Port](item)
	if err != nil {
		return err
	}
	port, err := c.k.lookup(p.IfName)
	if err != nil || port == nil || port.Attrs().MasterIndex == 0 {
		return err
	}
	master, err := c.k.lookup(p.Master)
	if err != nil || master == nil || master.Attrs().Index != port.Attrs().MasterIndex {
		return err
	}
	if !owned(master) {
		return fmt.Errorf("releasing port %s from %s: %w", p.IfName, p.Master, ErrNotOwned)
	}
	return c.k.release(port, p)
}

// ApplyBatch applies independent port operations (a wave's), each as
// Create, Modify or Delete does, except that a large batch lists the links
// once instead of looking each port and master up (see dumped): both are
// dependencies of the port, never changed in its wave, and each port has
// one item; a link the dump lacks is looked up.
func (c *PortConfigurator) ApplyBatch(ctx context.Context, ops []reconciler.BatchOp) []error {
	d := c.k.dumpLinks(len(ops))
	errs := make([]error, len(ops))
	for i, op := range ops {
		if op.Op == reconciler.OpDelete {
			errs[i] = c.Delete(ctx, op.Old)
		} else {
			errs[i] = c.create(op.New, d)
		}
	}
	return errs
}

// NeedsRecreate is always false: a new master is a release and an enslave.
func (c *PortConfigurator) NeedsRecreate(oldItem, newItem dg.Item) bool {
	return items.NeedsRecreate(oldItem, newItem)
}

// portLinks finds the port's link and its master, which must be
// netagent's bond, bridge or vrf.
func (k *kernel) portLinks(p *items.Port, d *dumped) (port, master netlink.Link, err error) {
	port, ok := d.link(p.IfName)
	if !ok {
		port, err = k.lookup(p.IfName)
	}
	if err == nil && port == nil {
		err = fmt.Errorf("port %s: %w", p.IfName, ErrMissing)
	}
	if err != nil {
		return nil, nil, err
	}
	master, ok = d.link(p.Master)
	if !ok {
		master, err = k.lookup(p.Master)
	}
	if err == nil && master == nil {
		err = fmt.Errorf("master %s of port %s: %w", p.Master, p.IfName, ErrMissing)
	}
	if err != nil {
		return nil, nil, err
	}
	if !owned(master) {
		return nil, nil, fmt.Errorf("enslaving %s to %s: %w", p.IfName, p.Master, ErrNotOwned)
	}
	return port, master, nil
}

// enslave moves the port under master. A port of another master is
// released first, if that master is netagent's. A bond port is set down
// for the enslave, as the kernel requires, and then given back the admin
// state it had (the kernel opens a new bond port itself).
func (k *kernel) enslave(port, master netlink.Link, p *items.Port) error {
	if idx := port.Attrs().MasterIndex; idx != 0 {
		if err := k.releaseFromOther(port, idx, p); err != nil {
			return err
		}
	}
	wasUp := port.Attrs().Flags&netUp != 0
	isBond := master.Type() == string(items.KindBond)
	if isBond && wasUp {
		if err := k.nl.LinkSetDown(port); err != nil {
			return fmt.Errorf("setting port %s down to enslave it: %w", p.IfName, err)
		}
	}
	if err := k.nl.LinkSetMaster(port, master); err != nil {
		return fmt.Errorf("enslaving %s to %s: %w", p.IfName, p.Master, err)
	}
	if isBond {
		return k.setAdmin(port, wasUp, p)
	}
	return nil
}

// releaseFromOther releases a port from a master that is not the wanted
// one, refusing to take a port from a master netagent does not own.
func (k *kernel) releaseFromOther(port netlink.Link, masterIndex int, p *items.Port) error {
	other, err := k.nl.LinkByIndex(masterIndex)
	if err != nil && !isNotFound(err) {
		return fmt.Errorf("reading current master of port %s: %w", p.IfName, err)
	}
	if other != nil && !owned(other) {
		return fmt.Errorf("port %s is enslaved to %s: %w", p.IfName, other.Attrs().Name, ErrNotOwned)
	}
	return k.release(port, p)
}

func (k *kernel) release(port netlink.Link, p *items.Port) error {
	wasUp := port.Attrs().Flags&netUp != 0
	if err := k.nl.LinkSetNoMaster(port); err != nil && !isNotFound(err) {
		return fmt.Errorf("releasing port %s: %w", p.IfName, err)
	}
	fresh, err := k.lookup(p.IfName)
	if err != nil || fresh == nil {
		return err
	}
	return k.setAdmin(fresh, wasUp, p)
}

// setAdmin gives the port back its admin state, reading the kernel first
// so that nothing is written when it already matches.
func (k *kernel) setAdmin(port netlink.Link, up bool, p *items.Port) error {
	fresh, err := k.lookup(port.Attrs().Name)
	if err != nil || fresh == nil {
		return err
	}
	isUp := fresh.Attrs().Flags&netUp != 0
	switch {
	case up && !isUp:
		err = k.nl.LinkSetUp(fresh)
	case !up && isUp:
		err = k.nl.LinkSetDown(fresh)
	}
	if err != nil {
		return fmt.Errorf("restoring admin state of port %s: %w", p.IfName, err)
	}
	return nil
}

// convergeBridgePort sets a bridge port's STP cost and priority, those
// that are set and differ, in one request.
func (k *kernel) convergeBridgePort(port netlink.Link, p *items.Port) error {
	if p.MasterKind != items.KindBridge || p.Cost == 0 && p.Priority == nil {
		return nil
	}
	cost, prio, err := k.portSettings(port.Attrs().Index)
	if err != nil {
		return fmt.Errorf("reading cost and priority of port %s: %w", p.IfName, err)
	}
	var attrs []attr
	if p.Cost != 0 && cost != p.Cost {
		attrs = append(attrs, u32Attr(nl.IFLA_BRPORT_COST, p.Cost))
	}
	if p.Priority != nil && prio != *p.Priority {
		attrs = append(attrs, attr{nl.IFLA_BRPORT_PRIORITY, nl.Uint16Attr(*p.Priority)})
	}
	if len(attrs) == 0 {
		return nil
	}
	if err := k.raw.setSlaveData(port.Attrs().Index, "bridge", attrs); err != nil {
		return fmt.Errorf("setting cost and priority of port %s (%s): %w", p.IfName, p, err)
	}
	return nil
}

// portSettings reads a bridge port's STP cost and priority.
func (k *kernel) portSettings(index int) (cost uint32, prio uint16, err error) {
	info, err := k.raw.linkInfo(index)
	if err != nil {
		return 0, 0, err
	}
	cost, _ = info.slaveU32(nl.IFLA_BRPORT_COST)
	prio, _ = u16Of(info.slaveData.get(nl.IFLA_BRPORT_PRIORITY))
	return cost, prio, nil
}
