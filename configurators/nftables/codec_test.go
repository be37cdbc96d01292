package nftables

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	gnft "github.com/google/nftables"
	"github.com/google/nftables/expr"
	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"

	"github.com/netagent/netagent/items"
)

// codecSets are the sets codecCases' lookups name.
var codecSets = setTypes{"v4": "ipv4_addr", "v6": "ipv6_addr", "ports": "inet_service"}

type codecCase struct {
	family string
	r      items.NftRule
}

// codecCases are rules of every match and statement the codec knows.
func codecCases() []codecCase {
	mark := uint32(0x2a)
	return []codecCase{
		{"inet", items.NftRule{IIfName: "lan0", OIfName: "wan0", Saddr: "10.0.0.0/8", Daddr: "192.0.2.1", Protocol: "tcp",
			Sport: "1000-2000", Dport: "22", CtState: []string{"established", "related", "untracked"}, Mark: &mark, Counter: true, Verdict: "accept"}},
		{"inet", items.NftRule{Saddr: "2001:db8::/32", Daddr: "@v6", Protocol: "udp", Dport: "@ports", Verdict: "jump", Target: "other"}},
		{"ip", items.NftRule{Saddr: "@v4", Protocol: "icmp", Verdict: "drop"}},
		{"ip", items.NftRule{OIfName: "wan0", Masquerade: true}},
		{"ip", items.NftRule{IIfName: "wan0", Protocol: "tcp", Dport: "8443", DNAT: "192.168.1.10:443"}},
		{"ip6", items.NftRule{SNAT: "2001:db8::1", Verdict: "return"}},
		{"inet", items.NftRule{Protocol: "udp", DNAT: "[2001:db8::2]:53", Verdict: "goto", Target: "x"}},
		{"netdev", items.NftRule{Protocol: "17", Mark: &mark}},
		{"inet", items.NftRule{Protocol: "icmp", ICMPType: "echo-request", Limit: &items.NftLimit{Rate: 10, Per: "second"}, Verdict: "accept"}},
		{"inet", items.NftRule{Protocol: "icmpv6", ICMPType: "nd-neighbor-solicit", Verdict: "accept"}},
		{"ip6", items.NftRule{Protocol: "58", ICMPType: "200", Verdict: "drop"}},
		{"inet", items.NftRule{Limit: &items.NftLimit{Rate: 3, Per: "minute", Burst: 20, Over: true}, Counter: true,
			Log: &items.NftLog{Prefix: "over: ", Level: "info"}, Verdict: "drop"}},
		{"inet", items.NftRule{Log: &items.NftLog{}}},
		{"inet", items.NftRule{Log: &items.NftLog{Level: "audit"}}},
		{"inet", items.NftRule{Reject: &items.NftReject{}}},
		{"inet", items.NftRule{Protocol: "tcp", Dport: "22", Reject: &items.NftReject{With: "tcp reset"}}},
		{"inet", items.NftRule{Reject: &items.NftReject{With: "icmp host-unreachable"}}},
		{"inet", items.NftRule{Saddr: "2001:db8::/32", Reject: &items.NftReject{With: "icmpv6 admin-prohibited"}}},
		{"inet", items.NftRule{Reject: &items.NftReject{With: "icmpv6 7"}}},
		{"inet", items.NftRule{Reject: &items.NftReject{With: "icmpx no-route"}}},
		{"ip", items.NftRule{Reject: &items.NftReject{}}},
		{"ip6", items.NftRule{Reject: &items.NftReject{}}},
		{"ip6", items.NftRule{Reject: &items.NftReject{With: "icmpv6 addr-unreachable"}}},
		{"inet", items.NftRule{Redirect: &items.NftRedirect{}}},
		{"inet", items.NftRule{Protocol: "tcp", Dport: "80", Redirect: &items.NftRedirect{Port: "8080"}}},
		{"ip", items.NftRule{Protocol: "udp", Redirect: &items.NftRedirect{Port: "5000-5010"}}},
		{"ip", items.NftRule{Protocol: "tcp", DNAT: "192.0.2.1:1000-2000"}},
		{"ip", items.NftRule{DNAT: "192.0.2.1-192.0.2.9"}},
		{"inet", items.NftRule{Protocol: "tcp", SNAT: "192.0.2.1-192.0.2.9:1024-2048"}},
		{"ip6", items.NftRule{Protocol: "udp", SNAT: "[2001:db8::1-2001:db8::9]:53"}},
		{"inet", items.NftRule{Saddr: "!@v4", Daddr: "!@v6", Protocol: "tcp", Sport: "!@ports", Verdict: "drop"}},
	}
}

