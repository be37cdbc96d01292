package probe

import "errors"

var (
	// ErrSpec marks a malformed probe spec.
	ErrSpec = errors.New("invalid probe")
	// ErrFailed marks a probe that ran and did not pass.
	ErrFailed = errors.New("probe failed")
)
