package depgraph_test

import (
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	dg "github.com/netagent/netagent/depgraph"
)

type item struct {
	typ, name, value string
	external         bool
	deps             []dg.Dependency
}

func (i *item) Type() string                  { return i.typ }
func (i *item) Name() string                  { return i.name }
func (i *item) External() bool                { return i.external }
func (i *item) String() string                { return i.typ + "/" + i.name + "=" + i.value }
func (i *item) Dependencies() []dg.Dependency { return i.deps }
func (i *item) Equal(o dg.Item) bool          { return i.value == o.(*item).value }

func mk(typ, name string, deps ...string) *item {
	it := &item{typ: typ, name: name}
	for _, d := range deps {
		t, n, _ := strings.Cut(d, "/")
		it.deps = append(it.deps, dg.Dependency{RequiredItem: dg.ItemRef{Type: t, Name: n}})
	}
	return it
}

func ref(s string) dg.ItemRef {
	t, n, _ := strings.Cut(s, "/")
	return dg.ItemRef{Type: t, Name: n}
}

func refStrings(refs []dg.ItemRef) []string {
	var out []string
	for _, r := range refs {
		out = append(out, r.String())
	}
	return out
}

func TestPutGetDeleteAndOrder(t *testing.T) {
	g := dg.New("g", mk("b", "2"), mk("a", "z"), mk("b", "1", "a/z"))
	if got := refStrings(g.Refs()); !slices.Equal(got, []string{"a/z", "b/1", "b/2"}) {
		t.Fatalf("order %v", got)
	}
	var seen []string
	for it := range g.Items() {
		seen = append(seen, dg.Ref(it).String())
	}
	if !slices.Equal(seen, []string{"a/z", "b/1", "b/2"}) {
		t.Fatalf("Items order %v", seen)
	}
	if _, ok := g.Get(ref("b/1")); !ok || g.Len() != 3 {
		t.Fatal("get failed")
	}
	if d := g.Dependants(ref("a/z")); !slices.Equal(refStrings(d), []string{"b/1"}) {
		t.Fatalf("dependants %v", d)
	}
	if !g.Delete(ref("b/1")) || g.Delete(ref("b/1")) {
		t.Fatal("delete not reporting presence")
	}
	if len(g.Dependants(ref("a/z"))) != 0 || g.Len() != 2 {
		t.Fatal("dependants index not updated on delete")
	}
}

func TestPutEqualIsNoChange(t *testing.T) {
	g := dg.New("g", mk("a", "1"))
	rev := g.Rev()
	g.Put(mk("a", "1"))
	if g.Rev() != rev {
		t.Fatal("putting an equal item counted as a change")
	}
	changed := mk("a", "1")
	changed.value = "v2"
	g.Put(changed)
	if g.Rev() == rev || !g.ModifiedSince(ref("a/1"), rev) {
		t.Fatal("modification not recorded")
	}
	refs, ok := g.ChangesSince(rev)
	if !ok || !slices.Equal(refStrings(refs), []string{"a/1"}) {
		t.Fatalf("changes %v %v", refs, ok)
	}
}

func TestDependantsReindexedOnModify(t *testing.T) {
	g := dg.New("g", mk("r", "x", "if/eth0"))
	g.Put(&item{typ: "r", name: "x", value: "moved", deps: []dg.Dependency{{RequiredItem: ref("if/eth1")}}})
	if len(g.Dependants(ref("if/eth0"))) != 0 || len(g.Dependants(ref("if/eth1"))) != 1 {
		t.Fatal("reverse index not following the new dependencies")
	}
}

func TestManyDependantsOfOneHub(t *testing.T) {
	g := dg.New("g")
	for i := 0; i < 1000; i++ {
		g.Put(mk("route", fmt.Sprint(i), "if/hub"))
	}
	for i := 0; i < 1000; i += 2 {
		g.Delete(ref(fmt.Sprintf("route/%d", i)))
	}
	if n := len(g.Dependants(ref("if/hub"))); n != 500 {
		t.Fatalf("%d dependants, want 500", n)
	}
}

