package status

import (
	"strings"
	"time"

	"github.com/netagent/netagent/agent/host"
	"github.com/netagent/netagent/agent/intent"
	dg "github.com/netagent/netagent/depgraph"
)

// Status is what `netagent status` shows: the agent as a whole, each
// intent document and each item. Build builds it from a Snapshot of the
// daemon's loop, on request.
type Status struct {
	// Ready: the first reconcile is done, every source can be read, every
	// document is valid and converged, nothing failed, and no lease is
	// refused (ReasonLeaseRefused).
	Ready          bool      `json:"ready"`
	Reconciles     int       `json:"reconciles"`
	LastReconcile  time.Time `json:"lastReconcile,omitzero"`
	LastReasons    []string  `json:"lastReasons,omitempty"`
	NextRetry      time.Time `json:"nextRetry,omitzero"`
	NextDriftCheck time.Time `json:"nextDriftCheck,omitzero"`
	// Errors outside any item: a source that cannot be read, a rendering
	// failure, dependency cycles.
	Errors []string     `json:"errors,omitempty"`
	Files  []FileStatus `json:"files"`
	Items  []ItemStatus `json:"items"`
	Links  []LinkStatus `json:"links,omitempty"`
	// Version and Digest are the current version of the intent (0: the
	// daemon keeps none); Override says that a rollback is in force.
	Version  int    `json:"version,omitempty"`
	Digest   string `json:"digest,omitempty"`
	Override string `json:"override,omitempty"`
	// Trial is the pending trial (nil: none); LastTrial how the last one
	// ended (trial.go).
	Trial     *TrialStatus  `json:"trial,omitempty"`
	LastTrial *TrialOutcome `json:"lastTrial,omitempty"`
	// Drifted are the items whose drift policy is report that the last
	// drift check found changed or gone: netagent leaves them as they are
	// (DriftStatuses).
	Drifted []DriftStatus `json:"drifted,omitempty"`
	// Leases are the DHCPv4 and DHCPv6 leases in use, by interface (agent/lease).
	Leases []LeaseStatus `json:"leases,omitempty"`

	// Conditions are the agent's Ready and Degraded (Degraded, reason
	// IntentSourceUnreachable: a store source cannot be reached and the
	// documents it last delivered stay applied).
	Conditions []Condition `json:"conditions,omitempty"`
}

// FileStatus is the status of one intent document.
type FileStatus struct {
	Name   string `json:"name"`
	Source string `json:"source,omitempty"`
	// Conditions are Valid, Converged, Degraded and Ready, in that order.
	Conditions []Condition `json:"conditions"`
	// Errors are the problems of the source's current content, and the
	// objects it defines that another document defines too (applied from
	// neither).
	Errors []string `json:"errors,omitempty"`
	// AcceptedAt is when the applied version was accepted (zero if none).
	AcceptedAt time.Time `json:"acceptedAt,omitzero"`
	Items      int       `json:"items"`
}

// Condition is one aspect of a document's status.
type Condition struct {
	Type    string    `json:"type"`
	Status  bool      `json:"status"`
	Reason  string    `json:"reason"`
	Message string    `json:"message,omitempty"`
	Since   time.Time `json:"since"` // when Status last changed
}

// The condition types, in the order FileStatus lists them.
const (
	CondValid     = "Valid"     // the source's content is the applied one
	CondConverged = "Converged" // every item of the document is in place
	CondDegraded  = "Degraded"  // some item failed or is blocked
	CondReady     = "Ready"     // Valid and Converged
)

// The item states of ItemStatus.State, besides the depgraph states
// (created, failed, creating, modifying, deleting).
const (
	StateBlocked = "blocked" // intended, but cannot be created now (BlockedOn says why)
	StatePending = "pending" // to be created, changed or deleted by the next reconcile
	// StateNotConverging: the kernel did not keep the item's last change
	// (LastError says how); it is written again after a backoff, Failures
	// counting the read-backs that found it undone.
	StateNotConverging = "not-converging"
	// StateOrphaned: no document holds the item any more, but deleting it
	// would disrupt a protected link, so it is kept in the kernel as it is
	// (Orphaned says why); a document that declares it again adopts it.
	StateOrphaned = "orphaned"
)

