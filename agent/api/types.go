package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/netagent/netagent/agent/status"
)

// The commands of the socket API.
const (
	CmdApply  = "apply"  // replace the API's document, reconcile, report
	CmdPlan   = "plan"   // what a reconcile would do now (or with Intent as the API's document)
	CmdCheck  = "check"  // read the kernel back and list what differs from the intent
	CmdShow   = "show"   // the current state as the agent holds it
	CmdStatus = "status" // Status
	// CmdRollback makes version Version (0: the one before the current)
	// the intended state in place of the documents' until one changes;
	// with Trial, it reverts that trial instead (trial.go). A rollback of
	// versions is refused while a trial is pending, and a rollback of a
	// trial that is no longer pending fails (ErrTrialEnded): a rollback
	// meant for a trial never takes the other meaning.
	CmdRollback = "rollback"
)

// Request is one call of the socket API: one JSON object per connection.
type Request struct {
	Command string `json:"command"`
	// Intent is an intent document, for apply (required), plan and check
	// (optional). It becomes the API's document: see the package doc. It
	// must be well-formed JSON (else the request as a whole is refused);
	// everything else is checked like a file and reported in Problems.
	Intent json.RawMessage `json:"intent,omitempty"`
	// IfVersion, for apply and rollback: refuse (Response.Conflict) unless
	// the current version of the intent is this one (0: none yet).
	IfVersion *int `json:"ifVersion,omitempty"`
	// Version is the version to roll back to (0: the one before the
	// current).
	Version int `json:"version,omitempty"`
	// Trial names the pending trial (TrialStatus.ID) that a rollback
	// reverts or a confirm makes permanent. A rollback without it rolls
	// versions back; a confirm without it confirms whichever trial is
	// pending.
	Trial string `json:"trial,omitempty"`
	// Timeout, Probes and Name are those of a trial (CmdTry, trial.go):
	// how long until it reverts unless confirmed (a Go duration, default
	// 60s), the probes that must pass, and the intent file that
	// confirming writes (default trial-<version>.json).
	Timeout string   `json:"timeout,omitempty"`
	Probes  []string `json:"probes,omitempty"`
	Name    string   `json:"name,omitempty"`
	// ProbeTimeout bounds how long the probes may take to pass after the
	// apply (a Go duration, default 10s; never past the deadline), and
	// KeepPartial keeps a trial whose items did not all converge (it waits
	// for confirm or the deadline with what converged): the one-shot
	// try's --probe-timeout and --keep-partial.
	ProbeTimeout string `json:"probeTimeout,omitempty"`
	KeepPartial  bool   `json:"keepPartial,omitempty"`
	// ProbesMustPassBefore refuses a trial, before any change, when one
	// of its probes fails before it (try's --probe-must-pass-before);
	// without it such a probe is reported (TrialStatus.FailingBefore) and
	// does not judge the trial. FailingBefore is what the daemon's
	// pre-check found (set by the daemon, never taken from a client).
	ProbesMustPassBefore bool     `json:"probesMustPassBefore,omitempty"`
	FailingBefore        []string `json:"-"`
	// Wait is how long a trial whose items are blocked waits for the link
	// events that unblock them (a Go duration, default 10s; 0s: not at
	// all): the one-shot try's --wait. Blocked then, they revert the
	// trial unless KeepPartial.
	Wait string `json:"wait,omitempty"`
}

// Response answers a Request. Error is set when the request failed as a
// whole; Problems when its intent was rejected (nothing changed then).
type Response struct {
	Error    string   `json:"error,omitempty"`
	Problems []string `json:"problems,omitempty"`
	// ProbesFailing: a trial was refused, before any change, because
	// probes fail before it (Request.ProbesMustPassBefore).
	ProbesFailing bool `json:"probesFailing,omitempty"`
	// Conflict: the request was refused because the current version is
	// not its IfVersion; Error says which it is.
	Conflict bool `json:"conflict,omitempty"`
	// TrialEnded: a confirm or rollback named a trial that is no longer
	// pending (ErrTrialEnded); how it ended, when the daemon knows.
	TrialEnded *status.TrialOutcome `json:"trialEnded,omitempty"`
	// Operations: for apply, those run; for plan, those a reconcile would
	// run; for check, those that would make the kernel match the intent.
	Operations []OpResult `json:"operations,omitempty"`
	// Disruption: for apply and plan, what the operations do to traffic,
	// summed up as the one-shot plan sums them up (`plan --json`'s
	// "disruption" object but protectedTouched): the links that go
	// down, the routes and neighbours the operations withdraw.
	Disruption *status.DisruptionSummary `json:"disruption,omitempty"`
	// Blocked: items that cannot be created now, with why.
	Blocked []BlockedItem `json:"blocked,omitempty"`
	// Status: for status, and for apply (after its reconcile).
	Status *status.Status `json:"status,omitempty"`
	// Items: for show.
	Items []ShownItem `json:"items,omitempty"`
	// Metrics: for metrics (CmdMetrics), the Prometheus text format.
	Metrics string `json:"metrics,omitempty"`
	// Differs: for check, the items in the kernel whose attributes differ
	// from the intent: each attribute, intended and running, with the
	// item's drift policy when it is report (an ignore item's are left
	// out, with its operations).
	Differs []status.DriftStatus `json:"differs,omitempty"`
	// Check: for check, every intended item, those apply would delete and
	// the objects marked netagent's that no item describes, each with its
	// state (`check --all` and `check --json` through the daemon).
	Check []status.CheckItem `json:"check,omitempty"`
	// LeasesRefused: for check, the leases the intent refused in part or
	// whole (their address or routes would take over its own networks).
	LeasesRefused []status.LeaseRefusal `json:"leasesRefused,omitempty"`
}

