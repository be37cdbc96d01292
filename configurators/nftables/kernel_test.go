package nftables

import (
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"

	"github.com/netagent/netagent/items"
)

// bigTable is a table of rules rules in one chain and a set of elems
// interval elements.
func bigTable(rules, elems int) *items.NftTable {
	t := &items.NftTable{Family: "inet", Table: "netagent", Sets: []items.NftSet{{Name: "big", Type: "ipv4_addr", Interval: true}}}
	for i := range elems {
		v := 2 * i
		t.Sets[0].Elements = append(t.Sets[0].Elements, fmt.Sprintf("10.%d.%d.%d", v>>16&255, v>>8&255, v&255))
	}
	ch := items.NftChain{Name: "input", Type: "filter", Hook: "input", Priority: prio(0)}
	for i := range rules {
		ch.Rules = append(ch.Rules, items.NftRule{Protocol: "tcp", Dport: fmt.Sprint(1 + i%60000), Counter: true, Verdict: "accept"})
	}
	t.Chains = []items.NftChain{ch}
	return t
}

// TestMarshalSplit: a create of 1000 rules and 100k interval elements
// marshals to a multi-MiB batch whose element messages (each under the
// 64 KiB of a netlink attribute) come last; with a 1 MiB limit the first
// batch holds every other message and the elements that fit, and the
// follow-ups hold the rest in order, each within the limit.
func TestMarshalSplit(t *testing.T) {
	msgs, err := marshalOps([]Op{{Kind: OpCreateTable, Table: *bigTable(1000, 100_000)}})
	if err != nil {
		t.Fatal(err)
	}
	total, elemMsgs, seenElems := 0, 0, false
	for i, m := range msgs {
		total += m.size()
		if m.elems {
			elemMsgs++
			seenElems = true
			if len(m.m.Data) > 65535 {
				t.Errorf("message %d of elements: %d bytes", i, len(m.m.Data))
			}
		} else if seenElems {
			t.Fatalf("message %d is not of elements but comes after them", i)
		}
		if m.m.Header.Flags&(netlink.Acknowledge|unix.NLM_F_ECHO) != 0 {
			t.Errorf("message %d asks for an ack or an echo: %v", i, m.m.Header.Flags)
		}
	}
	if want := 200; elemMsgs != want { // 100k starts and 100k ends, 1000 a message
		t.Errorf("%d messages of elements, want %d", elemMsgs, want)
	}
	if total < 4<<20 {
		t.Errorf("the batch is %d bytes, want a multi-MiB one", total)
	}
	t.Logf("%d messages, %d bytes", len(msgs), total)

	const limit = 1 << 20
	batches := splitBatches(msgs, limit)
	if len(batches) < 4 {
		t.Fatalf("%d batches for %d bytes under %d", len(batches), total, limit)
	}
	i := 0
	for n, b := range batches {
		size := 0
		for _, m := range b {
			if msgs[i].m.Header != m.m.Header || string(msgs[i].m.Data) != string(m.m.Data) {
				t.Fatalf("batch %d: message %d out of order", n, i)
			}
			if n > 0 && !m.elems {
				t.Fatalf("follow-up batch %d holds message %d, not of elements", n, i)
			}
			size += m.size()
			i++
		}
		if size > limit {
			t.Errorf("batch %d: %d bytes over %d", n, size, limit)
		}
	}
	if i != len(msgs) {
		t.Errorf("the batches hold %d messages of %d", i, len(msgs))
	}
}

// TestMarshalRulePosition: a rule added before a kept one is inserted at
// its handle (NFTA_RULE_POSITION, no NLM_F_APPEND); one at the end is
// appended.
func TestMarshalRulePosition(t *testing.T) {
	tbl := items.NftTable{Family: "inet", Table: "netagent"}
	msgs, err := marshalOps([]Op{
		{Kind: OpAddRule, Table: tbl, Chain: items.NftChain{Name: "c"}, Rule: items.NftRule{Verdict: "accept"}, Handle: 42},
		{Kind: OpAddRule, Table: tbl, Chain: items.NftChain{Name: "c"}, Rule: items.NftRule{Verdict: "drop"}},
	})
	if err != nil || len(msgs) != 2 {
		t.Fatalf("%d messages, %v", len(msgs), err)
	}
	for i, want := range []uint64{42, 0} {
		m := msgs[i].m
		if appended := m.Header.Flags&unix.NLM_F_APPEND != 0; appended != (want == 0) {
			t.Errorf("rule %d: append %v", i, appended)
		}
		ad, err := netlink.NewAttributeDecoder(m.Data[4:])
		if err != nil {
			t.Fatal(err)
		}
		var pos uint64
		for ad.Next() {
			if ad.Type() == unix.NFTA_RULE_POSITION {
				pos = binary.BigEndian.Uint64(ad.Bytes())
			}
		}
		if pos != want {
			t.Errorf("rule %d: position %d, want %d", i, pos, want)
		}
	}
}

// BenchmarkDiffOneRule10k: the CPU side of a modify of one rule in a
// table of 10k rules: the diff of the dumped table against the new one
// and the marshalling of its batch (the dump and the kernel's work are in
// test/netns's BenchmarkNftablesModifyOneRule).
func BenchmarkDiffOneRule10k(b *testing.B) {
	f := NewFakeKernel()
	old := bigTable(10_000, 0)
	if err := f.ApplyBatch(0, []Op{{Kind: OpCreateTable, Table: *old}}); err != nil {
		b.Fatal(err)
	}
	have := dumpedB(b, f, old)
	next := bigTable(10_000, 0)
	next.Chains[0].Rules[5000].Dport = "65000"
	b.ResetTimer()
	for range b.N {
		ops := diffTable(have, next)
		if len(ops) != 2 {
			b.Fatalf("%d ops, want a deletion and an insertion", len(ops))
		}
		if _, err := marshalOps(ops); err != nil {
			b.Fatal(err)
		}
	}
}

func dumpedB(b *testing.B, f *FakeKernel, t *items.NftTable) Dumped {
	d, ok, err := f.DumpTable(t.Family, t.Table)
	if err != nil || !ok {
		b.Fatal(ok, err)
	}
	return d
}
