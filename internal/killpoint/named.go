package killpoint

// Named kill points, for the crash tests of steps whose place among the
// counted kill points depends on all the process did before (the
// daemon's confirm of a trial): NETAGENT_TEST_KILL_AT=NAME makes the
// process kill itself (SIGKILL) when it passes At(NAME). Unset, At is one
// comparison.

import (
	"os"
	"syscall"
)

// NamedEnv is the environment variable that names the kill point At
// kills at.
const NamedEnv = "NETAGENT_TEST_KILL_AT"

var named = os.Getenv(NamedEnv)

// At passes the kill point name.
func At(name string) {
	if named == "" || named != name {
		return
	}
	syscall.Kill(os.Getpid(), syscall.SIGKILL)
	select {} // the signal is on its way
}
