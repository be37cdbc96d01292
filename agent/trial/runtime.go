package trial

import (
	"context"

	"github.com/netagent/netagent/agent/host"
)

// Starter begins trials on the target (the daemon's: OnRuntime): from
// Begin until the handle's Confirm or Revert, the target journals the
// before-image of everything it changes.
type Starter interface {
	Begin(t host.Trial) (Handle, error)
}

// Handle is a trial begun by a Starter.
type Handle interface {
	// Confirming records, before the confirm writes content into the
	// intent file, that it does (host.TrialRun.Confirming): a daemon
	// killed once the file is written has the trial completed as
	// confirmed when it starts again, not reverted.
	Confirming(file string, content []byte) error
	Confirm() error
	// Update records, while the trial is pending, a change of the
	// documents beside it (an intent file edited): files is the whole
	// intent now, previous the documents without the trial (host.Trial's
	// Files and Previous).
	Update(files, previous map[string][]byte) error
	// Revert returns the kernel to what it was before the trial.
	Revert(ctx context.Context, reason string) error
}

// OnRuntime begins trials on rt: the journal and trial record of
// agent/host, as the one-shot try's.
func OnRuntime(rt *host.Runtime) Starter { return runtimeTrials{rt} }

type runtimeTrials struct{ rt *host.Runtime }

func (d runtimeTrials) Begin(t host.Trial) (Handle, error) {
	tr, err := d.rt.BeginTrial(t)
	if err != nil {
		return nil, err
	}
	return runtimeTrial{tr}, nil
}

type runtimeTrial struct{ *host.TrialRun }

func (d runtimeTrial) Revert(ctx context.Context, reason string) error {
	_, err := d.TrialRun.Revert(ctx, reason)
	return err
}
