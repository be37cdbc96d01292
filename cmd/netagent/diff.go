package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/netagent/netagent/agent/host"
	"github.com/netagent/netagent/agent/render"
	"github.com/netagent/netagent/agent/versions"
	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/internal/termsafe"
)

func init() {
	register(&command{
		name:    "diff",
		summary: "compare two versions of the intent: what changed, and the operations going from A to B runs",
		usage:   "[--netns NAME] [A [B]]",
		run:     runDiff,
	})
}

func runDiff(g *globals, args []string) int {
	fs := newFlagSet(g, "diff", "[A [B]] (default: the previous version and the current one; A alone: A and the current one)")
	k := kernelFlags(g, fs)
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() > 2 {
		return usageError(g, fs, "at most two versions")
	}
	nums := make([]int, fs.NArg())
	for i, a := range fs.Args() {
		n, err := parseVersion(a)
		if err != nil || n == 0 {
			return usageError(g, fs, fmt.Sprintf("%q: want a version number (see netagent history)", a))
		}
		nums[i] = n
	}
	store := versions.Open(k.stateDir(g), 0)
	a, b, err := diffPair(store, nums)
	if err != nil {
		return versionError(g, err)
	}
	fmt.Fprintf(g.stdout, "intent: version %d (%s) -> version %d (%s)\n", a.Number, termsafe.String(a.Source), b.Number, termsafe.String(b.Source))
	changes, err := intentDiff(a.Intent, b.Intent)
	if err != nil {
		fmt.Fprintf(g.stderr, "netagent: %v\n", err)
		return exitInternal
	}
	if len(changes) == 0 {
		fmt.Fprintln(g.stdout, "  no differences")
	}
	for _, c := range changes {
		fmt.Fprintf(g.stdout, "  %s\n", termsafe.String(fmt.Sprint(c)))
	}
	return diffPlan(g, k, a, b)
}

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

