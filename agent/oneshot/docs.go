package oneshot

import (
	"cmp"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/netagent/netagent/agent/api"
	"github.com/netagent/netagent/agent/host"
	"github.com/netagent/netagent/agent/intent"
	"github.com/netagent/netagent/agent/render"
	"github.com/netagent/netagent/agent/status"
	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/internal/disrupt"
	"github.com/netagent/netagent/reconciler"
)

// PassOf returns the 1-based pass of the i-th operation.
func PassOf(res *host.PlanResult, i int) int {
	pass := 1
	for _, start := range res.FollowUps {
		if i >= start {
			pass++
		}
	}
	return pass
}

// PassStart returns the index of the first operation of a pass (> 1).
func PassStart(res *host.PlanResult, pass int) int { return res.FollowUps[pass-2] }

// ProblemState names what an apply would leave an item in: blocked, or
// failed (a plan predicts the failure: nothing ran).
func ProblemState(p host.Problem) string {
	if p.Blocked {
		return "blocked"
	}
	return "predicted to fail"
}

// PlanDoc is the document `plan --json` prints.
type PlanDoc struct {
	// Disruption is what the plan does to traffic, in short; each
	// operation's own is its "disruption".
	Disruption  DisruptionDoc   `json:"disruption"`
	Operations  []OpDoc         `json:"operations"`
	Problems    []ProblemDoc    `json:"problems,omitempty"`
	SideEffects []SideEffectDoc `json:"sideEffects,omitempty"`
	// Warnings are what the plan warns of without predicting a failure
	// (host.PlanResult.Warnings).
	Warnings []WarningDoc `json:"warnings,omitempty"`
	// Orphans are the objects kept in the kernel although the intent no
	// longer holds them (a link it protected); Refused the disruptions of
	// protected links that make apply refuse (with --force: that it runs
	// anyway, Forced).
	Orphans []OrphanDoc `json:"orphans,omitempty"`
	Refused []string    `json:"refused,omitempty"`
	Forced  bool        `json:"forced,omitempty"`
}

// WarningDoc is one of plan's warnings: the intended item it is about
// ("" for none) and what it says.
type WarningDoc struct {
	Item string `json:"item,omitempty"`
	Text string `json:"text"`
}

type OrphanDoc struct {
	Item   string `json:"item"`
	Link   string `json:"link"`
	Reason string `json:"reason"`
}

type OpDoc struct {
	Op          string `json:"op"`
	Item        string `json:"item"`
	Recreate    bool   `json:"recreate,omitempty"`
	Description string `json:"description"`
	// Error is the error the operation is predicted to fail with.
	Error string `json:"error,omitempty"`
	// Pass is the apply pass that runs it: 1, or a follow-up pass that
	// writes again what the kernel changed by itself.
	Pass int `json:"pass"`
	// Disruption is what the operation does to traffic.
	Disruption *OpDisruptionDoc `json:"disruption,omitempty"`
	// Adopt, for a create that takes over someone else's object (plan
	// --adopt), is "mark only" when only netagent's mark is written, and
	// "modify" when the object is changed too; Text is the line plan
	// prints for the operation ("adopt (mark only) address/...").
	Adopt string `json:"adopt,omitempty"`
	Text  string `json:"text,omitempty"`
}

// ProblemDoc is an item an apply would leave failed or blocked: State is
// "predicted to fail" or "blocked".
type ProblemDoc struct {
	Item    string `json:"item"`
	State   string `json:"state"`
	Blocked bool   `json:"blocked"`
	Reason  string `json:"reason"`
	// MissingNIC names the NIC the item is or waits for, which does not
	// exist on this host (host.Problem.MissingNIC).
	MissingNIC string `json:"missingNic,omitempty"`
	// WaitsForCarrier names the link whose carrier the blocked item waits
	// for (host.Problem.WaitsOnState).
	WaitsForCarrier string `json:"waitsForCarrier,omitempty"`
}

// problemDoc is the ProblemDoc of p, in state.
func problemDoc(p host.Problem, state string) ProblemDoc {
	return ProblemDoc{Item: p.Ref.String(), State: state, Blocked: p.Blocked, Reason: p.Reason,
		MissingNIC: p.MissingNIC, WaitsForCarrier: p.WaitsOnState}
}

// SideEffectDoc is an intended item the kernel changes by itself after
// an operation (Cause): certainly, or depending on what it decides then.
type SideEffectDoc struct {
	Item    string `json:"item"`
	Cause   string `json:"cause"`
	Reason  string `json:"reason"`
	Certain bool   `json:"certain"`
}

