package oneshot

import (
	"slices"
	"testing"

	"github.com/netagent/netagent/configurators"
	"github.com/netagent/netagent/configurators/firewall"
	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/items"
)

// Every object of others gets a warning naming it, but the kernel's own
// (without all) and built-in chains holding no rule of others.
func TestForeignWarnings(t *testing.T) {
	list := []dg.Item{
		&items.Foreign{Kind: items.TypeRoute, Desc: "10.8.0.0/16 via 10.9.0.2 dev v0 table main metric 0 scope global proto 3"},
		&items.Foreign{Kind: items.TypeRoute, Desc: "10.9.0.0/24 dev v0 table main metric 0 scope link proto kernel"},
		&items.Foreign{Kind: items.TypeRule, Desc: "ipv4 200: from 10.7.0.0/16 lookup main proto 0"},
	}
	f := &configurators.Foreign{
		AddrNeigh: []dg.Item{&items.Foreign{Kind: items.TypeAddress, Desc: "127.0.0.2/8 dev lo scope host proto 0"}},
		Chains: []firewall.ForeignChain{
			{Family: items.FamilyIPv4, Table: "filter", Chain: "INPUT", BuiltIn: true},
			{Family: items.FamilyIPv4, Table: "filter", Chain: "FORWARD", BuiltIn: true, Rules: [][]string{{"-j", "ACCEPT"}}},
			{Family: items.FamilyIPv4, Table: "filter", Chain: "MINE"},
		},
	}
	keys := func(all bool) []string {
		var out []string
		for _, w := range foreignWarnings(list, f, all) {
			out = append(out, w.Key)
		}
		return out
	}
	want := []string{
		"route 10.8.0.0/16 via 10.9.0.2 dev v0 table main metric 0 scope global proto 3",
		"rule ipv4 200: from 10.7.0.0/16 lookup main proto 0",
		"iptables-chain ipv4/filter/FORWARD", "iptables-chain ipv4/filter/MINE",
	}
	if got := keys(false); !slices.Equal(got, want) {
		t.Errorf("warnings:\n%q\nwant:\n%q", got, want)
	}
	if got := keys(true); len(got) != len(want)+2 {
		t.Errorf("warnings with all: %q, want the kernel's two too", got)
	}
}
