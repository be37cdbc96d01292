package oneshot

import (
	"context"
	"fmt"
	"slices"

	"github.com/netagent/netagent/agent/host"
	"github.com/netagent/netagent/agent/render"
	"github.com/netagent/netagent/agent/versions"
	dg "github.com/netagent/netagent/depgraph"
)

// diffPair returns the versions nums names: A and B, A and the current
// one, or the one before the current and the current.
func diffPair(s versions.Store, nums []int) (*versions.Version, *versions.Version, error) {
	var a, b *versions.Version
	var err error
	switch len(nums) {
	case 0:
		a, err = versions.Pick(s, 0)
	default:
		a, err = s.Read(nums[0])
	}
	if err != nil {
		return nil, nil, err
	}
	if len(nums) == 2 {
		b, err = s.Read(nums[1])
	} else if b, err = s.Current(); err == nil && b == nil {
		err = fmt.Errorf("no current version: %w", versions.ErrNotFound)
	}
	return a, b, err
}

// withExternal is a copy of ga, a version's rendered graph, with the
// external items of cur (the links as the kernel holds them), which a
// rendered graph has none of: what ga's physical interfaces and b's need
// to be planned as an apply plans them, rather than waiting for their
// link.
func withExternal(ga, cur *dg.Graph) *dg.Graph {
	out := ga.Root().Clone()
	for it := range cur.Items() {
		if it.External() {
			out.Put(it)
		}
	}
	return out
}

// diffProtection is the protection an apply of b (which protects protB)
// after a (which protected protA) has: b's protected links, and a's that b
// does not declare (see host.Runtime.Protection).
func diffProtection(protA, protB []string, gb *dg.Graph) host.Protection {
	names := slices.Clone(protB)
	declared := host.Declares(gb)
	for _, n := range protA {
		if !declared(n) && !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	return host.Protection{Intent: names}
}

// RenderVersion renders a version's merged intent as one
// document, and returns the links the version marks "protected": true.
func RenderVersion(v *versions.Version) (*dg.Graph, []string, error) {
	gr, protected, err := render.LoadProtected(map[string][]byte{"intent": v.Intent})
	if err != nil {
		return nil, nil, fmt.Errorf("version %d does not render: %w", v.Number, err)
	}
	return gr, protected, nil
}

// Diffed is the outcome of Diff.
type Diffed struct {
	// A and B are the two versions compared.
	A, B *versions.Version
	// Changes are the differences of B's intent from A's, object by
	// object (Compared: they were worked out).
	Changes  []Change
	Compared bool
	// Plan is the operations going from A's intent to B's runs, as a plan
	// of B after A (nil when Diff failed before it).
	Plan *host.PlanResult
	// Orphans are what B leaves out of a link A protected: kept, not
	// deleted.
	Orphans []host.Orphan
	// FoundErr is why the links found in the kernel could not be read (the
	// plan's predictions are made without them).
	FoundErr error
}

// Diff is `netagent diff`: the versions nums names (A and B, A and the
// current one, or the one before the current and the current), what
// changed between their intents, and the operations going from A to B
// runs. On an error after the versions were read, the result holds what
// was found until then. It changes nothing.
func Diff(ctx context.Context, o *Options, nums []int) (*Diffed, error) {
	st := versions.Open(o.StateDir, 0)
	defer st.Close()
	a, b, err := diffPair(st, nums)
	if err != nil {
		return nil, err
	}
	d := &Diffed{A: a, B: b}
	if d.Changes, err = intentDiff(a.Intent, b.Intent); err != nil {
		return d, err
	}
	d.Compared = true
	return d, d.plan(ctx, o)
}

// plan works out the operations that going from A's intent to B's runs:
// the reconciler's dry run from A's rendered graph to B's, with the links
// the two protect judged as an apply of B after A judges them
// (diffProtection): what B leaves out of a link A protected is kept (an
// orphan), not deleted.
func (d *Diffed) plan(ctx context.Context, o *Options) error {
	ga, protA, err := RenderVersion(d.A)
	if err != nil {
		return err
	}
	gb, protB, err := RenderVersion(d.B)
	if err != nil {
		return err
	}
	rt, err := host.Open(o.Netns, o.StateDir, o.log())
	if err != nil {
		return err
	}
	defer rt.Close()
	cur, err := rt.ReadCurrent(gb)
	if err != nil {
		return err
	}
	ga = withExternal(ga, cur)
	gd := rt.GuardCurrent(ctx, ga, gb, diffProtection(protA, protB, gb))
	st := rt.PlanStatus(ctx, nil, ga, gd.Intended)
	d.Plan = &host.PlanResult{Result: *host.Summarize(st, gd.Intended)}
	found, err := rt.Found()
	d.FoundErr = err
	d.Plan.Disruptions = host.PredictOpsFound(d.Plan.Ops, ga, found)
	d.Orphans = gd.Orphans
	return nil
}

// DiffDoc is `diff --json`: the two versions, the changes of B's intent
// from A's, and the plan of going from A to B as `plan --json` prints one
// (absent when Diff failed before it; Error says why).
type DiffDoc struct {
	Format  int            `json:"format"`
	A       DiffVersionDoc `json:"a"`
	B       DiffVersionDoc `json:"b"`
	Changes []ChangeDoc    `json:"changes"`
	Plan    *PlanDoc       `json:"plan,omitempty"`
	Error   string         `json:"error,omitempty"`
}

// DiffVersionDoc names a version of DiffDoc.
type DiffVersionDoc struct {
	Number int    `json:"number"`
	Source string `json:"source"`
	Digest string `json:"digest"`
}

// ChangeDoc is a Change: "added", "removed" or "changed", at the JSON
// path, with the old and the new value.
type ChangeDoc struct {
	Change string `json:"change"`
	Path   string `json:"path"`
	Old    any    `json:"old,omitempty"`
	New    any    `json:"new,omitempty"`
}

var changeNames = map[byte]string{'+': "added", '-': "removed", '~': "changed"}

// DiffDocOf is `diff --json` of d and of the error Diff returned with it.
func DiffDocOf(d *Diffed, err error) DiffDoc {
	doc := DiffDoc{Format: OutputFormat, Changes: []ChangeDoc{},
		A: DiffVersionDoc{Number: d.A.Number, Source: d.A.Source, Digest: d.A.Digest},
		B: DiffVersionDoc{Number: d.B.Number, Source: d.B.Source, Digest: d.B.Digest}}
	for _, c := range d.Changes {
		doc.Changes = append(doc.Changes, ChangeDoc{Change: changeNames[c.kind], Path: c.path, Old: c.old, New: c.new})
	}
	if d.Plan != nil {
		p := PlanDocOf(d.Plan, &Guarded{Guarded: &host.Guarded{Orphans: d.Orphans}})
		doc.Plan = &p
	}
	if err != nil {
		doc.Error = err.Error()
	}
	return doc
}
