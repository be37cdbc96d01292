package target

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/netagent/netagent/configurators/statefile"
	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/items"
	"github.com/netagent/netagent/reconciler"
)

// Guarded is the outcome of Guard: the graph to apply, and what the
// protection decided.
type Guarded struct {
	// Intended is the intended graph with every orphan in it, kept as the
	// kernel holds it (a copy: the caller's graph is left alone), or the
	// caller's graph when nothing is orphaned.
	Intended *dg.Graph
	Orphans  []Orphan
	Refused  []Refusal
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
// too). The refusals are those of the last plan.
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
		for _, o := range orphans {
			have, ok := cur.Get(o.Ref)
			if !ok {
				continue
			}
			out.Intended.Put(have)
			out.Orphans = append(out.Orphans, o)
		}
	}
	slices.SortFunc(out.Orphans, func(a, b Orphan) int { return a.Ref.Compare(b.Ref) })
	return out
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
