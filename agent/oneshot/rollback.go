package oneshot

import (
	"context"
	"fmt"

	"github.com/netagent/netagent/agent/host"
	"github.com/netagent/netagent/agent/render"
	"github.com/netagent/netagent/agent/versions"
	dg "github.com/netagent/netagent/depgraph"
)

// A one-shot rollback (`netagent rollback [N]`, no daemon): version N's
// intent (default: the one before the current) applied as apply applies,
// recorded as a new version "rollback N" (versions.Rollback), under the
// namespace's lock (Gate). The protection of links judges it as it does an
// apply, before the version is recorded: a refused rollback records
// nothing and changes nothing. A rollback through the daemon is the
// daemon's (agent/history.go); a pending trial is reverted instead
// (RunningTrial).

// Rollback is a rollback to a version, opened on its namespace and
// judged, to record (Record) and apply (ApplyGuarded).
type Rollback struct {
	Runtime *host.Runtime
	// Back is the version rolled back to; Graph its intent rendered (with
	// the DHCPv4 leases kept, as apply's), Leases its lease rounds (nil:
	// none).
	Back   *versions.Version
	Graph  *dg.Graph
	Leases *Leases
	// Guarded is what the protection decided (Stops: refused).
	Guarded *Guarded
	store   versions.Store
}

// Close closes the namespace.
func (r *Rollback) Close() { r.Runtime.Close() }

// PrepareRollback picks version n of store (0: the one before the
// current), renders it, opens the namespace (Gate has decided to go
// ahead) and judges it (Guard). The rollback is not recorded yet.
func PrepareRollback(ctx context.Context, o *Options, store versions.Store, n int, wait host.ApplyOptions) (*Rollback, error) {
	back, err := versions.Pick(store, n)
	if err != nil {
		return nil, err
	}
	intended, protected, err := RenderVersion(back)
	if err != nil {
		return nil, err
	}
	rt, err := host.Open(o.Netns, o.StateDir, o.log())
	if err != nil {
		return nil, err
	}
	r := &Rollback{Runtime: rt, Back: back, Graph: intended, store: store}
	if err := r.prepare(ctx, o, protected, wait); err != nil {
		rt.Close()
		return nil, err
	}
	return r, nil
}

// prepare renders the version again with the DHCPv4 leases kept (as
// apply's: KeptLeases) and judges it.
func (r *Rollback) prepare(ctx context.Context, o *Options, protected []string, opts host.ApplyOptions) error {
	if parsed, err := render.ParseFiles(map[string][]byte{"intent": r.Back.Intent}); err == nil {
		lf, next, err := KeptLeases(r.Runtime, parsed, o.ResolvConf, nil)
		if err != nil {
			return &InvalidError{Err: err}
		}
		if next != nil {
			r.Graph = next
		}
		r.Leases = lf
		r.Runtime.SetAcquireTimeout(AcquireTimeout(opts.Wait))
	}
	gd, err := Guard(ctx, o, r.Runtime, protected, r.Graph)
	r.Guarded = gd
	return err
}

// Record records the rollback as a new version (expect as for
// versions.Rollback) and returns it: the caller applies r next.
func (r *Rollback) Record(expect int) (versions.Meta, error) {
	_, cur, err := versions.Rollback(r.store, r.Back.Number, expect)
	if err != nil {
		return versions.Meta{}, err
	}
	return cur.Meta(), nil
}

// RollbackSpec is what RollbackTo needs beside the namespace's options.
type RollbackSpec struct {
	host.ApplyOptions
	// Version is the version to go back to (0: the one before the
	// current); IfVersion the current one expected (versions.Any: any).
	Version, IfVersion int
	// Store is the namespace's version store.
	Store versions.Store
	// Judged, when set, is told the judgement of the protection before
	// anything changes.
	Judged func(*Guarded)
	// Recorded, when set, is told the version recorded, before the apply.
	Recorded func(back int, cur versions.Meta)
	// Progress observes the apply.
	Progress Progress
}

// RollbackTo rolls the namespace of o back (Gate: a daemon serving it is
// a *DaemonError): the version prepared and judged (PrepareRollback), then
// recorded, then applied as apply applies (ApplyGuarded). A refused
// rollback (Applied.Outcome Refused) records and changes nothing.
func RollbackTo(ctx context.Context, o *Options, spec RollbackSpec) (*Applied, error) {
	d, err := Gate(o)
	switch {
	case err != nil:
		return nil, err
	case d.Daemon != nil:
		return nil, &DaemonError{Holder: *d.Daemon}
	}
	defer d.Lock.Release()
	r, err := PrepareRollback(context.WithoutCancel(ctx), o, spec.Store, spec.Version, spec.ApplyOptions)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	if spec.Judged != nil {
		spec.Judged(r.Guarded)
	}
	if r.Guarded.Stops() {
		return &Applied{Guarded: r.Guarded}, nil
	}
	if err := ctx.Err(); err != nil { // stopped before anything changed
		return nil, fmt.Errorf("rollback: %w", err)
	}
	cur, err := r.Record(spec.IfVersion)
	if err != nil {
		return nil, err
	}
	if spec.Recorded != nil {
		spec.Recorded(r.Back.Number, cur)
	}
	res, err := ApplyGuarded(ctx, r.Runtime, r.Guarded, r.Leases, r.Graph, spec.ApplyOptions, spec.Progress)
	if err != nil {
		return nil, fmt.Errorf("rollback: %w", err)
	}
	return res, nil
}
