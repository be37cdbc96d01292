package render

import (
	"github.com/netagent/netagent/agent/intent"
	"github.com/netagent/netagent/items"
)

// The nftables section: one item per table, the table as a whole (the
// intent's model is the item's, items.NftTable). A table read back turns
// into the intent in its canonical form, the one Equal compares: the
// read-back cannot tell an ip6 table's icmpv6 reject from an icmp one,
// which Canonical resolves.
var nftablesSection = section{
	path:   "nftables.tables",
	render: (*builder).nftables,
	toIntent: func(inv *inverter, out *intent.Intent) {
		for _, t := range sectionItems[*items.NftTable](inv) {
			out.Nftables.Tables = append(out.Nftables.Tables, intent.NftablesTable{NftTable: t.Canonical()})
		}
	},
}

// nftables renders every table of the intent.
func (b *builder) nftables() {
	for i := range b.in.Nftables.Tables {
		t := &b.in.Nftables.Tables[i]
		at := b.in.Locate(t.Origin, "nftables.tables", i)
		b.object("", t.Origin)
		tab := t.NftTable
		tab.Sets = items.CanonicalSets(tab.Sets)
		b.put(&tab, at)
	}
}
