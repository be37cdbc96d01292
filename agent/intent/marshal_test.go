package intent

import (
	"os"

	"encoding/json"
	"fmt"
	"github.com/netagent/netagent/items"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
)

// randomRoute returns a route with every field set or not, strings that
// need escapes among them.
func randomRoute(r *rand.Rand, i int) Route {
	pick := func(vals ...string) string { return vals[r.IntN(len(vals))] }
	rt := Route{
		To:     fmt.Sprintf("10.%d.%d.0/24", i>>8&255, i&255),
		Via:    pick("", "192.0.2.1", "fe80::1"),
		Dev:    pick("", "eth0", "a<b>&c", "tab\there", "é", "\u2028", "quote\"back\\slash", "\xff"),
		OnLink: r.IntN(2) == 0,
		Table:  TableID(pick2(r, 0, 100, 4294967295)),
		Metric: uint32(pick2(r, 0, 1, 1024)),
		Scope:  Scope(pick("", "link", "host")),
		Src:    pick("", "192.0.2.10"),
		Type:   RouteType(pick("", "blackhole")),
		MTU:    uint32(pick2(r, 0, 1400)),
		Pref:   RoutePref(pick("", "high")),
		Family: Family(pick("", "ipv6")),
		Origin: Origin{File: "not.json", Path: "not marshalled"},
	}
	if r.IntN(4) == 0 {
		rt.To = "default"
	}
	for range r.IntN(3) {
		rt.Nexthops = append(rt.Nexthops, Nexthop{Via: pick("", "192.0.2.2"), Dev: pick("", "eth1", "<x>"),
			Weight: pick2(r, 0, 1, 256), OnLink: r.IntN(2) == 0})
	}
	if r.IntN(8) == 0 {
		rt.Nexthops = []Nexthop{} // empty, not nil: omitted all the same
	}
	return rt
}

func pick2(r *rand.Rand, vals ...int) int { return vals[r.IntN(len(vals))] }

// TestMarshal: Intent.Marshal writes exactly what json.Marshal does, for
// short and long route lists, with and without the sections around them.
func TestMarshal(t *testing.T) {
	var cases []*Intent
	for _, name := range []string{"gateway.json", "bonded.json"} {
		in := mustParse(t, string(readTestdata(t, name)))
		cases = append(cases, in)
		merged, err := Merge(map[string]*Intent{name: in})
		if err != nil {
			t.Fatal(err)
		}
		cases = append(cases, merged)
	}
	r := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 63, 64, 65, 1000} {
		for _, around := range []bool{false, true} {
			in := &Intent{Version: Version}
			for i := range n {
				in.Routes = append(in.Routes, randomRoute(r, i))
			}
			if around {
				base := mustParse(t, string(readTestdata(t, "gateway.json")))
				in.Interfaces, in.Rules, in.Neighbors, in.Sysctls, in.Firewall = base.Interfaces, base.Rules, base.Neighbors, base.Sysctls, base.Firewall
				in.Sysctls = map[string]string{"net.ipv4.ip_forward": "1", "a<b": "&"}
			}
			cases = append(cases, in)
		}
	}
	cases = append(cases, &Intent{Version: 7, Routes: slices.Repeat([]Route{{To: "default"}}, 100)})
	// The nftables section by hand (items' TestNftTableAppendJSON covers
	// every field): below and above the size Marshal encodes it at, with
	// and without routes and the sections around it, an empty list.
	edge := mustParse(t, string(readFile(t, "../../examples/nftables-edge.json")))
	for _, n := range []int{0, 63, 64, 500} {
		for _, around := range []bool{false, true} {
			in := &Intent{Version: Version, Nftables: edge.Nftables}
			in.Nftables.Tables = slices.Clone(in.Nftables.Tables)
			tab := &in.Nftables.Tables[0]
			tab.Chains = slices.Clone(tab.Chains)
			for i := range n {
				tab.Chains[0].Rules = append(slices.Clip(tab.Chains[0].Rules), items.NftRule{
					Saddr: fmt.Sprintf("10.%d.0.0/16", i%256), IIfName: []string{"", "a<b>&c", "é", "\u2028"}[i%4], Counter: i%2 == 0, Verdict: "accept"})
			}
			if around {
				in.Interfaces, in.DNS = edge.Interfaces, &DNS{Nameservers: []string{"192.0.2.53"}}
				for i := range 70 {
					in.Routes = append(in.Routes, randomRoute(r, i))
				}
			}
			cases = append(cases, in)
		}
	}
	cases = append(cases, &Intent{Version: Version, Routes: slices.Repeat([]Route{{To: "default"}}, 64), Nftables: Nftables{Tables: []NftablesTable{}}},
		// Parts empty but not zero: an empty firewall, a drift policy alone.
		&Intent{Version: Version, Drift: "report", Routes: slices.Repeat([]Route{{To: "default"}}, 64), Firewall: Firewall{Chains: []Chain{}}, DNS: &DNS{}})
	for i, in := range cases {
		want, err := json.Marshal(in)
		if err != nil {
			t.Fatal(err)
		}
		got, err := in.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Errorf("case %d (%d routes, %d nftables rules and elements): Marshal\n%s\nwant (json.Marshal)\n%s", i, len(in.Routes), in.Nftables.size(), got, want)
		}
	}
}

// TestMarshalCoversIntent: Marshal knows every member of an Intent, a
// Route and a Nexthop, in the order json.Marshal writes them; a field
// added to one of them must be added to Marshal (marshal.go) too.
func TestMarshalCoversIntent(t *testing.T) {
	for _, tc := range []struct {
		typ  reflect.Type
		want []string
	}{
		{reflect.TypeFor[Intent](), []string{"version", "drift", "interfaces", "routes", "rules", "neighbors", "sysctls", "firewall", "nftables", "dns"}},
		{reflect.TypeFor[Route](), []string{"to", "via", "dev", "onlink", "nexthops", "table", "metric", "scope", "src", "type", "mtu", "pref", "family", "drift"}},
		{reflect.TypeFor[Nexthop](), []string{"via", "dev", "weight", "onlink"}},
	} {
		var got []string
		for f := range tc.typ.Fields() {
			name, _, _ := cutComma(f.Tag.Get("json"))
			if f.IsExported() && name != "-" {
				got = append(got, name)
			}
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s members %q, Marshal writes %q: update marshal.go", tc.typ, got, tc.want)
		}
	}
}

func cutComma(tag string) (string, string, bool) {
	for i := range len(tag) {
		if tag[i] == ',' {
			return tag[:i], tag[i+1:], true
		}
	}
	return tag, "", false
}

func readFile(t testing.TB, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}
