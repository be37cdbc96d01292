package main

import (
	"os"
	"runtime/debug"
)

// The one-shot commands build the intended graph, a read-back of the
// kernel and the reconciler's records, and hold most of it to the end: a
// heap of mostly live items. With the runtime's default GOGC=100 the heap
// grows to twice that before a collection; at 100k routes a no-op apply
// peaked at 266 MB RSS. GOGC=50 keeps it to 1.5 times (209 MB) for about
// the same CPU time (more collections, each over a smaller heap); GOGC=35
// saved little more memory for 15% more CPU. The daemon (run) keeps the
// runtime's default: its heap is its steady state, tuned apart.
//
// A GOGC or GOMEMLIMIT in the environment wins: an operator who set one
// means it.
const oneShotGCPercent = 50

// tuneGC sets the collector for the command about to run.
func tuneGC(command string) {
	if command == "run" || os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	debug.SetGCPercent(oneShotGCPercent)
}
