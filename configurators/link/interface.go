package link

import (
	"context"
	"fmt"

	"github.com/vishvananda/netlink"

	"github.com/netagent/netagent/configurators/netnsx"
	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/items"
	"github.com/netagent/netagent/reconciler"
)

// InterfaceConfigurator manages items of type "interface" in one namespace.
type InterfaceConfigurator struct {
	k *kernel
}

var _ reconciler.Configurator = (*InterfaceConfigurator)(nil)

// NewInterfaceConfigurator returns the interface configurator for the
// target namespace.
func NewInterfaceConfigurator(t *netnsx.Target) *InterfaceConfigurator {
	return &InterfaceConfigurator{k: newKernel(t)}
}

func newKernel(t *netnsx.Target) *kernel {
	return &kernel{nl: t.NL, raw: rawNL{ns: t.NsHandle()}}
}

// Create makes the interface exist as wanted. A physical interface must
// already exist (ErrMissing otherwise) and only gets its settings. A
// virtual one that already exists is taken as is when it carries
// netagent's mark and has the wanted identity (its settings are then
// converged); an owned one of another identity (a leftover of an
// interrupted recreate) is replaced; one without the mark is ErrNotOwned.
func (c *InterfaceConfigurator) Create(ctx context.Context, item dg.Item) error {
	want, err := items.As[*items.Interface](item)
	if err != nil {
		return err
	}
	l, err := c.k.lookup(want.IfName)
	if err != nil {
		return err
	}
	if want.Kind == items.KindPhysical {
		if l == nil {
			return fmt.Errorf("physical interface %s: %w", want.IfName, ErrMissing)
		}
		return c.k.converge(l, want)
	}
	if l == nil {
		return c.k.create(want)
	}
	return c.k.adopt(l, want)
}

// adopt handles a create over an existing link of the wanted name.
func (k *kernel) adopt(l netlink.Link, want *items.Interface) error {
	if !owned(l) {
		return fmt.Errorf("creating %s %s: %w", want.Kind, want.IfName, ErrNotOwned)
	}
	obs, err := k.observe(l, k.nameOf)
	if err != nil {
		return err
	}
	if !items.InterfaceNeedsRecreate(mask(obs, want), want) {
		return k.converge(l, want)
	}
	if err := k.nl.LinkDel(l); err != nil && !isNotFound(err) {
		return fmt.Errorf("deleting stale %s %s: %w", obs.Kind, want.IfName, err)
	}
	return k.create(want)
}

// Modify changes the interface in place; it writes nothing when the kernel
// already matches newItem. A virtual interface that has gone missing is
// created again.
func (c *InterfaceConfigurator) Modify(ctx context.Context, oldItem, newItem dg.Item) error {
	return c.Create(ctx, newItem)
}

// Delete removes a virtual interface netagent created (ErrNotOwned for one
// it did not; success when it is already gone). A physical interface is
// left exactly as it is: its settings are not undone.
func (c *InterfaceConfigurator) Delete(ctx context.Context, item dg.Item) error {
	old, err := items.As[*items.Interface](item)
	if err != nil || old.Kind == items.KindPhysical {
		return err
	}
	l, err := c.k.lookup(old.IfName)
	if err != nil || l == nil {
		return err
	}
	if !owned(l) {
		return fmt.Errorf("deleting %s %s: %w", old.Kind, old.IfName, ErrNotOwned)
	}
	if err := c.k.nl.LinkDel(l); err != nil && !isNotFound(err) {
		return fmt.Errorf("deleting %s %s: %w", old.Kind, old.IfName, err)
	}
	return nil
}

// NeedsRecreate delegates to items.NeedsRecreate (see
// items.InterfaceNeedsRecreate for the kernel's reasons).
func (c *InterfaceConfigurator) NeedsRecreate(oldItem, newItem dg.Item) bool {
	return items.NeedsRecreate(oldItem, newItem)
}