func TestSubgraphsEditInPlaceAndItemView(t *testing.T) {
	g := dg.New("root")
	net := g.EditSubGraph("net")
	net.Put(mk("if", "eth0"))
	g.EditSubGraph("net/vlans").Put(mk("if", "eth0.100", "if/eth0"))
	g.EditSubGraph("fw").Put(mk("chain", "c1"))
	g.Put(mk("sysctl", "fwd"))
	if got := refStrings(g.SubGraph("net").Refs()); !slices.Equal(got, []string{"if/eth0", "if/eth0.100"}) {
		t.Fatalf("net subgraph %v", got)
	}
	if g.SubGraph("net/vlans").Path() != "net/vlans" || g.Len() != 4 {
		t.Fatal("nested path or root size wrong")
	}
	if p, _ := g.ScopeOf(ref("if/eth0.100")); p != "net/vlans" {
		t.Fatalf("scope %q", p)
	}
	// Moving an item by putting it into another subgraph.
	g.SubGraph("fw").Put(mk("if", "eth0"))
	if g.SubGraph("net").Contains(ref("if/eth0")) || !g.SubGraph("fw").Contains(ref("if/eth0")) {
		t.Fatal("item not moved")
	}
	view := g.ItemAsSubGraph(ref("chain/c1"))
	if got := refStrings(view.Refs()); !slices.Equal(got, []string{"chain/c1"}) {
		t.Fatalf("item view %v", got)
	}
	if !g.DeleteSubGraph("net") || g.Contains(ref("if/eth0.100")) || !g.Contains(ref("if/eth0")) {
		t.Fatal("DeleteSubGraph removed the wrong items")
	}
}

func TestJournalCompactionKeepsLatestOrForgets(t *testing.T) {
	g := dg.New("g", mk("a", "1"))
	mark := g.Rev()
	for i := 0; i < 5000; i++ {
		it := mk("a", "1")
		it.value = fmt.Sprint(i)
		g.Put(it)
	}
	refs, ok := g.ChangesSince(mark)
	if !ok || len(refs) == 0 || len(refs) > 2*g.Len()+1024 {
		t.Fatalf("journal not compacted: %d entries ok=%v", len(refs), ok)
	}
	if distinct := slices.Compact(refStrings(refs)); !slices.Equal(distinct, []string{"a/1"}) {
		t.Fatalf("changes %v", distinct)
	}
	for i := 0; i < 5000; i++ { // many deleted names: the journal forgets
		g.Put(mk("tmp", fmt.Sprint(i)))
		g.Delete(ref(fmt.Sprintf("tmp/%d", i)))
	}
	if _, ok := g.ChangesSince(mark); ok {
		t.Fatal("journal should have forgotten that far back")
	}
	if _, ok := g.ChangesSince(g.Rev()); !ok {
		t.Fatal("recent marks must stay usable")
	}
}

func TestCloneIsIndependent(t *testing.T) {
	g := dg.New("g", mk("a", "1"))
	g.EditSubGraph("s").Put(mk("b", "1", "a/1"))
	c := g.Clone()
	c.Delete(ref("a/1"))
	c.SubGraph("s").Put(mk("b", "2"))
	if g.Len() != 2 || c.Len() != 2 || g.SubGraph("s").Len() != 1 {
		t.Fatalf("clone shares state: g=%d c=%d", g.Len(), c.Len())
	}
	if len(g.Dependants(ref("a/1"))) != 1 {
		t.Fatal("original reverse index changed by the clone")
	}
}

func TestStateData(t *testing.T) {
	g := dg.New("g")
	g.PutWithState(mk("a", "1"), dg.StateData{State: dg.StateFailed, LastOp: dg.OpCreate})
	st, _ := g.State(ref("a/1"))
	if st.State != dg.StateFailed || st.State.String() != "failed" || st.LastOp.String() != "create" {
		t.Fatalf("%+v", st)
	}
	rev := g.Rev()
	g.SetState(ref("a/1"), dg.StateData{State: dg.StateCreated})
	if g.Rev() != rev {
		t.Fatal("a state change is not an item change")
	}
}

