package target

import "github.com/netagent/netagent/configurators/statefile"

// The trial's files in the state directory that are records (statefile):
// a damaged trial record fails PendingTrial, Recover and BeginTrial naming
// the file, never reads as "no trial pending" (the trial's changes would
// stay in force, unreverted). The journal has its own per-line CRCs.
func init() {
	statefile.Register(TrialDir+"/"+trialName, "the pending trial: its intent files and the intent before it, "+
		"what recover reverts to (lost with it: recover cannot revert that trial)")
	statefile.RegisterCache(TrialDir+"/"+outcomeName, "the outcome of the last trial, shown by status and confirm (a lost one is only not shown)")
}
