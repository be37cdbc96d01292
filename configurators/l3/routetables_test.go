package l3

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/internal/statefile"
	"github.com/netagent/netagent/items"
	"github.com/netagent/netagent/reconciler"
	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// newTablesEnv is a fake with a state directory; path is the route
// table record's file.
func newTablesEnv(t *testing.T) (e *fakeEnv, path string) {
	e = newFakeEnv(t)
	e.withUplink()
	dir := t.TempDir()
	e.k.UseStateDir(dir, fakeNs)
	return e, filepath.Join(dir, routeTableFile)
}

// recorded is the fake namespace's entry of the record (nil, false: none
// usable).
func recorded(e *fakeEnv) ([]uint32, bool) {
	tables, err := e.k.tableRecord().get()
	return tables, err == nil
}

// routesRead returns the names of netagent's routes a read-back with hint
// finds.
func routesRead(t *testing.T, e *fakeEnv, hint *dg.Graph) []string {
	t.Helper()
	got, err := e.k.ReadBack(hint)
	must(t, err)
	var out []string
	for _, it := range got {
		if it.Type() == items.TypeRoute {
			out = append(out, it.Name())
		}
	}
	slices.Sort(out)
	return out
}

// A batch records the tables it writes a route in before writing; a
// read-back then finds netagent's routes in the record's tables and in
// the hint's, and no others (the kernel's, the fake's, is asked for
// those tables only); a table taken out of the intent is read while it
// holds a route of ours, and forgotten when the batch that deletes its
// last route ran.
func TestFakeRouteTableRecord(t *testing.T) {
	e, _ := newTablesEnv(t)
	r100 := &items.Route{Dst: pfx("172.16.0.1/32"), Gw: ip("10.0.0.1"), Table: 100}
	rMain := &items.Route{Dst: pfx("172.16.0.2/32"), Gw: ip("10.0.0.1")}
	for _, err := range e.route.ApplyBatch(ctx, batchOps(reconciler.OpCreate, []*items.Route{r100, rMain})) {
		must(t, err)
	}
	if got, ok := recorded(e); !ok || !slices.Equal(got, []uint32{100, unix.RT_TABLE_MAIN}) {
		t.Fatalf("record after the creates: %v %v, want [100 254]", got, ok)
	}
	// a route of ours in a table neither recorded nor intended is not
	// asked for (only a record written by another build would miss it)
	e.k.addRoute(netlink.Route{Family: unix.AF_INET, Dst: ipnet("172.16.0.3/32"), Gw: ip("10.0.0.1").AsSlice(), Table: 300, Protocol: items.RouteProtocol})
	want := []string{rMain.Name(), r100.Name()}
	if got := routesRead(t, e, dg.New("intended", rMain)); !slices.Equal(got, want) {
		t.Errorf("read-back with table 100 out of the intent: %v, want %v", got, want)
	}
	if got := routesRead(t, e, dg.New("intended", rMain, &items.Route{Dst: pfx("172.16.0.4/32"), Gw: ip("10.0.0.1"), Table: 300})); !slices.Contains(got, "table 300 172.16.0.3/32 metric 0") {
		t.Errorf("read-back of an intent naming table 300: %v, want the route there", got)
	}
	for _, err := range e.route.ApplyBatch(ctx, batchOps(reconciler.OpDelete, []*items.Route{r100})) {
		must(t, err)
	}
	if got, ok := recorded(e); !ok || !slices.Equal(got, []uint32{unix.RT_TABLE_MAIN}) {
		t.Errorf("record after table 100's last route went: %v %v, want [254]", got, ok)
	}
}

// A record that cannot be used (none, damaged, out of bounds, another
// namespace's) makes the read-back read every table, so it finds all of
// netagent's routes; a dry run writes nothing; KeepRouteTables (a
// writer's) rebuilds it from the kernel and says so, and a whole record
// is left alone.
func TestFakeRouteTableRecordLost(t *testing.T) {
	for name, write := range map[string]func(path string) error{
		"none": func(string) error { return nil },
		"damaged": func(path string) error {
			return os.WriteFile(path, []byte("netagent-state 1 99 00\n{"), 0o600)
		},
		"table 0": func(path string) error {
			return statefile.SaveJSON(path, routeTablesFile{Namespaces: []nsTables{{NsIdentity: fakeNs, Tables: []uint32{0, 254}}}})
		},
		"too many": func(path string) error {
			many := make([]uint32, maxRecordedTables+1)
			for i := range many {
				many[i] = uint32(i + 1)
			}
			return statefile.SaveJSON(path, routeTablesFile{Namespaces: []nsTables{{NsIdentity: fakeNs, Tables: many}}})
		},
		"another namespace": func(path string) error {
			other := fakeNs
			other.NsID = "NS(0:2)"
			return statefile.SaveJSON(path, routeTablesFile{Namespaces: []nsTables{{NsIdentity: other, Tables: []uint32{254}}}})
		},
	} {
		t.Run(name, func(t *testing.T) {
			e, path := newTablesEnv(t)
			for _, table := range []int{254, 100, 1000} {
				e.k.addRoute(netlink.Route{Family: unix.AF_INET6, Dst: ipnet("2001:db8:1::1/128"), Gw: ip("2001:db8::1").AsSlice(), Table: table, Protocol: items.RouteProtocol})
			}
			must(t, write(path))
			before, _ := os.ReadFile(path)
			if got := routesRead(t, e, nil); len(got) != 3 {
				t.Errorf("read-back: %v, want the routes of all three tables", got)
			}
			if after, _ := os.ReadFile(path); string(after) != string(before) {
				t.Error("the read-back (a dry run's) wrote the record")
			}
			note, err := e.k.KeepRouteTables()
			must(t, err)
			if !strings.Contains(note, "rebuilt") || !strings.Contains(note, path) {
				t.Errorf("KeepRouteTables said %q, want the rebuild named with %s", note, path)
			}
			if got, ok := recorded(e); !ok || !slices.Equal(got, []uint32{100, 254, 1000}) {
				t.Errorf("rebuilt record: %v %v, want [100 254 1000]", got, ok)
			}
			if note, err := e.k.KeepRouteTables(); note != "" || err != nil {
				t.Errorf("KeepRouteTables over a whole record: %q %v, want nothing", note, err)
			}
		})
	}
}

// A batch over a lost record rebuilds it before it adds its tables: the
// entry never misses a table holding one of netagent's routes.
func TestFakeRouteTableRecordRebuiltByBatch(t *testing.T) {
	e, _ := newTablesEnv(t)
	e.k.addRoute(netlink.Route{Family: unix.AF_INET, Dst: ipnet("172.16.0.9/32"), Gw: ip("10.0.0.1").AsSlice(), Table: 77, Protocol: items.RouteProtocol})
	r := &items.Route{Dst: pfx("172.16.0.1/32"), Gw: ip("10.0.0.1"), Table: 100}
	for _, err := range e.route.ApplyBatch(ctx, batchOps(reconciler.OpCreate, []*items.Route{r})) {
		must(t, err)
	}
	if got, ok := recorded(e); !ok || !slices.Equal(got, []uint32{77, 100}) {
		t.Errorf("record after a batch over none: %v %v, want [77 100]", got, ok)
	}
}
