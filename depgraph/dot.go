package depgraph

import (
	"fmt"
	"strings"
)

// DOT renders g in Graphviz's DOT language: one node per item (external
// items dashed, failed ones red, those in transition orange), one edge per
// dependency from the dependant to the required item (labelled with the
// predicate's description), subgraphs as clusters labelled with their
// description (SetDescription), or else their name. Required items that
// are missing appear as grey dotted nodes. Render it with `dot -Tsvg`.
func DOT(g *Graph) string {
	w := newDotWriter(g.name)
	w.cluster(g, func(ref ItemRef) (string, bool) {
		n := g.r.node(ref)
		return nodeStyle(n.item, n.State()), true
	})
	w.edges(g.Refs(), g.Dependencies, func(ref ItemRef) bool { return g.Contains(ref) })
	return w.finish()
}

// DiffDOT renders current and intended together, showing what a reconcile
// would change: items to create in green, to delete in red, to modify in
// blue, unchanged ones in black. External items of current that intended
// does not hold are drawn dashed, as in DOT: a reconcile never deletes
// them. Edges are the intended dependencies (the current ones for items
// that will be deleted).
func DiffDOT(current, intended *Graph) string { return DiffDOTFailing(current, intended, nil) }

// DiffDOTFailing is DiffDOT with the items of failing (a reason each) drawn
// as failing: red with a double border, the reason in the tooltip (the
// operations a dry run predicts to fail).
func DiffDOTFailing(current, intended *Graph, failing map[ItemRef]string) string {
	w := newDotWriter("plan: " + intended.Root().Name())
	union := map[ItemRef]struct{}{}
	for _, r := range intended.Refs() {
		union[r] = struct{}{}
	}
	for _, r := range current.Refs() {
		union[r] = struct{}{}
	}
	w.cluster(intended, func(ref ItemRef) (string, bool) {
		if why, fails := failing[ref]; fails {
			return failingStyle(why), true
		}
		want, _ := intended.Get(ref)
		have, _ := current.Get(ref)
		return diffStyle(have, want), true
	})
	var gone []ItemRef
	for _, r := range current.Refs() {
		if !intended.Contains(r) {
			gone = append(gone, r)
		}
	}
	for _, r := range gone {
		it, st, _ := current.Lookup(r)
		if why, fails := failing[r]; fails {
			w.node(r, failingStyle(why))
		} else if it.External() {
			w.node(r, nodeStyle(it, st))
		} else {
			w.node(r, diffStyle(it, nil))
		}
	}
	deps := func(r ItemRef) []Dependency {
		if intended.Contains(r) {
			return intended.Dependencies(r)
		}
		return current.Dependencies(r)
	}
	refs := append(intended.Refs(), gone...)
	w.edges(refs, deps, func(r ItemRef) bool { _, ok := union[r]; return ok })
	return w.finish()
}

type dotWriter struct {
	b        strings.Builder
	drawn    map[ItemRef]bool
	indent   string
	clusters int
}

func newDotWriter(name string) *dotWriter {
	w := &dotWriter{drawn: map[ItemRef]bool{}, indent: "  "}
	fmt.Fprintf(&w.b, "digraph %s {\n  rankdir=LR;\n  node [shape=box, fontname=\"Helvetica\"];\n", quote(name))
	return w
}

// cluster writes the items directly in g, then each subgraph as a cluster.
func (w *dotWriter) cluster(g *Graph, style func(ItemRef) (string, bool)) {
	for _, ref := range g.directRefs() {
		if s, ok := style(ref); ok {
			w.node(ref, s)
		}
	}
	for _, sub := range g.SubGraphs() {
		w.clusters++
		label := sub.name
		if sub.desc != "" {
			label = sub.desc
		}
		fmt.Fprintf(&w.b, "%ssubgraph cluster_%d {\n%s  label=%s;\n", w.indent, w.clusters, w.indent, quote(label))
		saved := w.indent
		w.indent += "  "
		w.cluster(sub, style)
		w.indent = saved
		fmt.Fprintf(&w.b, "%s}\n", w.indent)
	}
}

func (w *dotWriter) node(ref ItemRef, style string) {
	w.drawn[ref] = true
	fmt.Fprintf(&w.b, "%s%s [label=%s%s];\n", w.indent, quote(ref.String()), quote(ref.String()), style)
}

func (w *dotWriter) edges(refs []ItemRef, deps func(ItemRef) []Dependency, present func(ItemRef) bool) {
	for _, ref := range refs {
		for _, d := range deps(ref) {
			req := d.RequiredItem
			if !w.drawn[req] && !present(req) {
				w.node(req, ", style=dotted, color=grey, fontcolor=grey")
			}
			attrs := ""
			if d.Description != "" {
				attrs = " [label=" + quote(d.Description) + "]"
			}
			fmt.Fprintf(&w.b, "  %s -> %s%s;\n", quote(ref.String()), quote(req.String()), attrs)
		}
	}
}

func (w *dotWriter) finish() string {
	w.b.WriteString("}\n")
	return w.b.String()
}

func nodeStyle(it Item, st StateData) string {
	var s []string
	if it.External() {
		s = append(s, "style=dashed")
	}
	switch {
	case st.State == StateFailed:
		s = append(s, "color=red", "fontcolor=red")
	case st.State.InTransition():
		s = append(s, "color=orange")
	}
	s = append(s, "tooltip="+quote(it.String()))
	return ", " + strings.Join(s, ", ")
}

func failingStyle(why string) string {
	return ", color=red, fontcolor=red, peripheries=2, tooltip=" + quote("fails: "+why)
}

func diffStyle(have, want Item) string {
	switch {
	case have == nil:
		return ", color=darkgreen, fontcolor=darkgreen, tooltip=" + quote("create: "+want.String())
	case want == nil:
		return ", color=red, fontcolor=red, style=dashed, tooltip=" + quote("delete: "+have.String())
	case !want.Equal(have):
		return ", color=blue, fontcolor=blue, tooltip=" + quote("modify: "+want.String())
	}
	return ", tooltip=" + quote(want.String())
}

// quote makes a DOT double-quoted string.
func quote(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)
	return `"` + r.Replace(s) + `"`
}

// directRefs returns the items put directly into g (not its subgraphs).
func (g *Graph) directRefs() []ItemRef {
	if g.only != nil || g.parent == nil && g.only == nil && len(g.subs) == 0 {
		return g.Refs()
	}
	var refs []ItemRef
	for _, ref := range g.Refs() {
		n := g.r.node(ref)
		if o := n.ownerGraph(); o == nil && g.parent == nil || o == g {
			refs = append(refs, ref)
		}
	}
	return refs
}