// TestRuleMessageAsLibrary: ruleMessage marshals a rule, appended or
// inserted, exactly as the library's AddRule and InsertRule do (but the
// flags the batch clears: the ack and the echo, which sendBatch sets).
func TestRuleMessageAsLibrary(t *testing.T) {
	var got []netlink.Message
	c, err := gnft.New(gnft.WithTestDial(func(req []netlink.Message) ([]netlink.Message, error) {
		if req == nil {
			return []netlink.Message{{Header: netlink.Header{Type: netlink.Error}, Data: make([]byte, 20)}}, nil
		}
		got = append(got, req[1:len(req)-1]...)
		return nil, nil
	}))
	if err != nil {
		t.Fatal(err)
	}
	for i, tc := range codecCases() {
		exprs, err := encodeRule(tc.family, &tc.r, codecSets)
		if err != nil {
			t.Fatal(err)
		}
		tab := &gnft.Table{Family: families[tc.family], Name: "netagent"}
		for _, before := range []uint64{0, 42} {
			rule := &gnft.Rule{Table: tab, Chain: &gnft.Chain{Table: tab, Name: "input"}, Exprs: exprs, Position: before}
			if before != 0 {
				c.InsertRule(rule)
			} else {
				c.AddRule(rule)
			}
			got = nil
			if err := c.Flush(); err != nil {
				t.Fatal(err)
			}
			if len(got) != 1 {
				t.Fatalf("case %d: the library marshalled %d messages", i, len(got))
			}
			want := got[0]
			want.Header.Flags &^= netlink.Acknowledge | unix.NLM_F_ECHO
			m, err := ruleMessage(tab, "input", exprs, before)
			if err != nil {
				t.Fatal(err)
			}
			if m.Header.Type != want.Header.Type || m.Header.Flags != want.Header.Flags || !bytes.Equal(m.Data, want.Data) {
				t.Errorf("case %d (%+v), before %d:\n got  %v %x\n want %v %x", i, tc.r, before, m.Header, m.Data, want.Header, want.Data)
			}
		}
	}
}

