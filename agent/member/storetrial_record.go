package member

import "github.com/netagent/netagent/internal/statefile"

// fleet-trials.json (fleetTrialsFile) is read as a record (statefile): a
// damaged one, a link or a FIFO in its place fails the source's start
// naming it, never reads as "no fleet trials" (a trial pending at the stop
// would not be reverted).
func init() {
	statefile.Register(fleetTrialsFile, "the fleet trials of a release before the state directory's store, and their revert targets "+
		"(lost with it: a trial pending at that release's stop is not reverted)")
}