// ItemStatus is the status of one managed item.
type ItemStatus struct {
	Item      string    `json:"item"` // type/name
	File      string    `json:"file,omitempty"`
	State     string    `json:"state"`
	Intended  bool      `json:"intended"`
	LastOp    string    `json:"lastOp,omitempty"`
	LastError string    `json:"lastError,omitempty"`
	Since     time.Time `json:"since,omitzero"`
	BlockedOn string    `json:"blockedOn,omitempty"`
	Failures  int       `json:"failures,omitempty"` // consecutive
	// Orphaned says why an orphaned item is kept.
	Orphaned string `json:"orphaned,omitempty"`

	// Ref is the item (not in the JSON).
	Ref dg.ItemRef `json:"-"`
}

// LinkStatus is an external link as the agent last saw it.
type LinkStatus struct {
	Name    string `json:"name"`
	Carrier bool   `json:"carrier"`
	OperUp  bool   `json:"operUp"`
	AdminUp bool   `json:"adminUp"`
}

// TrialStatus is the pending trial, in Status.
type TrialStatus struct {
	// ID names the trial (TrialID of Since) in a confirm or rollback
	// (Request.Trial).
	ID       string    `json:"id,omitempty"`
	Since    time.Time `json:"since"`
	Deadline time.Time `json:"deadline"`
	Probes   []string  `json:"probes,omitempty"`
	// FailingBefore are the probes that failed before the trial changed
	// anything, with why: they do not judge it (the daemon's).
	FailingBefore []string `json:"failingBefore,omitempty"`
	// Name is the intent file that confirming writes (the daemon's).
	Name string `json:"name,omitempty"`
	// PID runs the trial: a one-shot `netagent try` (status reads it from
	// the state directory, host.PendingTrial).
	PID int `json:"pid,omitempty"`
	// Settling: items the trial blocked wait for a link, up to the
	// trial's Wait; Probing: the probes run. Either way the trial cannot
	// be confirmed yet.
	Settling bool `json:"settling,omitempty"`
	Probing  bool `json:"probing,omitempty"`
	// KeepPartial: failed items do not revert the trial.
	KeepPartial bool `json:"keepPartial,omitempty"`
}

// The results of a TrialOutcome besides "confirmed" and "reverted".
const (
	// TrialRevertIncomplete: the revert of a trial left pending (a
	// netagent killed during it, a reboot) could not finish; the trial
	// stays pending and Reason says why.
	TrialRevertIncomplete = host.OutcomeRevertIncomplete
	// TrialUnknown: the record of the last outcome cannot be read.
	TrialUnknown = "unknown"
)

// TrialOutcome is how the last trial ended, in Status.
type TrialOutcome struct {
	ID string `json:"id,omitempty"` // the trial's (TrialStatus.ID), when known
	// Result is "confirmed", "reverted", TrialRevertIncomplete or
	// TrialUnknown.
	Result string    `json:"result"`
	Reason string    `json:"reason,omitempty"`
	At     time.Time `json:"at"`
	File   string    `json:"file,omitempty"` // confirmed: the intent file written
	// Since and Deadline are the trial's (the daemon's own record), so
	// that At can be placed against them.
	Since    time.Time `json:"since,omitzero"`
	Deadline time.Time `json:"deadline,omitzero"`
	// FailingBefore are the probes that failed before the trial changed
	// anything: they did not judge it.
	FailingBefore []string `json:"failingBefore,omitempty"`
	// Probe is the counted probe whose failure reverted the trial, and
	// ProbeFailedAt when its last run ended (the revert follows).
	Probe         string    `json:"probe,omitempty"`
	ProbeFailedAt time.Time `json:"probeFailedAt,omitzero"`
}

