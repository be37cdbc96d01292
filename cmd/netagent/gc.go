package main

import (
	"os"
	"runtime/debug"
	"sync/atomic"

	"github.com/netagent/netagent/agent"
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
// ready (readyNotifier).
//
// A GOGC or GOMEMLIMIT in the environment wins: an operator who set one
// means it.
const oneShotGCPercent = 50

// tuneGC sets the collector for the command about to run.
func tuneGC(string) {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	debug.SetGCPercent(oneShotGCPercent)
}

// readyNotifier is the daemon's agent.Notifier: after telling the service
// manager it is ready (after the first reconcile, and after a reload), it
// returns the heap's free memory to the kernel (debug.FreeOSMemory: one
// collection), which the runtime would otherwise do over minutes.
type readyNotifier struct {
	agent.Notifier
}

func (n readyNotifier) Ready() error {
	err := n.Notifier.Ready()
	debug.FreeOSMemory()
	return err
}

// returnMemory is the daemon's agent.Config.Settled: once the work of an
// edit (parse, render, reconcile, the verification read-back 1 s later)
// is over, the heap it grew is handed back to the kernel in the
// background (one collection), instead of over minutes: at 100k routes
// the daemon stayed at 260–300 MB of RSS after edits, against about 170
// MB once ready. A call while one is running does nothing.
func returnMemory() {
	if !returning.CompareAndSwap(false, true) {
		return
	}
	go func() {
		defer returning.Store(false)
		debug.FreeOSMemory()
	}()
}

var returning atomic.Bool
