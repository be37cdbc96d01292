package agent

// Aliases of the types that moved to agent/api, until every user names
// that package.

import (
	"github.com/netagent/netagent/agent/api"
)

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