// requireDot finds Graphviz. The README's test command installs it; a bare
// `go test` by a developer without it skips with the reason.
func requireDot(t *testing.T) string {
	path, err := exec.LookPath("dot")
	if err != nil {
		if os.Getenv("CI") != "" || os.Geteuid() == 0 {
			t.Fatal("Graphviz `dot` is missing: run scripts/setup.sh (installs Debian's graphviz)")
		}
		t.Skip("Graphviz `dot` is not installed (scripts/setup.sh installs it)")
	}
	return path
}

func renderSVG(t *testing.T, dot string) string {
	cmd := exec.Command(requireDot(t), "-Tsvg")
	cmd.Stdin = strings.NewReader(dot)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("dot -Tsvg: %v\n%s\ninput:\n%s", err, out, dot)
	}
	return string(out)
}

func TestDOTRendersWithGraphviz(t *testing.T) {
	g := dg.New(`net "config"`)
	g.Put(&item{typ: "link", name: "eth0", external: true})
	route := mk("route", `default "via" \ gw`, "interface/eth0", "address/missing")
	route.deps[0].Description = "link up"
	g.EditSubGraph("interfaces").Put(mk("interface", "eth0", "link/eth0"))
	g.Put(route)
	g.PutWithState(mk("chain", "X"), dg.StateData{State: dg.StateFailed})
	dot := dg.DOT(g)
	for _, want := range []string{`"route/default \"via\" \\ gw" -> "interface/eth0" [label="link up"]`, "cluster_1", "style=dashed", "color=red", `"address/missing"`} {
		if !strings.Contains(dot, want) {
			t.Errorf("DOT lacks %q:\n%s", want, dot)
		}
	}
	svg := renderSVG(t, dot)
	if !strings.Contains(svg, "<svg") || !strings.Contains(svg, "interface/eth0") {
		t.Fatalf("no SVG:\n%s", svg)
	}
}

func TestDiffDOTShowsChanges(t *testing.T) {
	cur := dg.New("cur", mk("if", "eth0"), mk("addr", "old", "if/eth0"), mk("addr", "same", "if/eth0"))
	want := dg.New("want", mk("addr", "new", "if/eth0"), mk("addr", "same", "if/eth0"))
	changed := mk("if", "eth0")
	changed.value = "mtu 9000"
	want.Put(changed)
	dot := dg.DiffDOT(cur, want)
	for _, s := range []string{`"addr/new" [label="addr/new", color=darkgreen`, `"addr/old" [label="addr/old", color=red`, `"if/eth0" [label="if/eth0", color=blue`} {
		if !strings.Contains(dot, s) {
			t.Errorf("DiffDOT lacks %q:\n%s", s, dot)
		}
	}
	renderSVG(t, dot)
}

// Live nodes of one graph have distinct Index numbers, small (the number of
// a dropped node goes to a later one), and none is given again while the
// graph is held; a clone keeps them.
func TestNodeIndex(t *testing.T) {
	g := dg.New("g", mk("t", "a"), mk("t", "b", "t/c"))
	seen := map[int]dg.ItemRef{}
	for _, ref := range []dg.ItemRef{{Type: "t", Name: "a"}, {Type: "t", Name: "b"}, {Type: "t", Name: "c"}} {
		n := g.Node(ref)
		if other, dup := seen[n.Index()]; dup || n.Index() > 2 {
			t.Fatalf("%s has index %d (as %s)", ref, n.Index(), other)
		}
		seen[n.Index()] = ref
	}
	a := g.Node(dg.ItemRef{Type: "t", Name: "a"})
	g.Hold()
	g.Delete(a.Ref())
	d := g.NodeFor(dg.ItemRef{Type: "t", Name: "d"})
	if d.Index() == a.Index() {
		t.Fatal("a number given again while the graph is held")
	}
	g.Release()
	if !a.Dead() || !d.Dead() {
		t.Fatal("a or d not dropped")
	}
	e, f := g.NodeFor(dg.ItemRef{Type: "t", Name: "e"}), g.NodeFor(dg.ItemRef{Type: "t", Name: "f"})
	if got := []int{e.Index(), f.Index()}; !slices.Contains(got, a.Index()) || !slices.Contains(got, d.Index()) {
		t.Fatalf("e and f have %v, want a's %d and d's %d again", got, a.Index(), d.Index())
	}
	c := g.Clone()
	for _, ref := range g.Refs() {
		if c.Node(ref).Index() != g.Node(ref).Index() {
			t.Fatalf("clone: %s index %d, was %d", ref, c.Node(ref).Index(), g.Node(ref).Index())
		}
	}
}

