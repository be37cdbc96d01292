package oneshot

import (
	"github.com/netagent/netagent/agent/host"
	"github.com/netagent/netagent/agent/status"
	"github.com/netagent/netagent/agent/trial"
	"github.com/netagent/netagent/internal/statefile"
)

// AnswerDoc is what `confirm --json` prints (and `rollback --json` of a
// pending trial): how the trial ended on the request.
type AnswerDoc struct {
	Format int `json:"format"`
	// Request is "confirm" or "revert"; Answered: the trial ended as
	// asked (exit status 0).
	Request  string `json:"request"`
	Answered bool   `json:"answered"`
	// Result is how it ended ("confirmed", "reverted",
	// "RevertIncomplete": the revert could not start, the trial stays
	// pending), and why.
	Result string `json:"result"`
	Reason string `json:"reason,omitempty"`
	// PID is the process that ran the trial (a one-shot try); Daemon the
	// daemon's trial's ID and File the intent file its confirm wrote.
	PID    int    `json:"pid,omitempty"`
	Daemon string `json:"daemon,omitempty"`
	File   string `json:"file,omitempty"`
}

// AnswerDocOf is the AnswerDoc of a one-shot trial's outcome o on r.
func AnswerDocOf(o *host.Outcome, r host.Request) AnswerDoc {
	return AnswerDoc{Format: OutputFormat, Request: string(r), Answered: Answered(o, r), Result: o.Result, Reason: o.Reason, PID: o.PID}
}

// DaemonAnswerDocOf is the AnswerDoc of the daemon's trial id's outcome o
// (nil: the daemon had no outcome to give) on r, which it did (it
// refuses a request it cannot do).
func DaemonAnswerDocOf(o *status.TrialOutcome, id string, r host.Request) AnswerDoc {
	doc := AnswerDoc{Format: OutputFormat, Request: string(r), Daemon: id, Answered: true}
	if o != nil {
		doc.Result, doc.Reason, doc.File = o.Result, o.Reason, o.File
	}
	return doc
}

// TryDoc is what `try --json` prints when the trial ended.
type TryDoc struct {
	Format int `json:"format"`
	// Refused: nothing was changed (a protected link, or a probe failing
	// before with --probe-must-pass-before).
	Refused bool `json:"refused"`
	// FailingBefore are the probes that failed before any change: they
	// did not count.
	FailingBefore []string `json:"failingBefore,omitempty"`
	Confirmed     bool     `json:"confirmed"`
	How           string   `json:"how,omitempty"`
	// Reverted says why and how the trial was reverted (absent: it was
	// not).
	Reverted *RevertDoc `json:"reverted,omitempty"`
	// Problems are what the apply left, when they reverted it.
	Problems []ProblemDoc `json:"problems,omitempty"`
	// RecordError: the trial's intent could not be recorded as the new
	// version. Error: the trial could not begin, its revert failed (it
	// stays pending) or its confirm failed.
	RecordError string `json:"recordError,omitempty"`
	Error       string `json:"error,omitempty"`
}

// RevertDoc is a trial's revert: its fault ("timeout", "failed",
// "unkept", "probe", "internal"), why, and the operations it ran.
type RevertDoc struct {
	Fault      string       `json:"fault"`
	Reason     string       `json:"reason"`
	Operations []OpDoc      `json:"operations"`
	Problems   []ProblemDoc `json:"problems,omitempty"`
}

// faultNames are RevertDoc.Fault's.
var faultNames = map[trial.Fault]string{trial.Timeout: "timeout", trial.Failed: "failed", trial.Unkept: "unkept",
	trial.Probe: "probe", trial.Internal: "internal"}

// TryDocOf is the TryDoc of res.
func TryDocOf(res *TryResult) TryDoc {
	doc := TryDoc{Format: OutputFormat, Refused: res.Refused, Confirmed: res.Confirmed, How: res.How, Problems: problemDocs(res.Problems)}
	for _, f := range res.FailingBefore {
		doc.FailingBefore = append(doc.FailingBefore, f.String())
	}
	if res.Revert != nil {
		rd := &RevertDoc{Fault: faultNames[res.Revert.Fault], Reason: res.Revert.Reason, Operations: []OpDoc{}}
		if res.Reverted != nil {
			rd.Operations, rd.Problems = OpsDoc(res.Reverted.Ops), problemDocs(res.Reverted.Problems)
		}
		doc.Reverted = rd
	}
	if res.RecordErr != nil {
		doc.RecordError = res.RecordErr.Error()
	}
	if res.Err != nil {
		doc.Error = res.Err.Error()
	}
	return doc
}

