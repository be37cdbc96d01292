package items

import (
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// randomNftTable returns a table with every field of its chains, rules
// and sets set or not, strings that need escapes among them.
func randomNftTable(r *rand.Rand) NftTable {
	pick := func(vals ...string) string { return vals[r.IntN(len(vals))] }
	odd := func() string {
		return pick("", "eth0", "a<b>&c", "tab\there", "é", "\u2028", "quote\"back\\slash", "\xff")
	}
	t := NftTable{Family: pick("inet", "ip6"), Table: pick("netagent", "<t>")}
	for c := range r.IntN(4) {
		ch := NftChain{Name: pick("input", "c<"+strings.Repeat("x", c)), Type: pick("", "filter"), Hook: pick("", "input"),
			Policy: pick("", "drop"), Device: odd()}
		switch r.IntN(3) {
		case 1:
			ch.Priority = &NftPriority{Value: r.IntN(400) - 200}
		case 2:
			ch.Priority = &NftPriority{Name: pick("filter", "a<b")}
		}
		for range r.IntN(5) {
			rule := NftRule{IIfName: odd(), OIfName: odd(), Saddr: pick("", "10.0.0.0/8", "@mgmt"), Daddr: odd(),
				Protocol: pick("", "tcp", "6"), Sport: odd(), Dport: pick("", "22", "1000-2000"), ICMPType: odd(),
				Counter: r.IntN(2) == 0, Masquerade: r.IntN(2) == 0, SNAT: odd(), DNAT: odd(),
				Verdict: pick("", "accept", "jump"), Target: odd()}
			if r.IntN(2) == 0 {
				rule.CtState = []string{"established", "re<lated"}[:r.IntN(3)]
			}
			if r.IntN(2) == 0 {
				m := r.Uint32()
				rule.Mark = &m
			}
			if r.IntN(2) == 0 {
				rule.Vmap = &NftVmap{On: odd(), Map: odd()}
			}
			if r.IntN(2) == 0 {
				rule.Limit = &NftLimit{Rate: r.Uint64(), Per: odd(), Burst: uint32(r.IntN(2) * 7), Over: r.IntN(2) == 0}
			}
			if r.IntN(2) == 0 {
				rule.Log = &NftLog{Prefix: odd(), Level: pick("", "warn")}
			}
			if r.IntN(2) == 0 {
				rule.Redirect = &NftRedirect{Port: pick("", "8080")}
			}
			if r.IntN(2) == 0 {
				rule.Reject = &NftReject{With: odd()}
			}
			ch.Rules = append(ch.Rules, rule)
		}
		if r.IntN(6) == 0 {
			ch.Rules = []NftRule{} // empty, not nil: omitted all the same
		}
		t.Chains = append(t.Chains, ch)
	}
	for range r.IntN(3) {
		s := NftSet{Name: odd(), Type: pick("ipv4_addr", "inet_service"), Interval: r.IntN(2) == 0, Timeout: pick("", "1h")}
		for range r.IntN(4) {
			s.Elements = append(s.Elements, odd())
		}
		t.Sets = append(t.Sets, s)
	}
	if r.IntN(2) == 0 {
		t.Maps = []NftMap{{Name: "m", Type: "inet_service", Elements: []NftMapElement{{Key: "22", Verdict: "jump", Target: "<ssh>"}}}}
	}
	return t
}

// TestNftTableAppendJSON: AppendJSON writes exactly what json.Marshal
// does, and fails where it fails (a priority both named and offset).
func TestNftTableAppendJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for i := range 500 {
		tab := randomNftTable(r)
		want, err := json.Marshal(&tab)
		if err != nil {
			t.Fatal(err)
		}
		got, err := tab.AppendJSON([]byte("prefix"))
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != "prefix"+string(want) {
			t.Fatalf("table %d: AppendJSON\n%s\nwant (json.Marshal)\n%s", i, got, want)
		}
	}
	bad := NftTable{Family: "inet", Table: "t", Chains: []NftChain{{Name: "c", Hook: "input", Priority: &NftPriority{Name: "filter", Value: 3}}}}
	if _, err := json.Marshal(&bad); err == nil {
		t.Fatal("json.Marshal of a named priority with an offset did not fail")
	}
	if _, err := bad.AppendJSON(nil); err == nil {
		t.Error("AppendJSON of a named priority with an offset did not fail")
	}
}

// TestNftAppendJSONCoversFields: the encoders know every member of the
// types they write by hand, in the order json.Marshal writes them; a
// field added to one of them must be added to nftables_json.go too.
func TestNftAppendJSONCoversFields(t *testing.T) {
	for _, tc := range []struct {
		typ  reflect.Type
		want []string
	}{
		{reflect.TypeFor[NftTable](), []string{"family", "name", "chains", "sets", "maps"}},
		{reflect.TypeFor[NftChain](), []string{"name", "type", "hook", "priority", "policy", "device", "rules"}},
		{reflect.TypeFor[NftRule](), []string{"iifname", "oifname", "saddr", "daddr", "protocol", "sport", "dport", "icmpType",
			"ctState", "mark", "vmap", "limit", "counter", "log", "masquerade", "snat", "dnat", "redirect", "reject", "verdict", "target"}},
		{reflect.TypeFor[NftVmap](), []string{"on", "map"}},
		{reflect.TypeFor[NftLimit](), []string{"rate", "per", "burst", "over"}},
		{reflect.TypeFor[NftLog](), []string{"prefix", "level"}},
		{reflect.TypeFor[NftRedirect](), []string{"port"}},
		{reflect.TypeFor[NftReject](), []string{"with"}},
		{reflect.TypeFor[NftSet](), []string{"name", "type", "interval", "timeout", "elements"}},
	} {
		var got []string
		for f := range tc.typ.Fields() {
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if f.IsExported() && name != "-" {
				got = append(got, name)
			}
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s members %q, AppendJSON writes %q: update nftables_json.go", tc.typ, got, tc.want)
		}
	}
}