// TrialID is the id of a trial begun at started: its start to the
// nanosecond, in UTC. The target's trial record (host.Trial.Started)
// gives the same id, so that `netagent rollback` can name the trial it
// found pending.
func TrialID(started time.Time) string { return started.UTC().Format(time.RFC3339Nano) }

// The states of an item in a check that lists every item (`check --all`,
// `check --json`, with or without the daemon).
const (
	CheckOK      = "ok"
	CheckDiffers = "differs"
	CheckMissing = "missing"
	CheckExtra   = "extra"   // netagent's, in the kernel, no longer intended: apply deletes it
	CheckForeign = "foreign" // carries netagent's mark, no item describes it: left alone
	CheckIgnored = "ignored" // differs, but its drift policy is ignore
)

// CheckItem is one item of a check: its state, and for differs each
// attribute with the intended and the running value. Its JSON is that of
// an item of `check --json` (format 1).
type CheckItem struct {
	Item   string       `json:"item"`
	State  string       `json:"state"`
	Drift  string       `json:"drift,omitempty"` // the item's drift policy, unless repair
	Fields []DriftField `json:"fields,omitempty"`
	// HeldBy, for missing, are the objects netagent does not own in its
	// place.
	HeldBy []string `json:"heldBy,omitempty"`
	// Want is, for missing, the intended item; Have, for extra, the
	// running one (described as plan describes items).
	Want string `json:"want,omitempty"`
	Have string `json:"have,omitempty"`
}

// LeaseRefusal is a lease the intent refused in part or whole (its
// address, or routes, would take over the intent's own networks:
// render.LeaseRefused): the kernel lacks what the intent asked of the
// lease, so every form of check reports it and fails (`check`, `--all`,
// `--json`: leasesRefused, `--via-daemon`).
type LeaseRefusal struct {
	Interface string `json:"interface"`
	Family    string `json:"family"` // ipv4 (DHCPv4) or ipv6 (DHCPv6), as status's leases
	Refused   string `json:"refused"`
}

// String is check's line of the refusal.
func (r LeaseRefusal) String() string {
	client := "dhcp4"
	if r.Family == "ipv6" {
		client = "dhcp6"
	}
	return client + " " + r.Interface + ": refused: " + r.Refused
}

// Disruption is what a planned operation does to traffic (see
// host.PredictOps): Effect is "none", "atomic", "detach", "withdrawn",
// "flap", "down", "recreate" or "removed"; Certain is false when it
// depends on the kernel or the driver; LinksDown are the links it takes
// down.
type Disruption struct {
	Effect    string   `json:"effect"`
	Certain   bool     `json:"certain"`
	LinksDown []string `json:"linksDown,omitempty"`
	Why       string   `json:"why,omitempty"`
}

// DisruptionSummary is what a plan does to traffic, in short: the
// summary that heads it (host.Disruption), as `plan --json` prints it
// (its "disruption" object) and the socket sends it (Response).
type DisruptionSummary struct {
	// LinksDown are the links that go down (flap, set down, recreated,
	// deleted), in plan order.
	LinksDown []LinkDown `json:"linksDown"`
	// RoutesWithdrawn are the routes withdrawn, by the plan's operations
	// or by the kernel after one, for the duration or for good.
	RoutesWithdrawn []RouteWithdrawn `json:"routesWithdrawn"`
	// NeighborsWithdrawn are the static neighbour entries withdrawn, by
	// the plan's operations or by the kernel after one.
	NeighborsWithdrawn []NeighborWithdrawn `json:"neighborsWithdrawn"`
}

