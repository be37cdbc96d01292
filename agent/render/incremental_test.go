package render

import (
	"fmt"
	"math/rand/v2"
	"net/netip"
	"reflect"
	"slices"
	"testing"

	"github.com/netagent/netagent/agent/intent"
	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/items/lease4"
)

// randomRoute returns one of the routes an edit may write: via a gateway
// with or without a device, on-link, IPv6, multipath, with a preferred
// source, a drift policy, another table or metric, and invalid ones (an
// unknown device, a gateway of the wrong family, a bad prefix).
func randomRoute(r *rand.Rand) intent.Route {
	dst := fmt.Sprintf("10.%d.%d.0/24", r.IntN(4), r.IntN(8))
	switch r.IntN(16) {
	case 0:
		return intent.Route{To: dst, Via: "192.0.2.1", Dev: "eth0"}
	case 1:
		return intent.Route{To: fmt.Sprintf("203.0.%d.0/24", 112+r.IntN(3)), Dev: "eth1"} // on-link
	case 2:
		return intent.Route{To: dst, Via: "203.0.113.1"} // via an on-link route
	case 3:
		return intent.Route{To: fmt.Sprintf("2001:db8:%x::/48", r.IntN(8)), Via: "2001:db8::1"}
	case 4:
		return intent.Route{To: dst, Nexthops: []intent.Nexthop{{Via: "192.0.2.1"}, {Via: "198.51.100.1", Weight: 1 + r.IntN(3)}}}
	case 5:
		return intent.Route{To: dst, Via: "192.0.2.1", Src: "192.0.2.10"}
	case 6:
		return intent.Route{To: dst, Via: "192.0.2.1", Drift: intent.DriftReport}
	case 7:
		return intent.Route{To: dst, Via: "198.51.100.1", Table: 100 + intent.TableID(r.IntN(2)), Metric: uint32(r.IntN(3))}
	case 8:
		return intent.Route{To: dst, Via: "192.0.2.1", Dev: "eth9"} // no such device
	case 9:
		return intent.Route{To: dst, Via: "2001:db8::1"} // families disagree
	case 10:
		return intent.Route{To: "10.300.0.0/24", Via: "192.0.2.1"} // bad prefix
	case 11:
		return intent.Route{To: "192.0.2.0/24", Dev: "eth0", Via: "192.0.2.1"} // the kernel's own prefix route, with a gateway
	case 12:
		return intent.Route{To: fmt.Sprintf("2001:db8:%x::/48", r.IntN(8)), Dev: "eth2", Via: "2001:db8::1"} // IPv6 off on eth2
	case 13:
		return intent.Route{To: "0.0.0.0/0", Via: "10.77.0.254", Metric: uint32(r.IntN(2)) * 100} // the lease's default route's place
	case 14:
		return intent.Route{To: dst, Via: "10.77.0.1"} // via the leased subnet
	default:
		return intent.Route{To: dst, Via: "192.0.2.1", MTU: 1400}
	}
}

// editFacts: eth3 holds a lease, whose default route (metric 0) an intent
// route may take the place of, and whose subnet holds gateways.
var editFacts = Facts{Leases: map[string]*lease4.Lease{"eth3": {Interface: "eth3",
	Address: netip.MustParsePrefix("10.77.0.100/24"), Router: netip.MustParseAddr("10.77.0.1")}}}

// randomFiles returns two files, a.json holding the interfaces and b.json
// only routes, that render without error.
func randomFiles(t *testing.T, r *rand.Rand) map[string]*intent.Intent {
	for {
		a := &intent.Intent{Version: intent.Version,
			Interfaces: []intent.Interface{
				{Name: "eth0", Type: "physical", Addresses: []string{"192.0.2.10/24", "2001:db8::10/64"}},
				{Name: "eth1", Type: "physical", Addresses: []string{"198.51.100.10/24"}},
				{Name: "eth2", Type: "physical"},
				{Name: "eth3", Type: "physical", DHCP4: &intent.DHCP4{}},
			},
			Sysctls: map[string]string{"net.ipv6.conf.eth2.disable_ipv6": "1"},
		}
		b := &intent.Intent{Version: intent.Version}
		if r.IntN(3) == 0 {
			b.Drift = intent.DriftIgnore
		}
		for range 1 + r.IntN(12) {
			a.Routes = append(a.Routes, randomRoute(r))
		}
		for range 1 + r.IntN(12) {
			b.Routes = append(b.Routes, randomRoute(r))
		}
		files := map[string]*intent.Intent{"a.json": a, "b.json": b}
		if _, err := RenderFilesWith(clonedFiles(files), editFacts); err == nil {
			return files
		}
	}
}

