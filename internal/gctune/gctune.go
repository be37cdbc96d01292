// Package gctune sets the Go collector for netagent's commands and the
// daemon: GOGC for the command about to run (Tune) and for the size of
// its intent (Size), and the daemon's hand-back of the memory an edit grew
// (ReturnMemory). A GOGC or GOMEMLIMIT in the environment always wins.
// It owns no state but the flag of a hand-back running.
package gctune

import (
	"os"
	"runtime/debug"
	"sync/atomic"
)

// The one-shot commands build the intended graph, a read-back of the
// kernel and the reconciler's records, and hold most of it to the end: a
// heap of mostly live items. With the runtime's default GOGC=100 the heap
// grows to twice that before a collection; at 100k routes a no-op apply
// peaked at 266 MB RSS. GOGC=50 keeps it to 1.5 times (209 MB) for about
// the same CPU time (more collections, each over a smaller heap); GOGC=35
// saved little more memory for 15% more CPU. The daemon (run) holds the
// same kind of heap, for good: it runs at GOGC=50 too, and hands the
// memory of its start (the parse, render and read-backs of the first
// reconcile, mostly garbage once it is done) back to the kernel when it is
// ready (cmd/netagent's readyNotifier).
//
// A GOGC or GOMEMLIMIT in the environment wins: an operator who set one
// means it.
const OneShotPercent = 50

// Tune sets the collector for the command about to run.
func Tune() {
	if gcFromEnv() {
		return
	}
	debug.SetGCPercent(OneShotPercent)
}

// gcFromEnv reports whether the environment sets the collector.
func gcFromEnv() bool { return os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" }

// A small intent makes a small heap, which GOGC=50 collects again and
// again: an apply of 500 bridge+vxlan pairs (a live heap of 7 MB at most)
// ran 55 collections, and at 10k routes the collector took a fifth of
// the apply (101 ms at GOGC=50, 88 ms at 200, 83 ms without). Once the
// intent files are read, Size gives the heap up to gcHeadroom above
// its live size instead, estimated from the files' size: the live heap
// peaked at 21 (routes) to 61 (bridge+vxlan pairs) times the size of the
// JSON, so the estimate takes 64 times it (livePerByte), plus what the
// program holds without an intent (liveBase). Large intents keep OneShotPercent.
const (
	gcHeadroom  = 48 << 20
	liveBase    = 8 << 20
	livePerByte = 64
	MaxPercent  = 200
)

// Size sets the collector for an intent of n bytes of JSON (see above);
// the environment's setting wins.
func Size(n int) {
	if gcFromEnv() {
		return
	}
	debug.SetGCPercent(PercentFor(n))
}

// PercentFor is the GOGC that gives a heap of the estimated live size
// of an intent of n bytes gcHeadroom above it, within [OneShotPercent,
// MaxPercent].
func PercentFor(n int) int {
	live := liveBase + livePerByte*n
	return min(max(100*gcHeadroom/live, OneShotPercent), MaxPercent)
}

// ReturnMemory is the daemon's agent.Config.Settled: once the work of an
// edit (parse, render, reconcile, the verification read-back 1 s later)
// is over, the heap it grew is handed back to the kernel in the
// background (one collection), instead of over minutes: at 100k routes
// the daemon stayed at 250–290 MB of RSS after edits, against 140–170 MB
// once ready. A call while one is running does nothing.
func ReturnMemory() {
	if !returning.CompareAndSwap(false, true) {
		return
	}
	go func() {
		defer returning.Store(false)
		debug.FreeOSMemory()
	}()
}

var returning atomic.Bool
