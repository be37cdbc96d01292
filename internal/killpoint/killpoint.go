// Package killpoint gives the crash tests deterministic places to kill a
// netagent process. NETAGENT_TEST_KILL_AFTER=N makes the process kill
// itself (SIGKILL) at the Nth kill point it passes (Pass); Passed tells
// the tests how many a whole run passes. Each kill point is a distinct
// state of the kernel and of the records in the state directory; where
// they are is said by their callers (agent/host's trial and revert,
// configurators/link's create journal). Unset, Pass is one load.
package killpoint

import (
	"os"
	"strconv"
	"sync/atomic"
	"syscall"
)

// Env is the environment variable that names the kill point.
const Env = "NETAGENT_TEST_KILL_AFTER"

var (
	after  = parse(os.Getenv(Env))
	passed atomic.Int64
)

func parse(v string) int64 {
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n <= 0 {
		return 0
	}
	return n
}

// Pass passes a kill point.
func Pass() {
	if after == 0 {
		return
	}
	if passed.Add(1) == after {
		syscall.Kill(os.Getpid(), syscall.SIGKILL)
		select {} // the signal is on its way
	}
}

// Armed reports whether a kill point is set (Env): callers may skip the
// bookkeeping of their kill points otherwise.
func Armed() bool { return after != 0 }

// Passed returns how many kill points the process passed (counted only
// when Env is set).
func Passed() int64 { return passed.Load() }
