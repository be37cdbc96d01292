package host

import "github.com/netagent/netagent/internal/killpoint"

// Test-only kill points (internal/killpoint: NETAGENT_TEST_KILL_AFTER=N
// kills the process with SIGKILL at the Nth): a kill point is passed
// after each journal record is fsynced (before its wave runs), after each
// kernel operation a trial or a revert runs, a batch of operations (a
// configurator's ApplyBatch: 1000 routes in one netlink exchange)
// counting as one, and, inside a batch of link creates, after each link's
// add before its mark (configurators/link: the create journal's window).
// Each point is a distinct state of the kernel and the records. The crash
// tests of the commit model use them to stop `netagent try` at exact
// places of its apply and its revert; KillPoints tells them how many a
// whole run passes.
func killPoint() { killpoint.Pass() }

// KillPoints returns how many kill points the process passed (counted
// only when NETAGENT_TEST_KILL_AFTER is set).
func KillPoints() int64 { return killpoint.Passed() }