// State data comes back exactly as set, whether the node packs it or keeps
// it aside (an error, values beyond a byte), and a reset leaves nothing.
func TestStateDataRoundTrip(t *testing.T) {
	g := dg.New("g", mk("a", "1"))
	now := time.Now() // with a monotonic reading
	for _, st := range []dg.StateData{
		{State: dg.StateCreated, LastOp: dg.OpModify, Since: now},
		{State: dg.StateFailed, LastOp: dg.OpCreate, LastErr: errors.New("boom"), Since: now},
		{State: dg.State(1000), LastOp: dg.Operation(200)},
		{State: dg.StateDeleting, LastOp: dg.OpDelete, Since: now.Add(time.Second)},
		{},
	} {
		g.SetState(ref("a/1"), st)
		got, _ := g.State(ref("a/1"))
		if got.State != st.State || got.LastOp != st.LastOp || got.LastErr != st.LastErr || got.Since != st.Since {
			t.Fatalf("state %+v, want %+v", got, st)
		}
		if c, _ := g.Clone().State(ref("a/1")); c != got {
			t.Fatalf("clone's state %+v, want %+v", c, got)
		}
	}
	g.PutWithState(mk("b", "1"), dg.StateData{State: dg.StateFailed, LastErr: errors.New("x")})
	g.Delete(ref("b/1"))
	g.Put(mk("b", "1"))
	if st, _ := g.State(ref("b/1")); st != (dg.StateData{State: dg.StateCreated}) {
		t.Fatalf("a deleted item's state survives: %+v", st)
	}
}

// A hub's dependants stay exact through removals (indexed past a
// threshold), additions after them and items naming the hub twice.
func TestHubDependantsThroughChurn(t *testing.T) {
	g := dg.New("g")
	want := map[string]bool{}
	for i := 0; i < 100; i++ {
		g.Put(mk("route", fmt.Sprint(i), "if/hub", "if/hub"))
		want[fmt.Sprintf("route/%d", i)] = true
	}
	for round := 0; round < 3; round++ {
		for i := round; i < 100; i += 3 {
			r := fmt.Sprintf("route/%d", i)
			if want[r] {
				g.Delete(ref(r))
			} else {
				g.Put(mk("route", fmt.Sprint(i), "if/hub"))
			}
			want[r] = !want[r]
		}
		got := map[string]bool{}
		for _, d := range g.Dependants(ref("if/hub")) {
			if got[d.String()] {
				t.Fatalf("round %d: %s listed twice", round, d)
			}
			got[d.String()] = true
		}
		for r, in := range want {
			if in != got[r] {
				t.Fatalf("round %d: %s dependant=%v, want %v", round, r, got[r], in)
			}
		}
		if len(got) != len(slices.Collect(func(yield func(string) bool) {
			for r, in := range want {
				if in && !yield(r) {
					return
				}
			}
		})) {
			t.Fatalf("round %d: %d dependants", round, len(got))
		}
	}
	for i := 0; i < 100; i++ {
		g.Delete(ref(fmt.Sprintf("route/%d", i)))
	}
	if n := g.Node(ref("if/hub")); n != nil {
		t.Fatalf("the hub's empty node outlives its dependants: %d left", len(n.Dependants()))
	}
}

