package nftables

import (
	"fmt"
	"testing"

	"github.com/netagent/netagent/items"
)

// mapsTable is a table with a port vmap and an interval address vmap.
func mapsTable(verdict23 string) *items.NftTable {
	zero := &items.NftPriority{}
	return &items.NftTable{Family: "inet", Table: "t",
		Maps: []items.NftMap{
			{Name: "svc", Type: "inet_service", Elements: []items.NftMapElement{
				{Key: "80", Verdict: "jump", Target: "web"}, {Key: "22", Verdict: "accept"}, {Key: "23", Verdict: verdict23}}},
			{Name: "nets", Type: "ipv4_addr", Interval: true, Elements: []items.NftMapElement{
				{Key: "10.0.0.0/8", Verdict: "accept"}, {Key: "192.0.2.1-192.0.2.9", Verdict: "goto", Target: "web"}}}},
		Chains: []items.NftChain{
			{Name: "input", Type: "filter", Hook: "input", Priority: zero, Rules: []items.NftRule{
				{Protocol: "tcp", Counter: true, Vmap: &items.NftVmap{On: "dport", Map: "svc"}},
				{Vmap: &items.NftVmap{On: "saddr", Map: "nets"}}}},
			{Name: "web", Rules: []items.NftRule{{Verdict: "accept"}}}}}
}

// A table with verdict maps reads back from the fake as it was written;
// one changed element is a diff of its delete and its add, nothing else;
// applied, the next diff is empty.
func TestMapsDiffOneElement(t *testing.T) {
	k := NewFakeKernel()
	want := mapsTable("drop")
	if err := k.ApplyBatch(0, []Op{{Kind: OpCreateTable, Table: *want}}); err != nil {
		t.Fatal(err)
	}
	have, _, err := k.DumpTable("inet", "t")
	if err != nil {
		t.Fatal(err)
	}
	if !have.Table.Equal(want) {
		t.Fatalf("read back\n %+v\nwant\n %+v", have.Table, want.Canonical())
	}
	if ops := diffTable(have, want); len(ops) != 0 {
		t.Fatalf("diff of the same table: %v", ops)
	}
	next := mapsTable("accept")
	ops := diffTable(have, next)
	if got := fmt.Sprint(ops[0].Kind, ops[0].Map.Elements, " ", ops[1].Kind, ops[1].Map.Elements); len(ops) != 2 ||
		got != "delete map elements [23 : drop] add map elements [23 : accept]" {
		t.Fatalf("diff of one changed element: %d ops %v", len(ops), ops)
	}
	if err := k.ApplyBatch(have.Gen, ops); err != nil {
		t.Fatal(err)
	}
	have, _, _ = k.DumpTable("inet", "t")
	if ops := diffTable(have, next); len(ops) != 0 || !have.Table.Equal(next) {
		t.Fatalf("after the change: diff %v, table %+v", ops, have.Table)
	}
}

// A vmap's expressions decode back to the rule; the fake refuses a jump
// to a missing chain and the deletion of a chain a map element jumps to.
func TestMapsCodecAndRefusals(t *testing.T) {
	for _, r := range mapsTable("drop").Chains[0].Rules {
		exprs, err := encodeRule("inet", &r, setTypes{"svc": "inet_service", "nets": "ipv4_addr"})
		if err != nil {
			t.Fatal(err)
		}
		got, err := decodeRule(exprs)
		if err != nil || fmt.Sprint(got.Vmap) != fmt.Sprint(r.Vmap) || got.Protocol != r.Protocol {
			t.Errorf("decode of %+v: %+v, %v", r, got, err)
		}
	}
	k := NewFakeKernel()
	bad := mapsTable("drop")
	bad.Maps[0].Elements[0].Target = "nowhere"
	if err := k.ApplyBatch(0, []Op{{Kind: OpCreateTable, Table: *bad}}); err == nil {
		t.Error("a map element jumping to a missing chain was accepted")
	}
	good := mapsTable("drop")
	if err := k.ApplyBatch(0, []Op{{Kind: OpCreateTable, Table: *good}}); err != nil {
		t.Fatal(err)
	}
	err := k.ApplyBatch(0, []Op{{Kind: OpFlushChain, Table: *good, Chain: items.NftChain{Name: "web"}},
		{Kind: OpDeleteChain, Table: *good, Chain: items.NftChain{Name: "web"}}})
	if err == nil {
		t.Error("deleting a chain a map element jumps to was accepted")
	}
}

// marshalOps writes a map's elements in NEWSETELEM messages of its own
// after the library's NEWSET (the kernel's order), and a delete of
// elements as a DELSETELEM.
func TestMapsMarshal(t *testing.T) {
	want := mapsTable("drop")
	msgs, err := marshalOps([]Op{{Kind: OpCreateTable, Table: *want},
		{Kind: OpDeleteMapElements, Table: *want, Map: items.NftMap{Name: "svc", Type: "inet_service", Elements: []items.NftMapElement{{Key: "23"}}}}})
	if err != nil {
		t.Fatal(err)
	}
	var kinds []uint16
	for _, m := range msgs {
		kinds = append(kinds, uint16(m.m.Header.Type)&0xff)
	}
	newElem, delElem := 0, 0
	for _, k := range kinds {
		switch k {
		case 12: // NFT_MSG_NEWSETELEM
			newElem++
		case 14: // NFT_MSG_DELSETELEM
			delElem++
		}
	}
	if newElem != 2 || delElem != 1 {
		t.Errorf("message types %v: %d NEWSETELEM (want 2, one per map), %d DELSETELEM (want 1)", kinds, newElem, delElem)
	}
}