func OpsDoc(log reconciler.OperationLog) []OpDoc {
	out := make([]OpDoc, 0, len(log))
	for _, e := range log {
		o := OpDoc{Op: e.Op.String(), Item: e.Ref.String(), Recreate: e.Recreate, Description: e.Item.String()}
		if e.Err != nil {
			o.Error = e.Err.Error()
		}
		out = append(out, o)
	}
	return out
}

// DisruptionLine renders a prediction as the line under an operation.
func DisruptionLine(p disrupt.Prediction) string {
	s := "traffic: " + p.Label()
	if p.Why != "" {
		s += ": " + p.Why
	}
	if len(p.LinksDown) > 0 {
		s += " [down: " + strings.Join(p.LinksDown, ", ") + "]"
	}
	return s
}

// DisruptionDoc is the "disruption" object of `plan --json`: what the
// plan does to traffic, in short (the daemon's summary, api.Response's
// Disruption, and the protected links).
type DisruptionDoc struct {
	status.DisruptionSummary
	// ProtectedTouched are the protected links the plan disrupts.
	ProtectedTouched []string `json:"protectedTouched"`
}

// OpDisruptionDoc is what one operation does to traffic. Effect is one
// of "none" (new, or in place), "atomic" (replaced in one step, no
// window), "detach" (a port out of its master for the duration),
// "withdrawn" (missing for the duration), "flap" (the link goes down and
// up), "down" (set down), "recreate" (deleted and created again, new
// ifindex) or "removed" (deleted for good). Certain is false when it
// depends on the kernel or the driver (Effect is then the worst case).
type OpDisruptionDoc struct {
	Effect    string   `json:"effect"`
	Certain   bool     `json:"certain"`
	LinksDown []string `json:"linksDown,omitempty"`
	Why       string   `json:"why,omitempty"`
}

func PlanDisruption(res *host.PlanResult, protected []string) DisruptionDoc {
	return DisruptionDocOf(host.SummarizeDisruption(res.Ops, res.Disruptions, res.SideEffects), protected)
}

// DisruptionDocOf is the "disruption" object of a summary d.
func DisruptionDocOf(d host.Disruption, protected []string) DisruptionDoc {
	return DisruptionDoc{DisruptionSummary: status.SummaryOf(d), ProtectedTouched: append([]string{}, protected...)}
}

func OpDisruptionOf(p disrupt.Prediction) *OpDisruptionDoc {
	return &OpDisruptionDoc{Effect: string(p.Effect), Certain: p.Certain, LinksDown: p.LinksDown, Why: p.Why}
}

// ApplyCounts are the operations an apply ran done and failed, and the
// items left blocked.
type ApplyCounts struct{ Done, Failed, Blocked int }

func TallyApply(res *host.Result) ApplyCounts {
	var c ApplyCounts
	for _, e := range res.Ops {
		if e.Err != nil {
			c.Failed++
		} else {
			c.Done++
		}
	}
	for _, p := range res.Problems {
		if p.Blocked {
			c.Blocked++
		}
	}
	return c
}

// ApplyDoc is what `apply --json` prints.
type ApplyDoc struct {
	Format    int    `json:"format"`
	Converged bool   `json:"converged"`
	Done      int    `json:"done"`
	Failed    int    `json:"failed"`
	Blocked   int    `json:"blocked"`
	Duration  string `json:"duration"`
	// Disruption is what the operations run did to traffic, in short, as
	// plan's "disruption" (the links that went down, the routes the
	// operations withdrew; protectedTouched is empty: apply refuses to
	// disrupt a protected link unless forced). Absent when the operations
	// could not be lined up with their predictions.
	Disruption *DisruptionDoc `json:"disruption,omitempty"`
	// Operations are those run, in order, with what each does to traffic
	// (as plan's) and the error of a failed one.
	Operations []OpDoc      `json:"operations"`
	Problems   []ProblemDoc `json:"problems,omitempty"`
	Error      string       `json:"error,omitempty"`
	// Leases: per interface with dhcp4, the lease held or why none is.
	Leases []LeaseReport `json:"leases,omitempty"`
	// Orphans are the objects kept although the intent left them out,
	// because deleting them would disrupt a link it protected (as plan's).
	Orphans []OrphanDoc `json:"orphans,omitempty"`
}

// CheckDoc is what `check --json` prints.
type CheckDoc struct {
	Format int `json:"format"`
	// Converged: nothing differs (ignored drift aside).
	Converged bool               `json:"converged"`
	Counts    map[string]int     `json:"counts"`
	Items     []status.CheckItem `json:"items"`
	// LeasesRefused: the leases the intent refused in part or whole
	// (not converged: the kernel lacks what the intent asked of them).
	LeasesRefused []status.LeaseRefusal `json:"leasesRefused,omitempty"`
}