// Node.External follows the item put at the node: an external item, a
// managed one put over it, none after a delete, and the clone's.
func TestNodeExternalFollowsTheItem(t *testing.T) {
	g := dg.New("g", &item{typ: "link", name: "eth0", external: true})
	n := g.Node(ref("link/eth0"))
	if !n.External() {
		t.Fatal("external item: Node.External false")
	}
	if c := g.Clone().Node(ref("link/eth0")); !c.External() {
		t.Fatal("clone: Node.External false")
	}
	g.Put(&item{typ: "link", name: "eth0", value: "managed"})
	if n.External() {
		t.Fatal("managed item put over the external one: Node.External true")
	}
	g.Put(&item{typ: "link", name: "eth0", value: "again", external: true})
	g.Put(mk("if", "eth0", "link/eth0")) // keeps the node after the delete
	g.Delete(ref("link/eth0"))
	if n.External() || n.Present() {
		t.Fatal("deleted item: Node.External or Present true")
	}
}

// A graph's path names the subgraphs from the root down, views of an item
// adding nothing, in a clone as in the original.
func TestPathOfSubgraphsViewsAndClones(t *testing.T) {
	g := dg.New("g")
	ab := g.EditSubGraph("a/b")
	ab.Put(mk("if", "x"))
	empty := g.EditSubGraph("").EditSubGraph("c")
	view := ab.ItemAsSubGraph(ref("if/x"))
	clone := g.Clone()
	for _, c := range []struct {
		g    *dg.Graph
		want string
	}{
		{g, ""}, {ab, "a/b"}, {g.SubGraph("a"), "a"}, {empty, "/c"}, {view, "a/b"},
		{g.ItemAsSubGraph(ref("if/x")), ""}, {clone.SubGraph("a/b"), "a/b"}, {clone, ""},
	} {
		if got := c.g.Path(); got != c.want {
			t.Errorf("%s: path %q, want %q", c.g.Name(), got, c.want)
		}
	}
	if s, _ := g.ScopeOf(ref("if/x")); s != "a/b" {
		t.Errorf("scope %q, want a/b", s)
	}
}

// Refs and Items stay in order through random puts and deletes, whether
// the order is sorted anew or the changes are merged into the last one,
// and a slice returned before a change is not changed by it.
func TestRefsStayInOrderThroughChanges(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	g := dg.New("g")
	want := map[dg.ItemRef]bool{}
	types := []string{"route", "addr", "link", "zz", "a"}
	for step := range 1000 {
		for range rng.IntN(40) {
			r := dg.ItemRef{Type: types[rng.IntN(len(types))], Name: fmt.Sprint(rng.IntN(200))}
			if rng.IntN(3) == 0 {
				g.Delete(r)
				delete(want, r)
				continue
			}
			deps := ""
			if rng.IntN(4) == 0 { // keeps a node without an item when deleted
				deps = fmt.Sprint("link/", rng.IntN(200))
			}
			if deps != "" {
				g.Put(mk(r.Type, r.Name, deps))
			} else {
				g.Put(mk(r.Type, r.Name))
			}
			want[r] = true
		}
		if step%50 == 0 { // many at once: sorted anew
			for k := range 300 + rng.IntN(300) {
				r := dg.ItemRef{Type: "bulk", Name: fmt.Sprint(k)}
				if step%100 == 0 {
					g.Put(mk(r.Type, r.Name))
					want[r] = true
				} else {
					g.Delete(r)
					delete(want, r)
				}
			}
		}
		if rng.IntN(3) == 0 {
			continue // several rounds of changes before a look
		}
		before := g.Refs()
		kept := slices.Clone(before)
		wantRefs := slices.SortedFunc(maps.Keys(want), dg.ItemRef.Compare)
		if !slices.Equal(before, wantRefs) {
			t.Fatalf("step %d: refs\n%v\nwant\n%v", step, before, wantRefs)
		}
		var items []dg.ItemRef
		for it := range g.Items() {
			items = append(items, dg.Ref(it))
		}
		if !slices.Equal(items, wantRefs) {
			t.Fatalf("step %d: items %v", step, items)
		}
		g.Put(mk("zz", "new"))
		want[ref("zz/new")] = true
		g.Refs()
		if !slices.Equal(before, kept) {
			t.Fatalf("step %d: a slice returned before was changed", step)
		}
	}
}

