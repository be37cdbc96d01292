package nftables

import (
	"reflect"
	"testing"

	gnft "github.com/google/nftables"

	"github.com/netagent/netagent/items"
)

// TestCodecRoundTrip: every match and statement of the model encodes to
// expressions that decode to the same rule, in every family that has it.
func TestCodecRoundTrip(t *testing.T) {
	mark := uint32(0x2a)
	sets := setTypes{"v4": "ipv4_addr", "v6": "ipv6_addr", "ports": "inet_service"}
	for _, tc := range []struct {
		family string
		r      items.NftRule
	}{
		{"inet", items.NftRule{IIfName: "lan0", OIfName: "wan0", Saddr: "10.0.0.0/8", Daddr: "192.0.2.1", Protocol: "tcp",
			Sport: "1000-2000", Dport: "22", CtState: []string{"established", "related", "untracked"}, Mark: &mark, Counter: true, Verdict: "accept"}},
		{"inet", items.NftRule{Saddr: "2001:db8::/32", Daddr: "@v6", Protocol: "udp", Dport: "@ports", Verdict: "jump", Target: "other"}},
		{"ip", items.NftRule{Saddr: "@v4", Protocol: "icmp", Verdict: "drop"}},
		{"ip", items.NftRule{OIfName: "wan0", Masquerade: true}},
		{"ip", items.NftRule{IIfName: "wan0", Protocol: "tcp", Dport: "8443", DNAT: "192.168.1.10:443"}},
		{"ip6", items.NftRule{SNAT: "2001:db8::1", Verdict: "return"}},
		{"inet", items.NftRule{Protocol: "udp", DNAT: "[2001:db8::2]:53", Verdict: "goto", Target: "x"}},
		{"netdev", items.NftRule{Protocol: "17", Mark: &mark}},
	} {
		exprs, err := encodeRule(tc.family, &tc.r, sets)
		if err != nil {
			t.Fatalf("encode %+v: %v", tc.r, err)
		}
		got, err := decodeRule(exprs)
		if err != nil {
			t.Fatalf("decode %+v: %v", tc.r, err)
		}
		want := tc.r
		if want.Protocol == "17" {
			want.Protocol = "udp"
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: round trip\n got  %+v\n want %+v", tc.family, got, want)
		}
	}
}

// TestSetElementsRoundTrip: an interval set's prefixes, ranges and single
// values come back in key order, spelled canonically.
func TestSetElementsRoundTrip(t *testing.T) {
	for _, s := range []items.NftSet{
		{Name: "a", Type: "ipv4_addr", Interval: true, Elements: []string{"198.51.100.7", "10.0.0.0/8", "192.0.2.10-192.0.2.20", "255.255.255.255"}},
		{Name: "p", Type: "inet_service", Interval: true, Elements: []string{"8000-8080", "22"}},
		{Name: "h", Type: "ipv6_addr", Elements: []string{"2001:db8::2", "2001:db8::1"}},
	} {
		_, elems, err := encodeSet(&gnft.Table{Name: "t"}, s)
		if err != nil {
			t.Fatal(err)
		}
		got := decodeElements(s.Type, s.Interval, elems)
		if want := (&items.NftTable{Sets: []items.NftSet{s}}).Canonical().Sets[0].Elements; !reflect.DeepEqual(got, want) {
			t.Errorf("set %s: got %q, want %q", s.Name, got, want)
		}
	}
}