// ValidateDoc is what `validate --json` prints.
type ValidateDoc struct {
	Format int  `json:"format"`
	Valid  bool `json:"valid"`
	Files  int  `json:"files"`
	// Items is the number of items the intent renders to (valid only).
	Items    int           `json:"items"`
	Problems []ProblemLine `json:"problems,omitempty"`
}

// ProblemLine is one problem of an intent: the file, the JSON path of the
// value ("" for the document as a whole) and what is wrong.
type ProblemLine struct {
	File    string `json:"file,omitempty"`
	Path    string `json:"path,omitempty"`
	Message string `json:"message"`
}

// DaemonDocument is the intent files as one document for the socket API:
// a single file as it is, several parsed and merged. The daemon validates
// the document together with its own.
func DaemonDocument(files []string) (json.RawMessage, error) {
	switch len(files) {
	case 0: // the daemon's own intent alone (plan, check)
		return nil, nil
	case 1:
		return os.ReadFile(files[0])
	}
	parsed := make(map[string]*intent.Intent, len(files))
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		in, err := intent.Parse(data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		parsed[filepath.Clean(f)] = in
	}
	merged, err := intent.Merge(parsed)
	if err != nil {
		return nil, err
	}
	return json.Marshal(merged)
}

// DaemonApplyDoc is apply's JSON document of an apply through the
// daemon: the operations it ran, and the items of the API's document it
// has not created (pending) as problems.
func DaemonApplyDoc(ops []api.OpResult, pending []ProblemDoc, took time.Duration) ApplyDoc {
	doc := ApplyDoc{Format: OutputFormat, Converged: len(pending) == 0, Duration: took.Round(time.Millisecond).String(),
		Operations: make([]OpDoc, 0, len(ops)), Problems: pending}
	for _, op := range ops {
		o := OpDoc{Op: op.Op, Item: op.Item, Recreate: op.Recreate, Description: op.Value, Error: op.Error}
		if d := op.Disruption; d != nil {
			o.Disruption = &OpDisruptionDoc{Effect: d.Effect, Certain: d.Certain, LinksDown: d.LinksDown, Why: d.Why}
		}
		if op.Error != "" {
			doc.Failed++
		} else if !op.InProgress {
			doc.Done++
		}
		doc.Operations = append(doc.Operations, o)
	}
	for _, p := range pending {
		if p.Blocked {
			doc.Blocked++
		}
	}
	return doc
}

// APIPending lists the items of the API's document that the daemon has
// not created, with why (state as the daemon's status names it).
func APIPending(st *status.Status) []ProblemDoc {
	if st == nil {
		return []ProblemDoc{{Item: "status", State: "failed", Reason: "the daemon sent no status"}}
	}
	var out []ProblemDoc
	for _, it := range st.Items {
		if it.File != "api" || it.State == "created" && it.LastError == "" {
			continue
		}
		why := it.BlockedOn
		if it.LastError != "" {
			why = it.LastError
		}
		out = append(out, ProblemDoc{Item: it.Item, State: it.State, Blocked: it.State == "blocked", Reason: why})
	}
	return out
}

// PlanDocOf is `plan --json`: the plan res of what the protection gd let
// through, with what it decided.
func PlanDocOf(res *host.PlanResult, gd *Guarded) PlanDoc {
	doc := PlanDoc{Operations: OpsDoc(res.Ops), Forced: gd.Force && len(gd.Refused) > 0,
		Disruption: PlanDisruption(res, gd.ProtectedTouched()), Orphans: gd.OrphanDocs()}
	for _, r := range gd.Refused {
		doc.Refused = append(doc.Refused, r.Why)
	}
	for i := range doc.Operations {
		doc.Operations[i].Pass = PassOf(res, i)
		doc.Operations[i].Adopt, doc.Operations[i].Text = adoptDoc(res.Ops[i], res.Adoptions)
		if i < len(res.Disruptions) {
			doc.Operations[i].Disruption = OpDisruptionOf(res.Disruptions[i])
		}
	}
	for _, p := range res.Problems {
		doc.Problems = append(doc.Problems, problemDoc(p, ProblemState(p)))
	}
	for _, e := range res.SideEffects {
		doc.SideEffects = append(doc.SideEffects, SideEffectDoc{Item: e.Ref.String(), Cause: e.Cause, Reason: e.Reason, Certain: e.Certain})
	}
	for _, w := range res.Warnings {
		d := WarningDoc{Text: w.Text}
		if w.Ref != (dg.ItemRef{}) {
			d.Item = w.Ref.String()
		}
		doc.Warnings = append(doc.Warnings, d)
	}
	return doc
}