// diffPlan prints the operations that going from a's intent to b's runs:
// the reconciler's dry run from a's rendered graph to b's, as plan prints
// it, with the links the two protect judged as an apply of b after a
// judges them (diffProtection): what b leaves out of a link a protected
// is kept (an orphan, printed as plan prints it), not deleted.
func diffPlan(g *globals, k *kernelOpts, a, b *versions.Version) int {
	ga, protA, err := renderVersionProtected(a)
	if err != nil {
		return versionError(g, err)
	}
	gb, protB, err := renderVersionProtected(b)
	if err != nil {
		return versionError(g, err)
	}
	rt, code := k.open(g)
	if rt == nil {
		return code
	}
	defer rt.Close()
	cur, err := rt.ReadCurrent(gb)
	if err != nil {
		fmt.Fprintf(g.stderr, "netagent: %v\n", err)
		return exitInternal
	}
	ga = withExternal(ga, cur)
	ctx := context.Background()
	gd := rt.GuardCurrent(ctx, ga, gb, diffProtection(protA, protB, gb))
	st := rt.PlanStatus(ctx, nil, ga, gd.Intended)
	fmt.Fprintf(g.stdout, "operations from version %d to version %d:\n", a.Number, b.Number)
	res := &host.PlanResult{Result: *host.Summarize(st, gd.Intended)}
	found, err := rt.Found()
	if err != nil {
		fmt.Fprintf(g.stderr, "netagent: %v\n", err)
	}
	res.Disruptions = host.PredictOpsFound(res.Ops, ga, found)
	if len(res.Ops) == 0 && len(res.Problems) == 0 {
		fmt.Fprintln(g.stdout, "no operations: the two versions render the same items")
	} else {
		printPlanText(g, res)
	}
	for _, o := range gd.Orphans {
		fmt.Fprintf(g.stdout, "  =  %s\n", termsafe.String(fmt.Sprint(o)))
	}
	return exitOK
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

// renderVersionProtected renders a version's merged intent as one
// document, and returns the links the version marks "protected": true.
func renderVersionProtected(v *versions.Version) (*dg.Graph, []string, error) {
	gr, protected, err := render.LoadProtected(map[string][]byte{"intent": v.Intent})
	if err != nil {
		return nil, nil, fmt.Errorf("version %d does not render: %w", v.Number, err)
	}
	return gr, protected, nil
}

// change is one difference between two intents: an object added (+),
// removed (-) or changed (~), at a JSON path.
type change struct {
	kind     byte
	path     string
	old, new any
}

func (c change) String() string {
	switch c.kind {
	case '+':
		return fmt.Sprintf("+ %s: %s", c.path, compact(c.new))
	case '-':
		return fmt.Sprintf("- %s: %s", c.path, compact(c.old))
	}
	return fmt.Sprintf("~ %s: %s -> %s", c.path, compact(c.old), compact(c.new))
}

func compact(v any) string {
	data, _ := json.Marshal(v)
	return string(data)
}

// intentDiff compares two canonical intents object by object: the objects
// of a list section are matched by their identity (an interface by name, a
// route by family, table, destination and metric, ...), so that a changed
// object shows its changed fields, not a removal and an addition.
func intentDiff(a, b []byte) ([]change, error) {
	var va, vb any
	for _, x := range []struct {
		raw []byte
		v   *any
	}{{a, &va}, {b, &vb}} {
		d := json.NewDecoder(bytes.NewReader(x.raw))
		d.UseNumber()
		if err := d.Decode(x.v); err != nil {
			return nil, fmt.Errorf("reading a version's intent: %w", err)
		}
	}
	var out []change
	diffValue("", va, vb, &out)
	return out, nil
}

// identities are the fields that identify an object of a list section,
// by the section's path.
var identities = map[string][]string{
	"interfaces":      {"name"},
	"routes":          {"family", "table", "to", "metric"},
	"rules":           {"family", "priority"},
	"neighbors":       {"dev", "ip"},
	"firewall.chains": {"family", "table", "name"},
}

func diffValue(path string, a, b any, out *[]change) {
	ma, aMap := a.(map[string]any)
	mb, bMap := b.(map[string]any)
	if aMap && bMap {
		keys := slices.Sorted(maps.Keys(ma))
		for k := range mb {
			if _, ok := ma[k]; !ok {
				keys = append(keys, k)
			}
		}
		slices.Sort(keys)
		for _, k := range keys {
			va, inA := ma[k]
			vb, inB := mb[k]
			p := joinPath(path, k)
			switch {
			case !inA:
				*out = append(*out, change{kind: '+', path: p, new: vb})
			case !inB:
				*out = append(*out, change{kind: '-', path: p, old: va})
			default:
				diffValue(p, va, vb, out)
			}
		}
		return
	}
	la, aList := a.([]any)
	lb, bList := b.([]any)
	if id, ok := identities[path]; ok && aList && bList {
		diffList(path, id, la, lb, out)
		return
	}
	if compact(a) != compact(b) {
		*out = append(*out, change{kind: '~', path: path, old: a, new: b})
	}
}

// diffList matches the objects of two lists by identity.
func diffList(path string, id []string, a, b []any, out *[]change) {
	key := func(v any) string {
		m, _ := v.(map[string]any)
		var parts []string
		for _, f := range id {
			if x, ok := m[f]; ok {
				parts = append(parts, fmt.Sprint(x))
			}
		}
		return strings.Join(parts, " ")
	}
	inB := map[string]any{}
	for _, v := range b {
		inB[key(v)] = v
	}
	seen := map[string]bool{}
	for _, v := range a {
		k := key(v)
		seen[k] = true
		p := fmt.Sprintf("%s[%s]", path, k)
		if w, ok := inB[k]; ok {
			diffValue(p, v, w, out)
		} else {
			*out = append(*out, change{kind: '-', path: p, old: v})
		}
	}
	for _, v := range b {
		if k := key(v); !seen[k] {
			*out = append(*out, change{kind: '+', path: fmt.Sprintf("%s[%s]", path, k), new: v})
		}
	}
}

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}
