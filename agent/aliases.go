package agent

// Aliases of the types that moved to agent/status, until every user
// names that package.

import (
	"github.com/netagent/netagent/agent/status"
)

type Status = status.Status
type FileStatus = status.FileStatus
type Condition = status.Condition
type ItemStatus = status.ItemStatus
type LinkStatus = status.LinkStatus
type TrialStatus = status.TrialStatus
type TrialOutcome = status.TrialOutcome
type CheckItem = status.CheckItem
type LeaseRefusal = status.LeaseRefusal
type Disruption = status.Disruption
type DisruptionSummary = status.DisruptionSummary
type LinkDown = status.LinkDown
type RouteWithdrawn = status.RouteWithdrawn
type NeighborWithdrawn = status.NeighborWithdrawn
type DriftStatus = status.DriftStatus
type DriftField = status.DriftField
type LeaseStatus = status.LeaseStatus

const CondValid = status.CondValid
const CondConverged = status.CondConverged
const CondDegraded = status.CondDegraded
const CondReady = status.CondReady
const StateBlocked = status.StateBlocked
const StatePending = status.StatePending
const StateNotConverging = status.StateNotConverging
const StateOrphaned = status.StateOrphaned
const TrialRevertIncomplete = status.TrialRevertIncomplete
const TrialUnknown = status.TrialUnknown
const CheckOK = status.CheckOK
const CheckDiffers = status.CheckDiffers
const CheckMissing = status.CheckMissing
const CheckExtra = status.CheckExtra
const CheckForeign = status.CheckForeign
const CheckIgnored = status.CheckIgnored
const ReasonLeaseRefused = status.ReasonLeaseRefused

var TrialID = status.TrialID

var CheckItems = status.CheckItems
var LeaseRefusals = status.LeaseRefusals
var RefusalsOf = status.RefusalsOf
var SummaryOf = status.SummaryOf
