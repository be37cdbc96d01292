package agent

import "errors"

// Errors of the socket API.
var (
	// ErrSocketInUse: the socket path is taken by a running agent, or by
	// something that is not a socket.
	ErrSocketInUse = errors.New("socket in use")
	// ErrPermission: the peer is neither root nor the agent's user.
	ErrPermission = errors.New("permission denied")
	// ErrRequestTooLarge: a request is longer than MaxRequestSize.
	ErrRequestTooLarge = errors.New("request too large")
	// ErrBusy: MaxConnections (and ReadOnlyConnections) are being served
	// already.
	ErrBusy = errors.New("busy")
	// ErrIdle: a connection sent no request within IdleTimeout.
	ErrIdle = errors.New("idle connection")
	// ErrNotRunning: the agent's loop has stopped.
	ErrNotRunning = errors.New("agent is not running")
	// ErrTrialEnded: a confirm or rollback named a trial that is no
	// longer pending (confirmed, reverted, or another one is).
	ErrTrialEnded = errors.New("the trial is no longer pending")
)

// errNoIntent is returned for an apply without a document.
var errNoIntent = errors.New("apply needs an intent document")
