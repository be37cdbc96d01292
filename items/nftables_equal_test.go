package items

import "testing"

// TestNftTableEqual: tables equal in canonical form are equal whatever
// the order of their chains and sets and the spelling of their
// priorities, policies, addresses and elements; a changed rule, policy or
// element, or a missing chain, is a difference.
func TestNftTableEqual(t *testing.T) {
	a := func() *NftTable {
		return &NftTable{Family: "inet", Table: "t",
			Sets: []NftSet{{Name: "s", Type: "ipv4_addr", Interval: true, Elements: []string{"10.0.1.0/24", "10.0.0.0/24"}}, {Name: "p", Type: "inet_service", Elements: []string{"22"}}},
			Chains: []NftChain{
				{Name: "in", Type: "filter", Hook: "input", Priority: &NftPriority{Name: "filter"}, Rules: []NftRule{{Saddr: "192.0.2.1", Protocol: "6", Verdict: "accept"}}},
				{Name: "reg", Rules: []NftRule{{Saddr: "@s", Verdict: "drop"}}},
			}}
	}
	b := a()
	b.Sets = []NftSet{{Name: "p", Type: "inet_service", Elements: []string{"22"}}, {Name: "s", Type: "ipv4_addr", Interval: true, Elements: []string{"10.0.0.0-10.0.0.255", "10.0.1.0/24"}}}
	b.Chains = []NftChain{a().Chains[1], {Name: "in", Type: "filter", Hook: "input", Priority: &NftPriority{Value: 0}, Policy: "accept",
		Rules: []NftRule{{Saddr: "192.0.2.1/32", Protocol: "tcp", Verdict: "accept"}}}}
	if !a().Equal(b) || !b.Equal(a()) {
		t.Fatal("tables equal in canonical form differ")
	}
	if !a().Equal(a()) {
		t.Fatal("a table differs from itself")
	}
	for name, change := range map[string]func(*NftTable){
		"rule":    func(x *NftTable) { x.Chains[0].Rules[0].Verdict = "drop" },
		"policy":  func(x *NftTable) { x.Chains[0].Policy = "drop" },
		"element": func(x *NftTable) { x.Sets[0].Elements[0] = "10.0.2.0/24" },
		"chain":   func(x *NftTable) { x.Chains = x.Chains[:1] },
		"set":     func(x *NftTable) { x.Sets[1].Name = "q" },
	} {
		x := a()
		change(x)
		if a().Equal(x) || x.Equal(a()) {
			t.Errorf("a changed %s is no difference", name)
		}
	}
}
