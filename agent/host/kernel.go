package host

import (
	"context"

	"github.com/netagent/netagent/configurators/link"
	"github.com/netagent/netagent/configurators/nftables"
	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/items"
	"github.com/netagent/netagent/reconciler"
)

// Kernel is what the daemon needs of the target (the agent's Kernel
// interface): the read-back, the external links, and a reconciler over
// the configurators that logs one line per kernel operation (LogOp). The
// daemon keeps the reconciler's records next to its current graph and
// passes them in.
type Kernel struct {
	rt *Runtime
}

// Kernel returns the daemon's view of the target.
func (r *Runtime) Kernel() *Kernel { return &Kernel{rt: r} }

// ReadCurrent reads the kernel back (Runtime.ReadCurrent). It is a
// writer's read-back (Converge's, the daemon's): a lost record of the
// route tables netagent wrote is rebuilt first (keepRouteTables).
func (k *Kernel) ReadCurrent(_ context.Context, hint *dg.Graph) (*dg.Graph, error) {
	k.keepRouteTables()
	return k.rt.ReadCurrent(hint)
}

// ReadItems is ReadCurrent as a list of items, in the order read, for a
// caller that may not need the graph (Verifier.VerifyItems).
func (k *Kernel) ReadItems(_ context.Context, hint *dg.Graph) ([]dg.Item, error) {
	k.keepRouteTables()
	return k.rt.readItems(hint)
}

// keepRouteTables rebuilds a lost or damaged record of the route tables
// netagent wrote, saying so in the log; one it cannot rebuild leaves the
// read-back dumping every table (the same result, the old cost).
func (k *Kernel) keepRouteTables() {
	note, err := k.rt.ns.KeepRouteTables(k.rt.stateDir)
	switch {
	case err != nil:
		k.rt.log.WithError(err).Warn("route table record; reading every table")
	case note != "":
		k.rt.log.Info(note)
	}
}

// ReadItemsAfterWrite is ReadItems right after the caller's own reconcile
// (Converge): the firewall's read-back may use the tables it saved after
// its last write instead of saving them again (firewall.ReuseAfterWrite).
// ok is always true.
func (k *Kernel) ReadItemsAfterWrite(_ context.Context, hint *dg.Graph) (list []dg.Item, ok bool, err error) {
	defer k.rt.ns.ReuseAfterWrite()()
	k.keepRouteTables()
	list, err = k.rt.readItems(hint)
	return list, true, err
}

// ReadLinkItems is the links' part of ReadItems: the link configurator's
// read-back alone (one link dump), owned and external links.
func (k *Kernel) ReadLinkItems(_ context.Context, hint *dg.Graph) ([]dg.Item, error) {
	return k.rt.ns.ReadLinkItems(k.rt.StateDir(), hint)
}

// ReadNftItems is the nftables part of ReadItems: netagent's tables, one
// dump each.
func (k *Kernel) ReadNftItems(_ context.Context, hint *dg.Graph) ([]dg.Item, error) {
	return k.rt.ns.ReadNftItems(k.rt.StateDir(), hint)
}

// NftWatcher returns a watcher of other writers' changes in the
// target's nftables tables (nftables.NewWatcher), for the daemon; nil
// over fakes (OpenFake), which have no events.
func (r *Runtime) NftWatcher() nftables.EventWatcher {
	if r.target == nil {
		return nil
	}
	return nftables.NewWatcher(r.target, r.log)
}

// ReadLinks lists the links netagent does not own, from one link dump.
func (k *Kernel) ReadLinks(context.Context) ([]*items.Link, error) {
	list, err := k.rt.ns.ReadLinkItems(k.rt.StateDir(), nil)
	if err != nil {
		return nil, err
	}
	var out []*items.Link
	for _, it := range list {
		if l, ok := it.(*items.Link); ok {
			out = append(out, l)
		}
	}
	return out, nil
}

// Reconcile runs the reconciler with the caller's records.
func (k *Kernel) Reconcile(ctx context.Context, records *reconciler.Records, current, intended *dg.Graph) reconciler.Status {
	if k.rt.journal != nil {
		k.rt.journal.SetCurrent(current)
	}
	return k.rt.Reconciler(reconciler.WithRecords(records)).Reconcile(ctx, current, intended)
}

// Plan is a dry run that predicts the failures someone else's objects in
// the way cause (PlanStatus); the records are left as they are.
func (k *Kernel) Plan(ctx context.Context, records *reconciler.Records, current, intended *dg.Graph) reconciler.Status {
	return k.rt.PlanStatus(ctx, records, current, intended)
}

// Found is what the physical NICs netagent changed had before it, from the
// state directory (Runtime.Found; nil, with a warning, when it cannot be
// read): what the daemon's predictions need, as the one-shot plan's do.
func (k *Kernel) Found() link.Found { return k.rt.found() }