// LinkDown is one link that goes down, and by which operations.
type LinkDown struct {
	Link string `json:"link"`
	// Effect: "flap", "down", "recreate" or "removed" (see Disruption).
	Effect     string   `json:"effect"`
	Certain    bool     `json:"certain"`
	Operations []string `json:"operations"`
}

// RouteWithdrawn is one route withdrawn, and by what.
type RouteWithdrawn struct {
	Route string `json:"route"`
	// Effect: "withdrawn" (it comes back) or "removed".
	Effect string `json:"effect"`
	Cause  string `json:"cause"`
}

// NeighborWithdrawn is one neighbour entry withdrawn, and by what.
type NeighborWithdrawn struct {
	Neighbor string `json:"neighbor"`
	// Effect: "withdrawn" (it comes back) or "removed".
	Effect string `json:"effect"`
	Cause  string `json:"cause"`
}

// DriftStatus is a report item that differs from the intent in the kernel:
// netagent leaves it as it is (its drift policy is report).
type DriftStatus struct {
	Item string `json:"item"` // type/name
	File string `json:"file,omitempty"`
	// What is "changed" or "gone" (deleted by someone else).
	What   string       `json:"what"`
	Fields []DriftField `json:"fields,omitempty"`
	// Policy is the item's drift policy, in check's answer (Differs).
	Policy intent.DriftPolicy `json:"policy,omitempty"`
}

// DriftField is one attribute of a drifted item: the intended and the
// running value.
type DriftField struct {
	Field    string `json:"field"`
	Intended string `json:"intended"`
	Running  string `json:"running"`
}

// String is "route/main 10.0.0.0/8 metric 0: Gw: intended 192.0.2.1, running 192.0.2.9".
func (d DriftStatus) String() string {
	if len(d.Fields) == 0 {
		return d.Item + ": " + d.What
	}
	parts := make([]string, len(d.Fields))
	for i, f := range d.Fields {
		parts[i] = f.Field + ": intended " + f.Intended + ", running " + f.Running
	}
	return d.Item + ": " + strings.Join(parts, "; ")
}

// LeaseStatus is one lease in the status: what the server granted and
// when it is next renewed and expires.
type LeaseStatus struct {
	Interface string `json:"interface"`
	// Family is "ipv4" (DHCPv4) or "ipv6" (DHCPv6).
	Family   string    `json:"family"`
	Address  string    `json:"address"`
	Server   string    `json:"server,omitempty"`
	Gateway  string    `json:"gateway,omitempty"`
	DNS      []string  `json:"dns,omitempty"`
	Domains  []string  `json:"domains,omitempty"`
	Obtained string    `json:"obtained,omitempty"`
	Acquired time.Time `json:"acquired"`
	RenewAt  time.Time `json:"renewAt"`
	RebindAt time.Time `json:"rebindAt"`
	Expires  time.Time `json:"expires"`
	// Held: a server granted or confirmed it since the agent started
	// (false: the kept lease, being asked for again).
	Held bool `json:"held"`
	// Dropped says what of the server's answer was not used (a DNS
	// server that is not unicast, a domain that is not a DNS name, a
	// renewal time of 0, ...).
	Dropped []string `json:"dropped,omitempty"`
	// LastError is why the last exchange on the lease failed (no answer,
	// an unusable answer: the lease held stays), until one succeeds.
	LastError string `json:"lastError,omitempty"`
	// Refused: why the intent leaves out the lease's address or some of
	// its routes (they would take over the intent's own networks:
	// render.LeaseRefused).
	Refused string `json:"refused,omitempty"`
}

// ReasonLeaseRefused is the agent's Degraded (and Ready false) while a
// lease is refused in part or whole (render.LeaseRefused): its server
// offered an address or routes that would take over the intent's own
// networks, so the interface lacks what its dhcp4 or dhcp6 asks, as a
// networkd link whose DHCP configuration fails stays short of
// configured. The message names the interface and why (the first
// refusal, and how many more).
const ReasonLeaseRefused = "LeaseRefused"