// Refs orders names that share long prefixes, differ only past 16 bytes,
// hold zero bytes or are empty exactly as ItemRef.Compare does.
func TestRefsOrderLongAndOddNames(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	g := dg.New("g")
	var want []dg.ItemRef
	seen := map[dg.ItemRef]bool{}
	for range 3000 {
		b := []byte("main 10.0.0.0/24 metric ")[:rng.IntN(25)]
		for range rng.IntN(4) {
			b = append(b, "\x00a\xffz"[rng.IntN(4)])
		}
		r := dg.ItemRef{Type: []string{"route", "addr"}[rng.IntN(2)], Name: string(b)}
		if !seen[r] {
			seen[r] = true
			want = append(want, r)
		}
		g.Put(mk(r.Type, r.Name))
	}
	slices.SortFunc(want, dg.ItemRef.Compare)
	if got := g.Refs(); !slices.Equal(got, want) {
		t.Fatalf("refs out of order:\n%q\nwant\n%q", got, want)
	}
}

// Unordered yields the same items as Items, deleted ones left out, in any
// order; a subgraph yields its own.
func TestUnordered(t *testing.T) {
	g := dg.New("g", mk("b", "2"), mk("a", "1"), mk("c", "3"))
	sub := g.EditSubGraph("sub")
	sub.Put(mk("d", "4"))
	g.Delete(dg.ItemRef{Type: "c", Name: "3"})
	names := func(seq func(func(dg.Item) bool)) []string {
		var out []string
		for it := range seq {
			out = append(out, it.Name())
		}
		slices.Sort(out)
		return out
	}
	if got := names(g.Unordered()); !slices.Equal(got, []string{"1", "2", "4"}) {
		t.Errorf("root: %v", got)
	}
	if got := names(sub.Unordered()); !slices.Equal(got, []string{"4"}) {
		t.Errorf("subgraph: %v", got)
	}
	for range g.Unordered() {
		break // stops when asked
	}
}

// Subgraphs deleted and made again, and a clone, keep every item's scope:
// a node names its subgraph by a number its root gives back when the
// subgraph goes.
func TestSubGraphScopesAfterDeleteAndClone(t *testing.T) {
	g := dg.New("g")
	g.EditSubGraph("a").Put(mk("t", "1"))
	g.EditSubGraph("b/c").Put(mk("t", "2"))
	g.Put(mk("t", "0"))
	if !g.DeleteSubGraph("a") {
		t.Fatal("no subgraph a")
	}
	g.EditSubGraph("d").Put(mk("t", "3"))
	g.EditSubGraph("a").Put(mk("t", "4"))
	want := map[string]string{"t/0": "", "t/2": "b/c", "t/3": "d", "t/4": "a"}
	for _, h := range []*dg.Graph{g, g.Clone()} {
		for r, scope := range want {
			if got, ok := h.ScopeOf(ref(r)); !ok || got != scope {
				t.Errorf("%s: scope %q %v, want %q", r, got, ok, scope)
			}
		}
		if h.Contains(ref("t/1")) {
			t.Error("t/1 outlived its subgraph")
		}
		if !h.SubGraph("b").Holds(h.NodeFor(ref("t/2"))) || h.SubGraph("d").Holds(h.NodeFor(ref("t/4"))) {
			t.Error("Holds does not follow the scopes")
		}
	}
}
