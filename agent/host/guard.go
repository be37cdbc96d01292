package host

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/internal/statefile"
	"github.com/netagent/netagent/items"
	"github.com/netagent/netagent/reconciler"
)

// Guarded is the judgement of the protection of links on an intended
// graph (Guard), the one both drivers use: the one-shot commands
// (agent/oneshot) and the daemon's Guard (what it adopts).
type Guarded struct {
	// Intended is the intended graph with every orphan in it, kept as the
	// kernel holds it (a copy: the caller's graph is left alone), or the
	// caller's graph when nothing is orphaned.
	Intended *dg.Graph
	Orphans  []Orphan
	// Refused are the disruptions that reject the change: the one-shot
	// commands refuse (unless forced); the daemon keeps the previous
	// version of the document that holds (or held) each refused item.
	Refused []Refusal
	// Protected are the links the intent's documents mark protected (the
	// daemon remembers them when it adopts Intended).
	Protected []string
}

// OrphanReasons gives, for every orphan, why it is kept; nil without
// orphans.
func (g *Guarded) OrphanReasons() map[dg.ItemRef]string {
	if len(g.Orphans) == 0 {
		return nil
	}
	out := make(map[dg.ItemRef]string, len(g.Orphans))
	for _, o := range g.Orphans {
		out[o.Ref] = o.Reason
	}
	return out
}

// RefusedError is the error of an apply that Guard refused: each refusal on its
// own line.
type RefusedError struct{ Refused []Refusal }

func (e *RefusedError) Error() string {
	lines := make([]string, 0, len(e.Refused))
	for _, r := range e.Refused {
		lines = append(lines, r.Why)
	}
	return fmt.Sprintf("refused: it would disrupt a protected link (--force to apply anyway):\n  %s", strings.Join(lines, "\n  "))
}

// Unwrap makes errors.Is(err, ErrProtected) hold.
func (e *RefusedError) Unwrap() error { return ErrProtected }

// maxGuardRounds bounds the dry runs of Guard: each round can only orphan
// what the previous one left to delete.
const maxGuardRounds = 8

// Guard decides, before anything changes, what an apply of intended would
// do to the protected links (Judge, on the reconciler's dry run from a
// fresh read-back): the orphans go back into a copy of intended as the
// kernel holds them, so that the apply keeps them, and it plans again
// until no more is orphaned (the objects an orphan needs are orphans
// too: keepNeeds). The refusals are those of the last plan.
func (r *Runtime) Guard(ctx context.Context, intended *dg.Graph, p Protection) (*Guarded, error) {
	out := &Guarded{Intended: intended}
	if p.Empty() {
		return out, nil
	}
	cur, err := r.ReadCurrent(intended)
	if err != nil {
		return nil, err
	}
	return r.GuardCurrent(ctx, cur, intended, p), nil
}

// GuardCurrent is Guard on a current state already read (the daemon's).
func (r *Runtime) GuardCurrent(ctx context.Context, cur, intended *dg.Graph, p Protection) *Guarded {
	return GuardPlan(ctx, reconciler.New(r.reg), cur, intended, p)
}

// GuardPlan is Guard on a current state already read, with the planner
// given (reconciler.Plan is a dry run: nothing changes).
func GuardPlan(ctx context.Context, rec *reconciler.Reconciler, cur, intended *dg.Graph, p Protection) *Guarded {
	out := &Guarded{Intended: intended}
	copied := false
	putCurrent := func(it dg.Item) { // into a copy: the caller's cur is left alone
		if !copied {
			cur, copied = cur.Root().Clone(), true
		}
		cur.Put(it)
	}
	for range maxGuardRounds {
		st := rec.Plan(ctx, cur, out.Intended)
		orphans, refused := Judge(st.OperationLog, cur, out.Intended, p)
		out.Refused = refused
		if len(orphans) == 0 {
			break
		}
		if out.Intended == intended {
			out.Intended = intended.Root().Clone()
		}
		var kept []Orphan
		for _, o := range orphans {
			have, ok := cur.Get(o.Ref)
			if !ok {
				continue
			}
			if as, changed := asItIs(have); changed {
				have = as
				putCurrent(as)
			}
			o.Item = have
			out.Intended.Put(have)
			kept = append(kept, o)
		}
		out.Orphans = append(out.Orphans, kept...)
		for _, o := range kept {
			needs, nics := keepNeeds(cur, out.Intended, o.Ref, o.Item, o.Link)
			out.Orphans = append(out.Orphans, needs...)
			for _, nic := range nics {
				putCurrent(nic)
			}
		}
	}
	slices.SortFunc(out.Orphans, func(a, b Orphan) int { return a.Ref.Compare(b.Ref) })
	return out
}