// clonedFiles copies the files deep enough that rendering them (Validate
// fills derived fields) does not touch the originals.
func clonedFiles(files map[string]*intent.Intent) map[string]*intent.Intent {
	out := map[string]*intent.Intent{}
	for n, in := range files {
		c := *in
		c.Routes = slices.Clone(in.Routes)
		out[n] = &c
	}
	return out
}

// randomEdit returns file's next version: a route changed, added, deleted
// or moved, several of those, or (rarely) an address changed too.
func randomEdit(r *rand.Rand, in *intent.Intent) *intent.Intent {
	c := *in
	c.Routes = slices.Clone(in.Routes)
	for range 1 + r.IntN(3) {
		switch k := r.IntN(10); {
		case k < 4 && len(c.Routes) > 0:
			c.Routes[r.IntN(len(c.Routes))] = randomRoute(r)
		case k < 7:
			c.Routes = slices.Insert(c.Routes, r.IntN(len(c.Routes)+1), randomRoute(r))
		case k < 9 && len(c.Routes) > 0:
			i := r.IntN(len(c.Routes))
			c.Routes = slices.Delete(c.Routes, i, i+1)
		case len(c.Interfaces) > 0:
			c.Interfaces = slices.Clone(c.Interfaces)
			c.Interfaces[1].Addresses = []string{fmt.Sprintf("198.51.100.%d/24", 10+r.IntN(2))}
		}
	}
	return &c
}

// TestRenderRouteEditMatchesFullRender applies random route edits to random
// two-file intents: whenever RenderRouteEdit answers, the previous graph
// with the edit applied must be the graph RenderFiles renders from the new
// files, item for item (subgraph and dependencies included), with the same
// drift policies; and when the new files do not render, it must not
// answer.
func TestRenderRouteEditMatchesFullRender(t *testing.T) {
	r := rand.New(rand.NewPCG(10, 2026))
	var answered, valid int
	for i := range 1000 {
		files := randomFiles(t, r)
		name := []string{"a.json", "b.json"}[r.IntN(2)]
		prevGraph, err := RenderFilesWith(clonedFiles(files), editFacts)
		if err != nil {
			t.Fatal(err)
		}
		prevDrift, err := DriftOf(clonedFiles(files))
		if err != nil {
			t.Fatal(err)
		}
		next := clonedFiles(files)
		next[name] = randomEdit(r, files[name])
		want, wantErr := RenderFilesWith(clonedFiles(next), editFacts)
		edit, ok := RenderRouteEdit(next, name, files[name], editFacts, prevGraph.Contains)
		if wantErr == nil {
			valid++
		}
		if !ok {
			continue
		}
		answered++
		if wantErr != nil {
			t.Fatalf("case %d: RenderRouteEdit answered %+v, but the new files do not render: %v\nbefore: %+v\nafter: %+v",
				i, edit, wantErr, files[name].Routes, next[name].Routes)
		}
		edit.Apply(prevGraph)
		if got, want := describe(prevGraph), describe(want); got != want {
			t.Fatalf("case %d: the edited graph differs from the full render\nbefore: %+v\nafter: %+v\n got:\n%s\nwant:\n%s",
				i, files[name].Routes, next[name].Routes, got, want)
		}
		for _, ref := range edit.Removed {
			delete(prevDrift, ref)
		}
		for ref, p := range edit.Drifts {
			if prevDrift == nil {
				prevDrift = DriftPolicies{}
			}
			prevDrift[ref] = p
		}
		wantDrift, err := DriftOf(clonedFiles(next))
		if err != nil {
			t.Fatal(err)
		}
		if len(prevDrift) != 0 || len(wantDrift) != 0 {
			if !reflect.DeepEqual(prevDrift, wantDrift) {
				t.Fatalf("case %d: drift policies %v, want %v", i, prevDrift, wantDrift)
			}
		}
	}
	t.Logf("%d of %d valid edits rendered on their own", answered, valid)
	if answered < valid/3 {
		t.Errorf("only %d of %d valid edits rendered on their own", answered, valid)
	}
}

