package host

import (
	"bytes"
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/sirupsen/logrus"

	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/items"
	"github.com/netagent/netagent/reconciler"
)

// LogOp logs a successful operation at info level and a failed one at
// warning level, and nothing the logger's level leaves out.
func TestLogOpLevels(t *testing.T) {
	r := &items.Route{Dst: netip.MustParsePrefix("10.0.0.0/24"), Dev: "eth0"}
	ok := reconciler.OpLogEntry{Ref: dg.Ref(r), Item: r, Op: reconciler.OpCreate}
	failed := ok
	failed.Err = errors.New("refused")
	for _, c := range []struct {
		level      logrus.Level
		ok, failed bool
	}{
		{logrus.InfoLevel, true, true},
		{logrus.WarnLevel, false, true},
		{logrus.ErrorLevel, false, false},
	} {
		var out bytes.Buffer
		log := logrus.New()
		log.SetOutput(&out)
		log.SetLevel(c.level)
		hook := LogOp(log)
		hook(ok)
		if got := strings.Contains(out.String(), "outcome=ok"); got != c.ok {
			t.Errorf("level %v: success logged %v, want %v: %q", c.level, got, c.ok, out.String())
		}
		out.Reset()
		hook(failed)
		if got := strings.Contains(out.String(), "outcome=failed") && strings.Contains(out.String(), "refused"); got != c.failed {
			t.Errorf("level %v: failure logged %v, want %v: %q", c.level, got, c.failed, out.String())
		}
		// through an entry (a FieldLogger with fields), as the daemon passes it
		out.Reset()
		LogOp(log.WithField("target", "x"))(failed)
		if got := out.Len() > 0; got != c.failed {
			t.Errorf("level %v, entry: failure logged %v, want %v", c.level, got, c.failed)
		}
	}
}

// The operations of one kernel batch share one duration: LogOp logs it
// once, on a "kernel batch" line, and the operations' lines carry none; an
// operation run on its own keeps its duration.
func TestLogOpBatchDuration(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var entries []reconciler.OpLogEntry
	for _, dst := range []string{"10.0.0.0/24", "10.0.1.0/24", "10.0.2.0/24"} {
		r := &items.Route{Dst: netip.MustParsePrefix(dst), Dev: "eth0"}
		entries = append(entries, reconciler.OpLogEntry{Ref: dg.Ref(r), Item: r, Op: reconciler.OpCreate,
			Start: start, End: start.Add(30 * time.Millisecond), Batch: 3})
	}
	alone := entries[0]
	alone.Batch, alone.Start, alone.End = 0, start.Add(time.Second), start.Add(time.Second+2*time.Millisecond)
	var out bytes.Buffer
	log := logrus.New()
	log.SetOutput(&out)
	log.SetFormatter(&logrus.TextFormatter{DisableTimestamp: true})
	hook := LogOp(log)
	for _, e := range append(entries, alone) {
		hook(e)
	}
	want := `level=info msg="kernel batch" duration=30ms ops=3
level=info msg="kernel operation" item="route/main 10.0.0.0/24 metric 0" op=create outcome=ok
level=info msg="kernel operation" item="route/main 10.0.1.0/24 metric 0" op=create outcome=ok
level=info msg="kernel operation" item="route/main 10.0.2.0/24 metric 0" op=create outcome=ok
level=info msg="kernel operation" duration=2ms item="route/main 10.0.0.0/24 metric 0" op=create outcome=ok
`
	if out.String() != want {
		t.Errorf("got\n%s\nwant\n%s", out.String(), want)
	}
}

