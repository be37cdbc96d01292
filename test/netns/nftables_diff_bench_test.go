//go:build !vmtest

package netns_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/netagent/netagent/configurators/nftables"
	"github.com/netagent/netagent/internal/testns"
	"github.com/netagent/netagent/items"
)

// nft10k is a table of 10k rules in 100 chains; with flip, one rule of
// chain c50 matches another port.
func nft10k(flip bool) *items.NftTable {
	tbl := &items.NftTable{Family: "inet", Table: "netagent"}
	for c := range 100 {
		ch := items.NftChain{Name: fmt.Sprintf("c%d", c)}
		for r := range 100 {
			ch.Rules = append(ch.Rules, items.NftRule{Protocol: "tcp", Dport: fmt.Sprint(1000 + 100*c + r), Counter: true, Verdict: "accept"})
		}
		tbl.Chains = append(tbl.Chains, ch)
	}
	if flip {
		tbl.Chains[50].Rules[50].Dport = "65000"
	}
	return tbl
}

// BenchmarkNftablesModifyOneRule: one changed rule in a table of 10k
// rules, in a namespace's kernel. "recreate" is the whole table deleted
// and created again in one batch after a dump (what Modify did before),
// "diff" is Modify now (a dump, then one batch of a deleted and an
// inserted rule); the "readback+" ones read the namespace's tables back
// first, as a reconcile does, which Modify's dump then reuses.
func BenchmarkNftablesModifyOneRule(b *testing.B) {
	ctx := context.Background()
	for _, mode := range []string{"recreate", "diff", "readback+recreate", "readback+diff"} {
		b.Run(mode, func(b *testing.B) {
			tgt := testns.New(b)
			k := nftables.NetlinkKernel(tgt, 0)
			c := nftables.NewConfigurator(k)
			tables := []*items.NftTable{nft10k(false), nft10k(true)}
			if err := c.Create(ctx, tables[0]); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for i := range b.N {
				next := tables[(i+1)%2]
				if strings.HasPrefix(mode, "readback+") {
					if got, err := nftables.ReadBack(tgt); err != nil || len(got) != 1 {
						b.Fatal(len(got), err)
					}
				}
				var err error
				if strings.HasSuffix(mode, "diff") {
					err = c.Modify(ctx, tables[i%2], next)
				} else {
					err = recreate(k, next)
				}
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func recreate(k nftables.Kernel, t *items.NftTable) error {
	d, _, err := k.DumpTable(t.Family, t.Table)
	if err != nil {
		return err
	}
	return k.ApplyBatch(d.Gen, []nftables.Op{{Kind: nftables.OpDeleteTable, Table: *t}, {Kind: nftables.OpCreateTable, Table: *t}})
}