// TestRenderRouteEditFallsBack: what the edit cannot render on its own.
func TestRenderRouteEditFallsBack(t *testing.T) {
	base := &intent.Intent{Version: intent.Version,
		Interfaces: []intent.Interface{{Name: "eth0", Type: "physical", Addresses: []string{"192.0.2.10/24"}}},
		Routes: []intent.Route{
			{To: "10.0.0.0/24", Via: "192.0.2.1"},
			{To: "203.0.113.0/24", Dev: "eth0"},
		},
	}
	g, err := RenderFiles(map[string]*intent.Intent{"a.json": base})
	if err != nil {
		t.Fatal(err)
	}
	edited := func(f func(in *intent.Intent)) *intent.Intent {
		c := *base
		c.Routes = slices.Clone(base.Routes)
		c.Interfaces = slices.Clone(base.Interfaces)
		f(&c)
		return &c
	}
	for name, next := range map[string]*intent.Intent{
		"an address": edited(func(in *intent.Intent) { in.Interfaces[0].Addresses = []string{"192.0.2.11/24"} }),
		"on-link added": edited(func(in *intent.Intent) {
			in.Routes = append(in.Routes, intent.Route{To: "203.0.114.0/24", Dev: "eth0"})
		}),
		"on-link gone": edited(func(in *intent.Intent) { in.Routes = in.Routes[:1] }),
		"duplicate": edited(func(in *intent.Intent) {
			in.Routes = append(in.Routes, intent.Route{To: "10.0.0.0/24", Via: "192.0.2.2"})
		}),
		"invalid":        edited(func(in *intent.Intent) { in.Routes[0].Via = "2001:db8::1" }),
		"no routes left": edited(func(in *intent.Intent) { in.Routes = nil }),
	} {
		if edit, ok := RenderRouteEdit(map[string]*intent.Intent{"a.json": next}, "a.json", base, Facts{}, g.Contains); ok {
			t.Errorf("%s: rendered on its own: %+v", name, edit)
		}
	}
	next := edited(func(in *intent.Intent) { in.Routes[0].Via = "192.0.2.2" })
	edit, ok := RenderRouteEdit(map[string]*intent.Intent{"a.json": next}, "a.json", base, Facts{}, g.Contains)
	if !ok || len(edit.Removed) != 1 || len(edit.Added) != 1 || edit.Removed[0] != dg.Ref(edit.Added[0]) {
		t.Errorf("a gateway changed: %+v, %v; want the route's item replaced", edit, ok)
	}
}

// TestSameRouteNamesEveryField: sameRoute compares every field of
// intent.Route but Origin; a field added to Route must be added there.
func TestSameRouteNamesEveryField(t *testing.T) {
	typ := reflect.TypeFor[intent.Route]()
	for i := range typ.NumField() {
		f := typ.Field(i)
		if f.Name == "Origin" {
			continue
		}
		a, b := intent.Route{}, intent.Route{}
		v := reflect.ValueOf(&b).Elem().Field(i)
		switch v.Kind() {
		case reflect.String:
			v.SetString("x")
		case reflect.Bool:
			v.SetBool(true)
		case reflect.Uint32, reflect.Uint64, reflect.Uint:
			v.SetUint(1)
		case reflect.Int:
			v.SetInt(1)
		case reflect.Slice:
			v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		default:
			t.Fatalf("field %s: kind %s not handled by this test", f.Name, v.Kind())
		}
		if sameRoute(&a, &b) {
			t.Errorf("sameRoute ignores Route.%s", f.Name)
		}
	}
}