// OpResult is one operation run or planned.
type OpResult struct {
	Op         string `json:"op"`
	Item       string `json:"item"`
	Value      string `json:"value,omitempty"`
	Recreate   bool   `json:"recreate,omitempty"`
	InProgress bool   `json:"inProgress,omitempty"`
	Error      string `json:"error,omitempty"`
	// Disruption: what the operation does to traffic, as plan predicts it
	// (for apply, from the current state the reconcile started from).
	Disruption *status.Disruption `json:"disruption,omitempty"`
}

// BlockedItem is an item that cannot be created now.
type BlockedItem struct {
	Item   string `json:"item"`
	Reason string `json:"reason"`
}

// ShownItem is one item of the current state.
type ShownItem struct {
	Item     string `json:"item"`
	Value    string `json:"value"`
	State    string `json:"state"`
	External bool   `json:"external,omitempty"`
	File     string `json:"file,omitempty"`
}

// The trial commands of the socket API.
const (
	CmdTry     = "try"     // apply Intent as a trial that reverts after Timeout unless confirmed
	CmdConfirm = "confirm" // make the pending trial permanent
)

// CmdWatch streams status changes (see the package doc).
const CmdWatch = "watch"

// EventFormat is the version of Event's shape; it changes only if a field
// changes meaning or goes away.
const EventFormat = 1

// The kinds of Event.
const (
	EventStatus    = "status"    // the first of a stream: Status is the whole status
	EventReady     = "ready"     // the agent became ready (To "true") or stopped being so
	EventCondition = "condition" // a condition of a document (File) changed: From, To are "True"/"False" ("" when the document came or went)
	EventItem      = "item"      // an item's state changed: From, To are states ("" when it came or went)
	EventDrift     = "drift"     // an item left as it drifted (drift: report): To "drifted", or "" when it no longer is
	EventLink      = "link"      // an external link's state: "up", "no-carrier", "down", "admin-down" ("" when it came or went)
	EventTrial     = "trial"     // a trial started (To "pending") or ended (To its result)
	EventMissed    = "missed"    // Missed events were dropped: the client read too slowly
)

// Event is one change of the daemon's status.
type Event struct {
	Format    int            `json:"format"`
	Time      time.Time      `json:"time"`
	Kind      string         `json:"kind"`
	File      string         `json:"file,omitempty"`
	Item      string         `json:"item,omitempty"`
	Link      string         `json:"link,omitempty"`
	Condition string         `json:"condition,omitempty"`
	From      string         `json:"from,omitempty"`
	To        string         `json:"to,omitempty"`
	Reason    string         `json:"reason,omitempty"`
	Message   string         `json:"message,omitempty"`
	Missed    int            `json:"missed,omitempty"`
	Status    *status.Status `json:"status,omitempty"`
}

// String renders the event as one line, without its time.
func (e Event) String() string {
	change := fmt.Sprintf("%s -> %s", orNone(e.From), orNone(e.To))
	var s string
	switch e.Kind {
	case EventStatus:
		return "status: watching"
	case EventMissed:
		return fmt.Sprintf("missed: %d events dropped (the client read too slowly); `netagent status` shows the whole state", e.Missed)
	case EventCondition:
		s = fmt.Sprintf("%s %s: %s", e.File, e.Condition, change)
		if e.Reason != "" {
			s += " (" + e.Reason + ")"
		}
	case EventItem, EventDrift:
		s = fmt.Sprintf("%s: %s", e.Item, change)
		if e.File != "" {
			s = fmt.Sprintf("%s (%s): %s", e.Item, e.File, change)
		}
	case EventLink:
		s = fmt.Sprintf("%s: %s", e.Link, change)
	default:
		s = change
	}
	if e.Message != "" {
		s += ": " + e.Message
	}
	return e.Kind + " " + s
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// CmdMetrics is the socket API's command that answers with the metrics in
// the Prometheus text format (Response.Metrics). It is answered outside the
// loop, from the metrics' registry: a busy loop does not delay it.
const CmdMetrics = "metrics"

// MaxRequestSize bounds a request: 32 MiB. An apply of an intent with
// 100k routes, each with via, dev, metric and table, is 9.3 MB of compact
// JSON (the client sends it compact), so the limit leaves a margin of three
// while keeping a request's memory (the decoder holds it about three times
// over) near 100 MB. A larger request is answered with an error naming the
// limit.
const MaxRequestSize = 32 << 20

// MaxConnections bounds the connections served at once for any request;
// with MaxRequestSize it bounds what requests can make the daemon hold.
// One more (ReadOnlyConnections) is kept for a status, show or metrics
// request, so that `netagent status` answers while the others are busy
// (streaming events, waiting for a long apply, or idle). A connection
// beyond both is refused: it gets the error answer ("too many
// connections", ErrBusy) and its request is read and dropped before it is
// closed, so that the client reads the answer and a clean end of stream,
// never a reset.
const MaxConnections = 8

// ReadOnlyConnections is the number of connections served beyond
// MaxConnections, for readOnly requests only.
const ReadOnlyConnections = 1

// IdleTimeout bounds how long a connection may send nothing before its
// request begins: a client connects and sends at once, and one that does
// not gets the error answer and is closed, so that idle connections
// cannot hold the slots. The whole request then has requestTimeout.
// (A watch is idle by design once its request is in: its client only
// reads, and the stream's writes are bounded by requestTimeout each.)
const IdleTimeout = 5 * time.Second

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