// currentGraph puts each item read back into the subgraph its intended
// item is in (the root for the others); an item that is the intended item
// itself carries the dependencies the intended graph recorded, and one
// that differs is its own.
func TestCurrentGraph(t *testing.T) {
	a := &items.Route{Dst: netip.MustParsePrefix("10.0.0.0/24"), Dev: "eth0"}
	b := &items.Route{Dst: netip.MustParsePrefix("10.0.1.0/24"), Dev: "eth0"}
	intended := dg.New("intended")
	intended.EditSubGraph("file.json").Put(a)
	intended.EditSubGraph("file.json").Put(b)
	bKernel := &items.Route{Dst: b.Dst, Dev: "eth1"} // someone moved it
	foreign := &items.Foreign{Kind: items.TypeRoute, Desc: "10.9.0.0/16 proto 4"}
	link := &items.Link{IfName: "eth0", Index: 2}
	cur, _ := currentGraph([]dg.Item{link, a, bKernel, foreign}, intended)

	if got, _ := cur.Get(dg.Ref(a)); got != dg.Item(a) {
		t.Errorf("the intended item read back is %p, want the intended %p", got, a)
	}
	if got, _ := cur.Get(dg.Ref(b)); got != dg.Item(bKernel) {
		t.Errorf("a changed item is %v, want the kernel's", got)
	}
	for _, it := range []dg.Item{a, bKernel} {
		if s, _ := cur.ScopeOf(dg.Ref(it)); s != "file.json" {
			t.Errorf("%s in %q, want file.json", dg.Ref(it), s)
		}
		if deps := cur.Dependencies(dg.Ref(it)); len(deps) != 1 || deps[0].RequiredItem != items.InterfaceRef(it.(*items.Route).Dev) {
			t.Errorf("%s depends on %v", dg.Ref(it), deps)
		}
	}
	for _, it := range []dg.Item{link, foreign} {
		if s, ok := cur.ScopeOf(dg.Ref(it)); !ok || s != "" {
			t.Errorf("%s in %q (%v), want the root", dg.Ref(it), s, ok)
		}
	}
	if d := cur.Dependants(items.InterfaceRef("eth0")); len(d) != 1 || d[0] != dg.Ref(a) {
		t.Errorf("eth0's dependants %v, want %v", d, dg.Ref(a))
	}
	if cur.Len() != 4 {
		t.Errorf("%d items, want 4", cur.Len())
	}
}

// currentGraph finds the intended item read back whatever the order of
// the read-back (the cursor's guess right, wrong, or out of its window),
// with intended items missing, replaced or deleted, and returns the node
// of each item read back.
func TestCurrentGraphOrder(t *testing.T) {
	route := func(i int) *items.Route {
		return &items.Route{Dst: netip.MustParsePrefix(fmt.Sprintf("10.0.%d.0/24", i)), Dev: "eth0"}
	}
	intended := dg.New("intended")
	var want []*items.Route
	for i := range 40 {
		want = append(want, route(i))
		intended.EditSubGraph("file.json").Put(want[i])
	}
	replaced := route(3)
	intended.EditSubGraph("file.json").Put(replaced) // the journal's first node for it holds it now
	intended.Delete(dg.Ref(route(4)))
	for name, order := range map[string][]int{
		"same order":    {0, 1, 2, 3, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39},
		"gaps":          {0, 2, 5, 6, 9, 30, 31, 12, 13, 39},
		"reversed":      {39, 38, 37, 20, 19, 3, 2, 1, 0},
		"with a stray":  {0, 1, -1, 2, 5, -1, 6},
		"read twice":    {0, 1, 1, 2, 2, 5},
		"a copy of one": {0, 1, -2, 5, 6},
	} {
		var list []dg.Item
		for _, i := range order {
			switch i {
			case -1:
				list = append(list, &items.Foreign{Kind: items.TypeRoute, Desc: fmt.Sprintf("stray %d", len(list))})
			case -2:
				c := *want[2]
				list = append(list, &c)
			case 3:
				list = append(list, replaced)
			default:
				list = append(list, want[i])
			}
		}
		cur, nodes := currentGraph(list, intended)
		if len(nodes) != len(list) {
			t.Fatalf("%s: %d nodes for %d items", name, len(nodes), len(list))
		}
		for k, it := range list {
			ref := dg.Ref(it)
			if nodes[k] != cur.Node(ref) || nodes[k].Item() != it {
				t.Errorf("%s: item %d (%s): node %v, holding %v", name, k, ref, nodes[k].Ref(), nodes[k].Item())
			}
			if _, foreign := it.(*items.Foreign); foreign {
				continue
			}
			if s, _ := cur.ScopeOf(ref); s != "file.json" {
				t.Errorf("%s: %s in %q, want file.json", name, ref, s)
			}
			if deps := cur.Dependencies(ref); len(deps) != 1 || deps[0].RequiredItem != items.InterfaceRef("eth0") {
				t.Errorf("%s: %s depends on %v", name, ref, deps)
			}
		}
	}
}