// adoptDoc is the Adopt and Text of operation e of a plan or an apply
// ("" for an operation that adopts nothing).
func adoptDoc(e reconciler.OpLogEntry, adoptions map[dg.ItemRef]host.Adoption) (adopt, text string) {
	a, ok := host.AdoptionOf(e, adoptions)
	if !ok {
		return "", ""
	}
	adopt = "modify"
	if a.MarkOnly {
		adopt = "mark only"
	}
	return adopt, host.OpText(e, adoptions)
}

// OrphanDocs lists the orphans for a JSON document (none when forced:
// they go).
func (gd *Guarded) OrphanDocs() []OrphanDoc {
	if gd == nil || gd.Force || gd.Guarded == nil {
		return nil
	}
	out := make([]OrphanDoc, 0, len(gd.Orphans))
	for _, o := range gd.Orphans {
		out = append(out, OrphanDoc{Item: o.Ref.String(), Link: o.Link, Reason: o.Reason})
	}
	return out
}

// ApplyDocOf is `apply --json` of what an apply did (applied), how long it
// took, its leases and the orphans of protected links.
func ApplyDocOf(applied *host.Applied, took time.Duration, leases []LeaseReport, orphans []OrphanDoc) ApplyDoc {
	res := &applied.Result
	c := TallyApply(res)
	doc := ApplyDoc{Format: OutputFormat, Converged: res.Converged(), Done: c.Done, Failed: c.Failed,
		Blocked: c.Blocked, Duration: took.Round(time.Millisecond).String(), Operations: OpsDoc(res.Ops), Leases: leases, Orphans: orphans}
	for i, p := range applied.Disruptions {
		if i < len(doc.Operations) {
			doc.Operations[i].Disruption = OpDisruptionOf(p)
		}
	}
	for i := range doc.Operations {
		doc.Operations[i].Adopt, doc.Operations[i].Text = adoptDoc(res.Ops[i], applied.Adoptions)
	}
	if applied.Disruptions != nil {
		d := DisruptionDocOf(host.SummarizeDisruption(res.Ops, applied.Disruptions, nil), nil)
		doc.Disruption = &d
	}
	doc.Problems = problemDocs(res.Problems)
	if res.Err != nil && len(res.Problems) == 0 {
		doc.Error = res.Err.Error()
	}
	return doc
}

// ValidateDocOf is `validate --json` of the files at paths: every problem
// with its file and JSON path. The error is the first file that cannot be
// read (each is named in the problems), or an *InvalidError.
func ValidateDocOf(paths []string) (ValidateDoc, error) {
	doc := ValidateDoc{Format: OutputFormat, Files: len(paths)}
	files := make(map[string][]byte, len(paths))
	var readErr error
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			doc.Problems = append(doc.Problems, ProblemLine{File: p, Message: err.Error()})
			readErr = cmp.Or(readErr, err)
			continue
		}
		files[p] = data
	}
	if readErr != nil {
		return doc, readErr
	}
	intended, err := render.Load(files)
	for _, fe := range intent.FieldErrors(err) {
		doc.Problems = append(doc.Problems, ProblemLine{File: fe.File, Path: fe.Path, Message: fe.Msg})
	}
	if err != nil {
		if len(doc.Problems) == 0 {
			doc.Problems = append(doc.Problems, ProblemLine{Message: err.Error()})
		}
		return doc, &InvalidError{Err: err}
	}
	doc.Valid, doc.Items = true, intended.Len()
	return doc, nil
}

// LinkDown is a link the operations take down, and by which.
type LinkDown struct {
	Link       string
	Operations []string
}

// DaemonLinksDown lists the links the daemon's planned operations take
// down (from a daemon that sent no summary), in the order first met.
func DaemonLinksDown(ops []api.OpResult) []LinkDown {
	var out []LinkDown
	at := map[string]int{}
	for _, op := range ops {
		if op.Disruption == nil || op.Error != "" {
			continue
		}
		what := op.Op + " " + op.Item
		if op.Recreate {
			what = "recreate " + op.Item
		}
		for _, l := range op.Disruption.LinksDown {
			i, ok := at[l]
			if !ok {
				i, at[l] = len(out), len(out)
				out = append(out, LinkDown{Link: l})
			}
			if !slices.Contains(out[i].Operations, what) {
				out[i].Operations = append(out[i].Operations, what)
			}
		}
	}
	return out
}
