package target

import (
	"os"
	"strconv"
	"sync/atomic"
	"syscall"
)

// Test-only kill points. NETAGENT_TEST_KILL_AFTER=N makes the process kill
// itself (SIGKILL) at the Nth kill point: a kill point is passed after each
// journal record is fsynced (before its wave runs) and after each kernel
// operation a trial or a revert runs, a batch of operations (a
// configurator's ApplyBatch: 1000 routes in one netlink exchange) counting
// as one: each point is a distinct state of the kernel and the records. The crash tests of the commit model
// use it to stop `netagent try` at exact places of its apply and its
// revert; KillPoints tells them how many a whole run passes. Unset, the
// check is one load.
const killAfterEnv = "NETAGENT_TEST_KILL_AFTER"

var (
	killAfter  = parseKillAfter()
	killPassed atomic.Int64
)

func parseKillAfter() int64 {
	n, err := strconv.ParseInt(os.Getenv(killAfterEnv), 10, 64)
	if err != nil || n <= 0 {
		return 0
	}
	return n
}

// killPoint passes a kill point.
func killPoint() {
	if killAfter == 0 {
		return
	}
	if killPassed.Add(1) == killAfter {
		syscall.Kill(os.Getpid(), syscall.SIGKILL)
		select {} // the signal is on its way
	}
}

// KillPoints returns how many kill points the process passed (counted
// only when NETAGENT_TEST_KILL_AFTER is set).
func KillPoints() int64 { return killPassed.Load() }
