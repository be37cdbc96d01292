package items

import (
	"fmt"
	"testing"
)

// DiffFields names each changed attribute, and a rule inserted in the
// middle is one difference, not a shift of the rules after it.
func TestNftTableDiffFields(t *testing.T) {
	zero := &NftPriority{Value: 0}
	want := &NftTable{Family: "inet", Table: "t",
		Chains: []NftChain{{Name: "in", Type: "filter", Hook: "input", Priority: zero, Policy: "drop", Rules: []NftRule{
			{Verdict: "accept"}, {Protocol: "tcp", Dport: "22", Verdict: "accept"}, {Counter: true}}}},
		Sets: []NftSet{{Name: "s", Type: "inet_service", Elements: []string{"1", "2"}}}}
	have := &NftTable{Family: "inet", Table: "t",
		Chains: []NftChain{{Name: "in", Type: "filter", Hook: "input", Priority: zero, Policy: "accept", Rules: []NftRule{
			{Verdict: "accept"}, {Protocol: "tcp", Dport: "23", Verdict: "accept"}, {Verdict: "drop"}, {Counter: true}}},
			{Name: "x"}},
		Sets: []NftSet{{Name: "s", Type: "inet_service", Elements: []string{"2", "3"}}}}
	got := fmt.Sprint(want.DiffFields(have))
	exp := fmt.Sprint([]ItemFieldDiff{
		{"chain in policy", "drop", "accept"},
		{"chain in rule 1 dport", `"22"`, `"23"`},
		{"chain in rule 2", "none", `{"verdict":"drop"}`},
		{"chain x", "none", "regular, 0 rules"},
		{"set s elements", "1 (missing)", "3 (not intended)"},
	})
	if got != exp {
		t.Errorf("DiffFields:\n got  %s\n want %s", got, exp)
	}
	if d := want.DiffFields(want); len(d) != 0 {
		t.Errorf("DiffFields of a table with itself: %v", d)
	}
}
