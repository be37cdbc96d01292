package nftables

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/netagent/netagent/internal/testns"
	"github.com/netagent/netagent/items"
)

// TestWatcherOnKernel: the Watcher over the kernel's NFNLGRP_NFTABLES in
// a namespace of its own. Its first event is a Resync; this process's own
// batch in the followed table is no event (the kernel's NEWGEN names one
// of its threads); another program's table is none either; `nft flush
// ruleset` by another program is one event naming the followed table.
func TestWatcherOnKernel(t *testing.T) {
	tgt := testns.New(t)
	log := logrus.New()
	log.SetLevel(logrus.PanicLevel)
	w := NewWatcher(tgt, log)
	w.Follow([]string{TableKey("inet", "netagent")})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	events := make(chan Event, 16)
	go w.Watch(ctx, events)
	next := func(within time.Duration) (Event, bool) {
		select {
		case ev := <-events:
			return ev, true
		case <-time.After(within):
			return Event{}, false
		}
	}
	if ev, ok := next(5 * time.Second); !ok || !ev.Resync {
		t.Fatalf("first event %+v (%v), want a resync", ev, ok)
	}
	k := netlinkKernel{nsfd: int(tgt.NsHandle())}
	tab := items.NftTable{Family: "inet", Table: "netagent", Chains: []items.NftChain{{Name: "c"}}}
	if err := k.ApplyBatch(0, []Op{{Table: tab}}); err != nil {
		t.Fatal(err)
	}
	for range 5 { // replaced, as Modify does
		if err := k.ApplyBatch(0, []Op{{Kind: OpDeleteTable, Table: tab}, {Table: tab}}); err != nil {
			t.Fatal(err)
		}
	}
	testns.Exec(t, tgt, "nft", "add table ip other; add chain ip other c; add rule ip other c accept; flush table ip other")
	if ev, ok := next(300 * time.Millisecond); ok {
		t.Fatalf("an event %+v for netagent's own batches and another table", ev)
	}
	testns.Exec(t, tgt, "nft", "flush ruleset")
	ev, ok := next(5 * time.Second)
	if !ok || ev.Resync || !slices.Equal(ev.Tables, []string{"inet netagent"}) {
		t.Fatalf("after nft flush ruleset: %+v (%v), want inet netagent named", ev, ok)
	}
}