// asItIs is an orphan as it is kept: what the kernel chose for it and may
// change by itself is left to the kernel (the MTU and MAC of a virtual
// link: a bridge's follow its ports), so that a port leaving does not make
// the apply pin the bridge to the old MAC. A physical interface keeps
// every setting: its recorded ones would otherwise be given back (see
// README, Protected links). The read-back with the kept item as the hint
// reads it back so (unset fields unset); changed reports a difference.
func asItIs(it dg.Item) (dg.Item, bool) {
	ifc, ok := it.(*items.Interface)
	if !ok || ifc.Kind == items.KindPhysical || ifc.MTU == 0 && ifc.MAC == nil {
		return it, false
	}
	kept := *ifc
	kept.MTU, kept.MAC = 0, nil
	return &kept, true
}

// keepNeeds puts into intended, as cur holds them, the items that the
// orphan it (ref) needs and intended does not hold, and theirs in turn, and
// returns them as orphans too: an orphan whose master bridge or interface
// the intent left out would otherwise be taken down with it (planned as a
// recreate, and refused). An interface it needs that is not netagent's
// (a NIC netagent never changed, read back as a link only) is kept as the
// kernel holds it: a physical interface in its present state, which the
// read-back of the kept graph holds too (nics: put them into the current
// state planned from, so that nothing is created for them).
func keepNeeds(cur, intended *dg.Graph, ref dg.ItemRef, it dg.Item, link string) (out []Orphan, nics []dg.Item) {
	for _, d := range it.Dependencies() {
		need := d.RequiredItem
		if intended.Contains(need) {
			continue
		}
		have, ok := cur.Get(need)
		switch {
		case ok && !have.External():
		case ok || need.Type != items.TypeInterface:
			continue
		default:
			l, _ := cur.Get(items.LinkRef(need.Name))
			nic, isLink := l.(*items.Link)
			if !isLink {
				continue
			}
			have = &items.Interface{IfName: need.Name, Kind: items.KindPhysical, AdminUp: nic.AdminUp}
			nics = append(nics, have)
		}
		intended.Put(have)
		out = append(out, Orphan{Ref: need, Item: have, Link: link,
			Reason: "kept as it is: the orphan " + ref.String() + " needs it (" + link + " is protected)"})
		more, moreNICs := keepNeeds(cur, intended, need, have, link)
		out, nics = append(out, more...), append(nics, moreNICs...)
	}
	return out, nics
}

// protectedFile keeps, in the state directory, the links an applied intent
// marked "protected": true, so that a later intent that leaves them out
// orphans them instead of deleting them.
const protectedFile = "protected.json"

type protectedDoc struct {
	// Links are the names of the links an applied intent protected.
	Links []string `json:"links"`
}

// Declares returns the declared function of Protection for an intended
// graph: whether it holds the interface.
func Declares(intended *dg.Graph) func(string) bool {
	return func(name string) bool { return intended.Contains(items.InterfaceRef(name)) }
}

// Protection returns the protection of an apply: flags (--protect), the
// links the intent marks protected (inIntent), and those an earlier
// intent protected (remembered in the state directory) that the intent no
// longer declares (declared: whether the intent declares the interface,
// see Declares). A link the intent declares without "protected" is no
// longer protected by the intent.
func (r *Runtime) Protection(flags, inIntent []string, declared func(string) bool) (Protection, error) {
	remembered, err := readProtected(r.stateDir)
	if err != nil {
		return Protection{}, err
	}
	names := slices.Clone(inIntent)
	for _, n := range remembered {
		if !declared(n) {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	return Protection{Flags: slices.Compact(slices.Clone(flags)), Intent: slices.Compact(names)}, nil
}

// Remember records the links p's intent protects that still matter after
// an apply whose outcome is current: those the intent declares, and those
// the kernel still holds something of (the orphans' links; all of them
// when current is nil: not known). With force, the undeclared ones are
// forgotten: the apply deleted them.
func (r *Runtime) Remember(p Protection, declared func(string) bool, current *dg.Graph, force bool) error {
	var keep []string
	for _, n := range p.Intent {
		if declared(n) || !force && (current == nil || holdsLink(current, n)) {
			keep = append(keep, n)
		}
	}
	return writeProtected(r.stateDir, keep)
}

// holdsLink reports whether g holds the link name or an interface item of it.
func holdsLink(g *dg.Graph, name string) bool {
	if g == nil {
		return false
	}
	_, a := g.Get(items.InterfaceRef(name))
	_, b := g.Get(items.LinkRef(name))
	return a || b
}

func readProtected(dir string) ([]string, error) {
	var doc protectedDoc
	if _, err := statefile.LoadJSON(filepath.Join(dir, protectedFile), &doc); err != nil {
		return nil, fmt.Errorf("reading the protected links: %w", err)
	}
	return doc.Links, nil
}

// writeProtected writes the file as a record (statefile.SaveJSON);
// with no links it removes it.
func writeProtected(dir string, links []string) error {
	path := filepath.Join(dir, protectedFile)
	if len(links) == 0 {
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("forgetting the protected links: %w", err)
		}
		return nil
	}
	if err := statefile.SaveJSON(path, protectedDoc{Links: links}); err != nil {
		return fmt.Errorf("recording the protected links: %w", err)
	}
	return nil
}

func init() {
	statefile.Register(protectedFile, "the links a past intent protected, still protected when an intent leaves them out")
}
