package oneshot

import (
	"errors"
	"fmt"

	"github.com/netagent/netagent/agent/host"
)

// ErrDaemon is the error of a command refused because a daemon serves the
// namespace: acting on it here would go behind the daemon's back.
var ErrDaemon = errors.New("the namespace is served by a daemon")

// ErrNoIntent is a command given no intent file when no daemon serves the
// namespace to compare with its own intent.
var ErrNoIntent = errors.New("no intent file given, and no daemon serves the namespace to compare with its own intent")

// InvalidError is an intent that does not validate (or does not render):
// nothing was changed. Err holds every problem (intent.FieldErrors).
type InvalidError struct{ Err error }

func (e *InvalidError) Error() string { return "invalid intent: " + e.Err.Error() }
func (e *InvalidError) Unwrap() error { return e.Err }

// UsageError is a command line that names something wrong (a file given
// twice).
type UsageError struct{ Msg string }

func (e *UsageError) Error() string { return e.Msg }

// DaemonError is ErrDaemon with the daemon that serves the namespace.
type DaemonError struct{ Holder host.Holder }

func (e *DaemonError) Error() string {
	return fmt.Sprintf("the namespace is served by the daemon %s", e.Holder)
}
func (e *DaemonError) Unwrap() error { return ErrDaemon }

// NoDaemonError is a namespace no daemon serves: no daemon holds the lock
// of its state directory (Holder, if set, is the one-shot command that
// holds it now).
type NoDaemonError struct {
	Netns, StateDir string
	Holder          *host.Holder
}

func (e *NoDaemonError) Error() string {
	ns := "the host's namespace"
	if e.Netns != "" {
		ns = "namespace " + e.Netns
	}
	msg := fmt.Sprintf("no daemon serves %s (none holds the lock of the state directory %s", ns, e.StateDir)
	if e.Holder != nil {
		msg += "; " + e.Holder.String() + " holds it"
	}
	return msg + "; --state-dir or --socket PATH names another daemon)"
}

// Outcome is how a command ended, for cmd to map to its exit status.
type Outcome int

const (
	// Converged: done, nothing left (a plan or check: nothing differs).
	Converged Outcome = iota
	// NotConverged: items failed or stayed blocked (a plan: would; a
	// check: something differs).
	NotConverged
	// Refused: the change would disrupt a protected link; nothing was
	// changed.
	Refused
)

// StepError is the failure of a command's step, named ("plan", "check").
type StepError struct {
	Step string
	Err  error
}

func (e *StepError) Error() string { return e.Step + ": " + e.Err.Error() }
func (e *StepError) Unwrap() error { return e.Err }
