package host

import "errors"

// ErrLocked: another writer (a one-shot apply, or the daemon) holds the
// target's lock.
var ErrLocked = errors.New("another netagent holds the target's lock")

// ErrProtected: an apply would disrupt a protected link (see Protection),
// and was refused before it changed anything.
var ErrProtected = errors.New("the apply would disrupt a protected link")

// ErrUnknownItemType: a stored item (a journal's before-image) names a
// type this netagent cannot decode.
var ErrUnknownItemType = errors.New("unknown item type")

// ErrJournal: the trial journal could not be written; the change it was to
// cover did not run.
var ErrJournal = errors.New("trial journal")

// ErrNoTrial: no trial is pending on the target.
var ErrNoTrial = errors.New("no trial is pending")

// ErrTrialPending: a trial is pending that no process runs (its process
// died); Recover reverts it (see AbandonedTrialError).
var ErrTrialPending = errors.New("a trial is pending")

// ErrRevertIncomplete: a revert did not start because the trial journal
// does not account for every record the trial wrote (see
// RevertIncompleteError).
var ErrRevertIncomplete = errors.New("revert incomplete")

// ErrDamagedTrial: the pending trial's record cannot be read (see
// DamagedTrialError).
var ErrDamagedTrial = errors.New("damaged trial record")