// problemDocs are the ProblemDocs of an apply's problems.
func problemDocs(ps []host.Problem) []ProblemDoc {
	var out []ProblemDoc
	for _, p := range ps {
		state := "failed"
		if p.Blocked {
			state = "blocked"
		}
		out = append(out, problemDoc(p, state))
	}
	return out
}

// RecoverDoc is what `recover --json` prints for a namespace (a list of
// them with --all).
type RecoverDoc struct {
	Format   int    `json:"format"`
	Netns    string `json:"netns,omitempty"` // "" the host's
	StateDir string `json:"stateDir"`
	// Damaged are the damaged state files found; SetAside those set
	// aside (--accept-damaged).
	Damaged  []DamagedDoc  `json:"damaged,omitempty"`
	SetAside []SetAsideDoc `json:"setAside,omitempty"`
	// Stopped: a damaged file that is no cache stays; nothing was
	// reverted.
	Stopped bool `json:"stopped,omitempty"`
	// Daemon is the daemon serving the namespace (it recovers its own
	// trials); Busy, when set, the daemon met while setting files aside.
	Daemon string `json:"daemon,omitempty"`
	Busy   string `json:"busy,omitempty"`
	// Dropped: the trial of DroppedPID was dropped, its namespace gone.
	Dropped    string `json:"dropped,omitempty"`
	DroppedPID int    `json:"droppedPid,omitempty"`
	// Recovered is the pending trial recovered (absent: none was).
	Recovered *RecoveredDoc `json:"recovered,omitempty"`
	Error     string        `json:"error,omitempty"`
}

// DamagedDoc is a damaged state file: a cache is learnt again without it.
type DamagedDoc struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
	Cache  bool   `json:"cache"`
}

// SetAsideDoc is a damaged file set aside: where to, and what it held.
type SetAsideDoc struct {
	DamagedDoc
	To   string `json:"to"`
	Lost string `json:"lost"`
}

// RecoveredDoc is a pending trial recovered: reverted (Confirmed false),
// or completed because its confirm had written its file.
type RecoveredDoc struct {
	PID       int  `json:"pid"`
	Confirmed bool `json:"confirmed"`
	// Lost: the trial ran on another boot or namespace instance; Torn:
	// the journal's last record was cut short; Unaccounted: what the
	// journal did not account for, left as the trial left it
	// (--accept-incomplete).
	Lost        bool   `json:"lost,omitempty"`
	Torn        bool   `json:"torn,omitempty"`
	Unaccounted string `json:"unaccounted,omitempty"`
	// Note is recover's line about it.
	Note       string       `json:"note"`
	Operations []OpDoc      `json:"operations"`
	Problems   []ProblemDoc `json:"problems,omitempty"`
}

// RecoverDocOf is the RecoverDoc of a recovery of the namespace of o.
func RecoverDocOf(o *Options, res *RecoverResult, err error) RecoverDoc {
	doc := RecoverDoc{Format: OutputFormat, Netns: o.Netns, StateDir: o.StateDir, Stopped: res.Stopped,
		Dropped: res.Dropped, DroppedPID: res.DroppedPID}
	for _, d := range res.Damaged {
		doc.Damaged = append(doc.Damaged, damagedDoc(d))
	}
	for _, s := range res.SetAside {
		doc.SetAside = append(doc.SetAside, SetAsideDoc{DamagedDoc: damagedDoc(s.Damaged), To: s.To, Lost: s.Lost})
	}
	if res.Daemon != nil {
		doc.Daemon = res.Daemon.String()
	}
	if res.Busy != nil {
		doc.Busy = res.Busy.String()
	}
	if rec := res.Recovery; rec != nil {
		rd := &RecoveredDoc{PID: rec.Trial.PID, Confirmed: rec.Confirmed, Lost: rec.Lost, Torn: rec.Torn, Unaccounted: rec.Unaccounted,
			Note: RecoveryNote(rec), Operations: []OpDoc{}}
		if rec.Result != nil {
			rd.Operations, rd.Problems = OpsDoc(rec.Result.Ops), problemDocs(rec.Result.Problems)
		}
		doc.Recovered = rd
	}
	if err != nil {
		doc.Error = err.Error()
	}
	return doc
}

func damagedDoc(d *statefile.DamagedError) DamagedDoc {
	return DamagedDoc{Path: d.Path, Reason: d.Reason, Cache: statefile.IsCache(d.Path)}
}
