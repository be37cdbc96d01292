package nftables

import (
	"context"
	"reflect"
	"testing"

	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/internal/testns"
	"github.com/netagent/netagent/items"
)

// TestStateLoadsAsTheKernelReads: a namespace's tables (netagent's, and
// others' with drop policies, drop and reject rules, a netdev ingress
// chain, a chain on a hook netagent does not name) dumped into a State,
// through JSON, and loaded into a fake, read as the kernel reads: the
// same tables and marks, the same base chains for every rule budget,
// the same read-back, clashes and warnings.
func TestStateLoadsAsTheKernelReads(t *testing.T) {
	tgt := testns.New(t)
	testns.Exec(t, tgt, "ip", "link", "add", "d0", "type", "veth", "peer", "name", "d1")
	want := writtenTable()
	if err := NewConfigurator(NetlinkKernel(tgt, 0)).Create(context.Background(), want); err != nil {
		t.Fatal(err)
	}
	testns.Exec(t, tgt, "nft", `add table ip fw; add chain ip fw cin { type filter hook input priority -5; policy accept; }
	  add rule ip fw cin tcp dport 22 accept; add rule ip fw cin udp dport 9 drop; add rule ip fw cin counter; add rule ip fw cin reject
	  add chain ip fw cfwd { type filter hook forward priority 0; policy drop; }; add rule ip fw cfwd accept
	  add chain ip fw helper; add rule ip fw helper drop
	  add table netdev edge; add chain netdev edge ing { type filter hook ingress device d0 priority 0; }; add rule netdev edge ing drop
	  add table inet clash; add chain inet clash input { type filter hook input priority 10; }; add rule inet clash input drop`)
	s, err := DumpState(tgt)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Check(); err != nil {
		t.Fatal(err)
	}
	f := NewFakeKernel()
	if err := f.Load(roundTrip(t, s)); err != nil {
		t.Fatal(err)
	}
	live := readerOf(tgt)
	lt, err := live.Tables()
	ft, ferr := f.Tables()
	if err != nil || ferr != nil || !reflect.DeepEqual(lt, ft) {
		t.Errorf("tables: kernel %v (%v), fake %v (%v)", lt, err, ft, ferr)
	}
	all := func(TableInfo, BaseChain) bool { return true }
	for _, budget := range []int{0, 1, 3, MaxInspectedRules} {
		lc, err := live.BaseChains(all, budget)
		fc, ferr := f.BaseChains(all, budget)
		if err != nil || ferr != nil || !reflect.DeepEqual(lc, fc) {
			t.Errorf("base chains, budget %d: kernel %+v (%v)\nfake %+v (%v)", budget, lc, err, fc, ferr)
		}
	}
	lr, err := ReadBack(tgt)
	fr, ferr := f.ReadBack()
	if err != nil || ferr != nil || !reflect.DeepEqual(lr, fr) {
		t.Errorf("read-back: kernel %v (%v), fake %v (%v)", lr, err, fr, ferr)
	}
	clash := &items.NftTable{Family: "inet", Table: "clash", Chains: []items.NftChain{{Name: "input", Type: "filter", Hook: "input", Priority: &items.NftPriority{Value: 0}}}}
	hint := dg.New("intended", want, clash)
	lcl, err := Clashes(tgt, "", hint)
	fcl, ferr := f.Clashes("", hint)
	if err != nil || ferr != nil || len(lcl) != 1 || !reflect.DeepEqual(lcl, fcl) {
		t.Errorf("clashes: kernel %v (%v), fake %v (%v)", lcl, err, fcl, ferr)
	}
	lw, err := Warnings(tgt, hint)
	fw, ferr := f.Warnings(hint)
	if err != nil || ferr != nil || len(lw) == 0 || !reflect.DeepEqual(lw, fw) {
		t.Errorf("warnings: kernel %v (%v)\nfake %v (%v)", lw, err, fw, ferr)
	}
}