// TestCodecRoundTrip: every match and statement of the model encodes to
// expressions that decode to the same rule, in every family that has it,
// as the table's Canonical compares it (an ip6 table's icmpv6 reject
// reads back as icmp, the kernel's expression being the same).
func TestCodecRoundTrip(t *testing.T) {
	for _, tc := range codecCases() {
		exprs, err := encodeRule(tc.family, &tc.r, codecSets)
		if err != nil {
			t.Fatalf("encode %+v: %v", tc.r, err)
		}
		got, err := decodeRule(exprs)
		if err != nil {
			t.Fatalf("decode %+v: %v", tc.r, err)
		}
		table := func(r items.NftRule) items.NftTable {
			return (&items.NftTable{Family: tc.family, Chains: []items.NftChain{{Name: "c", Rules: []items.NftRule{r}}}}).Canonical()
		}
		if g, w := table(got), table(tc.r); !reflect.DeepEqual(g, w) {
			t.Errorf("%s: round trip\n got  %s\n want %s", tc.family, ruleJSON(g.Chains[0].Rules[0]), ruleJSON(w.Chains[0].Rules[0]))
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
		// Adjacent ranges: the end of one is the start of the next.
		{Name: "adj", Type: "ipv4_addr", Interval: true, Elements: []string{"10.0.0.0/24", "10.0.1.0/24", "10.0.2.0-10.0.2.9"}},
		{Name: "adjp", Type: "inet_service", Interval: true, Elements: []string{"1-9", "10-19", "20"}},
	} {
		elems := allElements(t, s)
		// The kernel dumps in its own order (the rbtree's: descending).
		slices.Reverse(elems)
		got := decodeElements(s.Type, s.Interval, elems)
		if want := (&items.NftTable{Sets: []items.NftSet{s}}).Canonical().Sets[0].Elements; !reflect.DeepEqual(got, want) {
			t.Errorf("set %s: got %q, want %q", s.Name, got, want)
		}
	}
}

// allElements is every element setElements gives for s, copied out of
// its buffer; no call has more than elemsPerMessage.
func allElements(t *testing.T, s items.NftSet) []gnft.SetElement {
	t.Helper()
	var out []gnft.SetElement
	err := setElements(s, func(chunk []gnft.SetElement) error {
		if len(chunk) == 0 || len(chunk) > elemsPerMessage {
			t.Errorf("set %s: a message of %d elements", s.Name, len(chunk))
		}
		for _, e := range chunk {
			e.Key = slices.Clone(e.Key)
			out = append(out, e)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestSetElementsChunked: a set larger than a message is given in
// messages of elemsPerMessage elements (an interval's end leading the
// next when its start ended the last), and comes back whole.
func TestSetElementsChunked(t *testing.T) {
	for _, s := range []items.NftSet{
		{Name: "ranges", Type: "ipv4_addr", Interval: true},
		{Name: "hosts", Type: "ipv4_addr"},
	} {
		for i := range 2*elemsPerMessage + 501 {
			if s.Interval {
				s.Elements = append(s.Elements, fmt.Sprintf("10.%d.%d.0-10.%d.%d.9", i>>8, i&255, i>>8, i&255))
			} else {
				s.Elements = append(s.Elements, fmt.Sprintf("10.%d.%d.1", i>>8, i&255))
			}
		}
		elems := allElements(t, s)
		if want := len(s.Elements) * int(1+btoi(s.Interval)); len(elems) != want {
			t.Fatalf("set %s: %d elements, want %d", s.Name, len(elems), want)
		}
		slices.Reverse(elems)
		got := decodeElements(s.Type, s.Interval, elems)
		if want := (&items.NftTable{Sets: []items.NftSet{s}}).Canonical().Sets[0].Elements; !reflect.DeepEqual(got, want) {
			t.Errorf("set %s: %d elements back, want %d (first %q, want %q)", s.Name, len(got), len(want), got[:1], want[:1])
		}
	}
	bad := items.NftSet{Name: "bad", Type: "ipv4_addr", Elements: append(slices.Repeat([]string{"10.0.0.1"}, elemsPerMessage+3), "not-an-address")}
	if err := setElements(bad, func([]gnft.SetElement) error { return nil }); err == nil || !strings.Contains(err.Error(), "set bad") {
		t.Errorf("a bad element: %v, want an error naming set bad", err)
	}
}

func ruleJSON(r items.NftRule) string {
	b, _ := json.Marshal(r)
	return string(b)
}

// TestCodecStatementsAsNft: the expressions are those nft writes for the
// same rule (nft --debug=netlink add rule, nftables 1.0.6).
func TestCodecStatementsAsNft(t *testing.T) {
	l4 := func(p byte) []expr.Any {
		return []expr.Any{&expr.Meta{Key: expr.MetaKeyL4PROTO, Register: 1}, cmpEq([]byte{p})}
	}
	nfp := func(p byte) []expr.Any {
		return []expr.Any{&expr.Meta{Key: expr.MetaKeyNFPROTO, Register: 1}, cmpEq([]byte{p})}
	}
	imm := func(r uint32, b ...byte) expr.Any { return &expr.Immediate{Register: r, Data: b} }
	cat := func(parts ...[]expr.Any) []expr.Any { return slices.Concat(parts...) }
	for _, tc := range []struct {
		nft    string
		family string
		r      items.NftRule
		want   []expr.Any
	}{
		{"meta l4proto icmp icmp type echo-request accept", "inet", items.NftRule{Protocol: "icmp", ICMPType: "echo-request", Verdict: "accept"},
			cat(l4(1), []expr.Any{&expr.Payload{DestRegister: 1, Base: expr.PayloadBaseTransportHeader, Offset: 0, Len: 1}, cmpEq([]byte{8}),
				&expr.Verdict{Kind: expr.VerdictAccept}})},
		{`log prefix "in: " level info`, "inet", items.NftRule{Log: &items.NftLog{Prefix: "in: ", Level: "info"}},
			[]expr.Any{&expr.Log{Key: 1<<unix.NFTA_LOG_PREFIX | 1<<unix.NFTA_LOG_LEVEL, Data: []byte("in: "), Level: expr.LogLevelInfo}}},
		{"log", "inet", items.NftRule{Log: &items.NftLog{}}, []expr.Any{&expr.Log{}}},
		{"limit rate 10/second", "inet", items.NftRule{Limit: &items.NftLimit{Rate: 10, Per: "second"}},
			[]expr.Any{&expr.Limit{Type: expr.LimitTypePkts, Rate: 10, Unit: expr.LimitTimeSecond, Burst: 5}}},
		{"limit rate over 5/hour", "inet", items.NftRule{Limit: &items.NftLimit{Rate: 5, Per: "hour", Over: true}},
			[]expr.Any{&expr.Limit{Type: expr.LimitTypePkts, Rate: 5, Unit: expr.LimitTimeHour, Burst: 5, Over: true}}},
		{"reject", "inet", items.NftRule{Reject: &items.NftReject{}}, []expr.Any{&expr.Reject{Type: 2, Code: 1}}},
		{"reject", "ip", items.NftRule{Reject: &items.NftReject{}}, []expr.Any{&expr.Reject{Type: 0, Code: 3}}},
		{"meta l4proto tcp reject with tcp reset", "inet", items.NftRule{Protocol: "tcp", Reject: &items.NftReject{With: "tcp reset"}},
			cat(l4(6), []expr.Any{&expr.Reject{Type: 1}})},
		{"reject with icmp type host-unreachable", "inet", items.NftRule{Reject: &items.NftReject{With: "icmp host-unreachable"}},
			cat(nfp(2), []expr.Any{&expr.Reject{Type: 0, Code: 1}})},
		{"reject with icmpv6 type admin-prohibited", "inet", items.NftRule{Reject: &items.NftReject{With: "icmpv6 admin-prohibited"}},
			cat(nfp(10), []expr.Any{&expr.Reject{Type: 0, Code: 1}})},
		{"redirect", "inet", items.NftRule{Redirect: &items.NftRedirect{}}, []expr.Any{&expr.Redir{}}},
		{"meta l4proto tcp redirect to :8080", "inet", items.NftRule{Protocol: "tcp", Redirect: &items.NftRedirect{Port: "8080"}},
			cat(l4(6), []expr.Any{imm(1, 0x1f, 0x90), &expr.Redir{RegisterProtoMin: 1, Flags: 2}})},
		{"meta l4proto tcp redirect to :8080-8090", "inet", items.NftRule{Protocol: "tcp", Redirect: &items.NftRedirect{Port: "8080-8090"}},
			cat(l4(6), []expr.Any{imm(1, 0x1f, 0x90), imm(2, 0x1f, 0x9a), &expr.Redir{RegisterProtoMin: 1, RegisterProtoMax: 2, Flags: 2}})},
		{"meta l4proto tcp dnat ip to 192.0.2.1:1000-2000", "inet", items.NftRule{Protocol: "tcp", DNAT: "192.0.2.1:1000-2000"},
			cat(l4(6), []expr.Any{imm(1, 192, 0, 2, 1), imm(2, 0x03, 0xe8), imm(3, 0x07, 0xd0),
				&expr.NAT{Type: expr.NATTypeDestNAT, Family: 2, RegAddrMin: 1, RegProtoMin: 2, RegProtoMax: 3, Specified: true}})},
		{"dnat ip to 192.0.2.1-192.0.2.9", "inet", items.NftRule{DNAT: "192.0.2.1-192.0.2.9"},
			[]expr.Any{imm(1, 192, 0, 2, 1), imm(2, 192, 0, 2, 9), &expr.NAT{Type: expr.NATTypeDestNAT, Family: 2, RegAddrMin: 1, RegAddrMax: 2}}},
		// A byte-aligned prefix loads only its bytes, with no mask; any
		// other loads the whole address and masks it (nft 1.0.6).
		{"ip saddr 10.1.2.0/24 accept", "ip", items.NftRule{Saddr: "10.1.2.0/24", Verdict: "accept"},
			[]expr.Any{netLoad(12, 3), cmpEq([]byte{10, 1, 2}), &expr.Verdict{Kind: expr.VerdictAccept}}},
		{"ip saddr 10.0.0.0/8 accept", "ip", items.NftRule{Saddr: "10.0.0.0/8", Verdict: "accept"},
			[]expr.Any{netLoad(12, 1), cmpEq([]byte{10}), &expr.Verdict{Kind: expr.VerdictAccept}}},
		{"ip daddr 10.2.0.0/16 accept", "inet", items.NftRule{Daddr: "10.2.0.0/16", Verdict: "accept"},
			cat(nfp(2), []expr.Any{netLoad(16, 2), cmpEq([]byte{10, 2}), &expr.Verdict{Kind: expr.VerdictAccept}})},
		{"ip saddr 10.1.0.0/20 accept", "ip", items.NftRule{Saddr: "10.1.0.0/20", Verdict: "accept"},
			[]expr.Any{netLoad(12, 4), &expr.Bitwise{SourceRegister: 1, DestRegister: 1, Len: 4, Mask: []byte{0xff, 0xff, 0xf0, 0}, Xor: make([]byte, 4)},
				cmpEq([]byte{10, 1, 0, 0}), &expr.Verdict{Kind: expr.VerdictAccept}}},
		{"ip saddr 0.0.0.0/0 accept", "ip", items.NftRule{Saddr: "0.0.0.0/0", Verdict: "accept"},
			[]expr.Any{netLoad(12, 4), &expr.Bitwise{SourceRegister: 1, DestRegister: 1, Len: 4, Mask: make([]byte, 4), Xor: make([]byte, 4)},
				cmpEq(make([]byte, 4)), &expr.Verdict{Kind: expr.VerdictAccept}}},
		{"ip saddr 192.0.2.1 accept", "ip", items.NftRule{Saddr: "192.0.2.1", Verdict: "accept"},
			[]expr.Any{netLoad(12, 4), cmpEq([]byte{192, 0, 2, 1}), &expr.Verdict{Kind: expr.VerdictAccept}}},
		{"ip6 daddr 2001:db8::/32 accept", "ip6", items.NftRule{Daddr: "2001:db8::/32", Verdict: "accept"},
			[]expr.Any{netLoad(24, 4), cmpEq([]byte{0x20, 0x01, 0x0d, 0xb8}), &expr.Verdict{Kind: expr.VerdictAccept}}},
		{"ip saddr != @tm drop", "inet", items.NftRule{Saddr: "!@tm", Verdict: "drop"},
			cat(nfp(2), []expr.Any{&expr.Payload{DestRegister: 1, Base: expr.PayloadBaseNetworkHeader, Offset: 12, Len: 4},
				&expr.Lookup{SourceRegister: 1, SetName: "tm", Invert: true}, &expr.Verdict{Kind: expr.VerdictDrop}})},
	} {
		got, err := encodeRule(tc.family, &tc.r, setTypes{"tm": "ipv4_addr"})
		if err != nil {
			t.Fatalf("%s: %v", tc.nft, err)
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s %q:\n got  %s\n want %s", tc.family, tc.nft, exprsString(got), exprsString(tc.want))
		}
	}
}

func exprsString(es []expr.Any) string {
	var out []string
	for _, e := range es {
		out = append(out, fmt.Sprintf("%T%+v", e, e))
	}
	return strings.Join(out, " ")
}

func netLoad(off, n uint32) *expr.Payload {
	return &expr.Payload{DestRegister: 1, Base: expr.PayloadBaseNetworkHeader, Offset: off, Len: n}
}

// TestDecodePrefixAsEarlierBuildsWrote: a byte-aligned prefix that an
// earlier netagent wrote as the whole address, masked, reads back as the
// same rule as nft's form, so a table they wrote is no change; a load
// and a comparison of different widths is refused.
func TestDecodePrefixAsEarlierBuildsWrote(t *testing.T) {
	for _, tc := range []struct {
		exprs []expr.Any
		saddr string
	}{
		{[]expr.Any{netLoad(12, 4), &expr.Bitwise{SourceRegister: 1, DestRegister: 1, Len: 4, Mask: []byte{0xff, 0xff, 0xff, 0}, Xor: make([]byte, 4)},
			cmpEq([]byte{10, 1, 2, 0})}, "10.1.2.0/24"},
		{[]expr.Any{netLoad(12, 3), cmpEq([]byte{10, 1, 2})}, "10.1.2.0/24"},
		{[]expr.Any{netLoad(8, 16), &expr.Bitwise{SourceRegister: 1, DestRegister: 1, Len: 16, Mask: append(bytes4(0xff), make([]byte, 12)...), Xor: make([]byte, 16)},
			cmpEq(append([]byte{0x20, 0x01, 0x0d, 0xb8}, make([]byte, 12)...))}, "2001:db8::/32"},
		{[]expr.Any{netLoad(8, 4), cmpEq([]byte{0x20, 0x01, 0x0d, 0xb8})}, "2001:db8::/32"},
	} {
		got, err := decodeRule(tc.exprs)
		if err != nil || got.Saddr != tc.saddr {
			t.Errorf("%s: saddr %q, %v; want %s", exprsString(tc.exprs), got.Saddr, err, tc.saddr)
		}
	}
	if r, err := decodeRule([]expr.Any{netLoad(12, 3), cmpEq([]byte{10, 1, 2, 0})}); err == nil {
		t.Errorf("a 3-byte load compared with 4 bytes decodes to %+v", r)
	}
}

func bytes4(b byte) []byte { return []byte{b, b, b, b} }
