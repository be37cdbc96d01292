package host

import (
	"path/filepath"

	"github.com/netagent/netagent/internal/statefile"
)

// The trial's files in the state directory that are records (statefile):
// a damaged trial record fails PendingTrial, Recover and BeginTrial naming
// the file (DamagedTrialError), never reads as "no trial pending" (the
// trial's changes would stay in force, unreverted). It is not set aside
// as other damaged records are (`recover --accept-damaged` leaves it):
// `recover --accept-incomplete` reverts what the journal holds and drops
// the trial. The journal has its own per-line CRCs and count.
func init() {
	statefile.Register(TrialDir+"/"+trialName, "the pending trial: its intent files and the intent before it, "+
		"what recover reverts to (`recover --accept-incomplete` reverts what the trial journal holds without it)")
	statefile.RegisterCache(TrialDir+"/"+outcomeName, "the outcome of the last trial, shown by status and confirm (a lost one is only not shown)")
}

// IsTrialRecord reports whether path is the trial record of the target
// whose state directory is stateDir.
func IsTrialRecord(stateDir, path string) bool {
	return filepath.Clean(path) == trialPath(stateDir, trialName)
}
