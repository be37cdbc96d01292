package link

import (
	"context"
	"errors"
	"fmt"

	"github.com/vishvananda/netlink"

	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/internal/netnsx"
	"github.com/netagent/netagent/items"
	"github.com/netagent/netagent/reconciler"
)

// InterfaceConfigurator manages items of type "interface" in one namespace.
type InterfaceConfigurator struct {
	k *kernel
	// adopt takes over someone else's virtual link of a wanted name
	// (Options.Adopt, kernel.takeOver).
	adopt bool
}

var _ reconciler.BatchConfigurator = (*InterfaceConfigurator)(nil)

// NewInterfaceConfigurator returns the interface configurator for the
// target namespace. stateDir holds the create journal and the original
// settings of physical interfaces (<stateDir>/links.json).
func NewInterfaceConfigurator(t *netnsx.Target, stateDir string) (*InterfaceConfigurator, error) {
	if stateDir == "" {
		return nil, errors.New("interface configurator: no state directory for the create journal and the physical originals")
	}
	k, err := newKernel(t, stateDir)
	if err != nil {
		return nil, err
	}
	k.raw = persistentRaw(t.NsHandle())
	return &InterfaceConfigurator{k: k}, nil
}

// newKernel returns the kernel of t with its state in stateDir ("": none).
func newKernel(t *netnsx.Target, stateDir string) (*kernel, error) {
	st, err := newStateStore(t, stateDir)
	if err != nil {
		return nil, err
	}
	return &kernel{nl: t.NL, raw: rawNL{ns: t.NsHandle()}, ns: namedNamespaces{nl: t.NL}, st: st, wg: netnsWG{t}, nic: hostNIC{t: t, sysfs: "/sys"}}, nil
}

// Create makes the interface exist as wanted. A physical interface must
// already exist (ErrMissing otherwise) and only gets its settings (see
// convergePhysical). A virtual one that already exists is taken as is when
// netagent owns it (its mark, or the create journal of an interrupted
// create, which it then marks) and has the wanted identity (its settings
// are then converged); an owned one of another identity (a leftover of an
// interrupted recreate) is replaced; any other is ErrNotOwned.
func (c *InterfaceConfigurator) Create(ctx context.Context, item dg.Item) error {
	want, err := items.As[*items.Interface](item)
	if err != nil {
		return err
	}
	c = c.in(ctx)
	fresh, err := c.existing(want)
	if err != nil || !fresh {
		return err
	}
	return c.k.create(want)
}

// existing does the create of want when a link of its name exists, or
// want is a physical interface; fresh reports that neither holds: the
// link must be created.
func (c *InterfaceConfigurator) existing(want *items.Interface) (fresh bool, err error) {
	if want.Kind == items.KindPhysical && want.Match != nil {
		l, err := c.k.matchedNIC(want) // match.go
		if err != nil {
			return false, err
		}
		return false, c.k.convergePhysical(l, want)
	}
	l, err := c.k.lookup(want.IfName)
	if err != nil {
		return false, err
	}
	if want.Kind == items.KindPhysical {
		if l == nil {
			return false, fmt.Errorf("physical interface %s: %w", want.IfName, ErrMissing)
		}
		return false, c.k.convergePhysical(l, want)
	}
	if l == nil {
		return true, nil
	}
	return false, c.k.adopt(l, want, c.adopt)
}

// ApplyBatch applies independent interface operations (a wave's), each
// as Create, Modify or Delete does, except that the links to create share
// the create journal's writes (createAll): two for the batch instead of
// two per link; and a large batch lists the links once instead of looking
// each up (see dumped). A link whose name an earlier create of the batch took (both
// ends of a veth pair declared) is then created as Create does it: over
// the existing link.
func (c *InterfaceConfigurator) ApplyBatch(ctx context.Context, ops []reconciler.BatchOp) []error {
	d := c.k.dumpLinks(len(ops))
	c = &InterfaceConfigurator{k: c.k.withDump(d).withIntent(ctx), adopt: c.adopt}
	errs := make([]error, len(ops))
	var fresh []int
	var wants []*items.Interface
	for i, op := range ops {
		if op.Op == reconciler.OpDelete {
			errs[i] = c.Delete(ctx, op.Old)
			continue
		}
		want, err := items.As[*items.Interface](op.New)
		if err != nil {
			errs[i] = err
			continue
		}
		isFresh := want.Kind != items.KindPhysical && d.absent(want.IfName)
		if !isFresh {
			isFresh, err = c.existing(want)
		}
		if errs[i] = err; isFresh {
			fresh = append(fresh, i)
			wants = append(wants, want)
		}
	}
	if len(wants) == 0 {
		return errs
	}
	cerrs, taken := c.k.createAll(wants)
	for j, err := range cerrs {
		errs[fresh[j]] = err
		if taken[j] { // made by an earlier create of the batch (a veth's peer), or by someone
			errs[fresh[j]] = c.Create(ctx, wants[j])
		}
	}
	return errs
}

// in is c for an operation of the reconcile of ctx: knowing its intent
// (swap.go).
func (c *InterfaceConfigurator) in(ctx context.Context) *InterfaceConfigurator {
	return &InterfaceConfigurator{k: c.k.withIntent(ctx), adopt: c.adopt}
}

// adopt handles a create over an existing link of the wanted name;
// takeOver: someone else's is taken over (Options.Adopt) rather than
// refused.
func (k *kernel) adopt(l netlink.Link, want *items.Interface, takeOver bool) error {
	st, err := k.st.snapshot()
	if err != nil {
		return err
	}
	if !owns(l, st, k.nameOf) {
		if takeOver && st.originalOf(l) == nil {
			return k.takeOver(l, want)
		}
		return k.foreignClash(l, want, k.nameOf)
	}
	if !owned(l) {
		if l, err = k.finishJournaled(l, st); err != nil {
			return fmt.Errorf("creating %s %s: %w", want.Kind, want.IfName, err)
		}
	}
	obs, err := k.observe(l, k.nameOf, true)
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

// Delete removes a virtual interface netagent owns (ErrNotOwned for one it
// does not; success when it is already gone). A physical interface is
// never deleted: it gets back the settings netagent changed, as they were
// before (restorePhysical).
func (c *InterfaceConfigurator) Delete(ctx context.Context, item dg.Item) error {
	old, err := items.As[*items.Interface](item)
	if err != nil {
		return err
	}
	if old.Kind == items.KindPhysical {
		return c.in(ctx).k.restorePhysical(old.IfName)
	}
	l, err := c.k.lookup(old.IfName)
	if err != nil || l == nil {
		return err
	}
	st, err := c.k.st.snapshot()
	if err != nil {
		return err
	}
	if !owns(l, st, c.k.nameOf) {
		return fmt.Errorf("deleting %s %s: %w", old.Kind, old.IfName, ErrNotOwned)
	}
	if err := c.k.nl.LinkDel(l); err != nil && !isNotFound(err) {
		return fmt.Errorf("deleting %s %s: %w", old.Kind, old.IfName, err)
	}
	return c.k.st.unjournal(old.IfName) // a journaled link, or a stale entry: gone with it
}

// NeedsRecreate delegates to items.NeedsRecreate (see
// items.InterfaceNeedsRecreate for the kernel's reasons).
func (c *InterfaceConfigurator) NeedsRecreate(oldItem, newItem dg.Item) bool {
	return items.NeedsRecreate(oldItem, newItem)
}
