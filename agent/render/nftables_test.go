package render

import (
	"reflect"
	"testing"

	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/items"
)

// A table read back turns into a valid intent in canonical form: an ip6
// table's reject, which the kernel's expression cannot tell from an icmp
// one, is icmpv6 again, the defaults are spelled out, and the intent
// renders to an item Equal to the one read back.
func TestNftablesToIntent(t *testing.T) {
	prio := items.NftPriority{Value: 0}
	read := &items.NftTable{Family: "ip6", Table: "t", Chains: []items.NftChain{{
		Name: "in", Type: "filter", Hook: "input", Priority: &prio, Policy: "accept",
		Rules: []items.NftRule{
			{Reject: &items.NftReject{With: "icmp frag-needed"}},
			{Protocol: "icmpv6", ICMPType: "128", Limit: &items.NftLimit{Rate: 5, Per: "second"}, Log: &items.NftLog{}, Verdict: "accept"},
		}}}}
	in := ToIntent([]dg.Item{read})
	if err := in.Validate(); err != nil {
		t.Fatalf("invalid: %v", err)
	}
	rules := in.Nftables.Tables[0].Chains[0].Rules
	want := []items.NftRule{
		{Reject: &items.NftReject{With: "icmpv6 port-unreachable"}},
		{Protocol: "icmpv6", ICMPType: "echo-request", Limit: &items.NftLimit{Rate: 5, Per: "second", Burst: 5}, Log: &items.NftLog{Level: "warn"}, Verdict: "accept"},
	}
	if !reflect.DeepEqual(rules, want) {
		t.Errorf("rules\n got  %+v\n want %+v", rules, want)
	}
	g := mustRender(t, in)
	if got, ok := g.Get(dg.ItemRef{Type: items.TypeNftTable, Name: "ip6/t"}); !ok || !got.Equal(read) {
		t.Errorf("rendered %v, want Equal to %v", got, read)
	}
}
