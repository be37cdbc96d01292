package trial

import (
	"errors"
	"fmt"
	"time"

	"github.com/netagent/netagent/agent/probe"
)

// ProbeFailure is the failure of a counted probe that reverts a trial
// (RunProbes, Watch): which probe, and when its last run ended. Drivers
// record both in the trial's outcome (status.TrialOutcome,
// fleet.Trial), so that the revert can be placed against the probe's
// failure and the trial's deadline.
type ProbeFailure struct {
	Probe string
	At    time.Time
	Err   error
	msg   string
}

func (f *ProbeFailure) Error() string { return f.msg }
func (f *ProbeFailure) Unwrap() error { return f.Err }

// FailureOf is the probe failure err carries (nil: none).
func FailureOf(err error) *ProbeFailure {
	var f *ProbeFailure
	if errors.As(err, &f) {
		return f
	}
	return nil
}

// Bounds of the probes a trial may name: a probe spec from the store or
// the socket is untrusted input like the intent.
const (
	MaxProbes   = 16
	MaxSpecSize = 512
)

// CheckSpecs checks a trial's probe specs as given (the socket API's
// request, a fleet trial envelope): at most MaxProbes, each at most
// MaxSpecSize bytes, each one that agent/probe parses. The error names
// the first bad one by its index ("probes[2]: ...").
func CheckSpecs(specs []string) error {
	if len(specs) > MaxProbes {
		return fmt.Errorf("probes: %d given, at most %d", len(specs), MaxProbes)
	}
	for i, s := range specs {
		if len(s) > MaxSpecSize {
			return fmt.Errorf("probes[%d]: %d bytes: at most %d", i, len(s), MaxSpecSize)
		}
		if _, err := probe.Parse(s); err != nil {
			return fmt.Errorf("probes[%d]: %w", i, err)
		}
	}
	return nil
}
