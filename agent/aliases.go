package agent

// Aliases of the types that moved to agent/status and agent/api,
// until every user names those packages.

import (
	"github.com/netagent/netagent/agent/api"
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

type Request = api.Request
type Response = api.Response
type OpResult = api.OpResult
type BlockedItem = api.BlockedItem
type ShownItem = api.ShownItem
type Event = api.Event

const CmdApply = api.CmdApply
const CmdPlan = api.CmdPlan
const CmdCheck = api.CmdCheck
const CmdShow = api.CmdShow
const CmdStatus = api.CmdStatus
const CmdRollback = api.CmdRollback
const CmdTry = api.CmdTry
const CmdConfirm = api.CmdConfirm
const EventStatus = api.EventStatus
const EventReady = api.EventReady
const EventCondition = api.EventCondition
const EventItem = api.EventItem
const EventDrift = api.EventDrift
const EventLink = api.EventLink
const EventTrial = api.EventTrial
const EventMissed = api.EventMissed

var ErrSocketInUse = api.ErrSocketInUse
var ErrPermission = api.ErrPermission
var ErrRequestTooLarge = api.ErrRequestTooLarge
var ErrBusy = api.ErrBusy
var ErrIdle = api.ErrIdle
var ErrNotRunning = api.ErrNotRunning
var ErrTrialEnded = api.ErrTrialEnded

const CmdWatch = api.CmdWatch
const EventFormat = api.EventFormat
const CmdMetrics = api.CmdMetrics
const MaxRequestSize = api.MaxRequestSize
const MaxConnections = api.MaxConnections
const ReadOnlyConnections = api.ReadOnlyConnections
const IdleTimeout = api.IdleTimeout

var CheckItems = status.CheckItems
var LeaseRefusals = status.LeaseRefusals
var RefusalsOf = status.RefusalsOf
var SummaryOf = status.SummaryOf
