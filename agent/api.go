package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/netagent/netagent/agent/host"
	"github.com/netagent/netagent/configurators"
	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/reconciler"
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
	// Conflict: the request was refused because the current version is
	// not its IfVersion; Error says which it is.
	Conflict bool `json:"conflict,omitempty"`
	// TrialEnded: a confirm or rollback named a trial that is no longer
	// pending (ErrTrialEnded); how it ended, when the daemon knows.
	TrialEnded *TrialOutcome `json:"trialEnded,omitempty"`
	// Operations: for apply, those run; for plan, those a reconcile would
	// run; for check, those that would make the kernel match the intent.
	Operations []OpResult `json:"operations,omitempty"`
	// Disruption: for apply and plan, what the operations do to traffic,
	// summed up as the one-shot plan sums them up (`plan --json`'s
	// "disruption" object but protectedTouched): the links that go
	// down, the routes and neighbours the operations withdraw.
	Disruption *DisruptionSummary `json:"disruption,omitempty"`
	// Blocked: items that cannot be created now, with why.
	Blocked []BlockedItem `json:"blocked,omitempty"`
	// Status: for status, and for apply (after its reconcile).
	Status *Status `json:"status,omitempty"`
	// Items: for show.
	Items []ShownItem `json:"items,omitempty"`
	// Metrics: for metrics (CmdMetrics), the Prometheus text format.
	Metrics string `json:"metrics,omitempty"`
	// Differs: for check, the items in the kernel whose attributes differ
	// from the intent: each attribute, intended and running, with the
	// item's drift policy when it is report (an ignore item's are left
	// out, with its operations).
	Differs []DriftStatus `json:"differs,omitempty"`
	// Check: for check, every intended item, those apply would delete and
	// the objects marked netagent's that no item describes, each with its
	// state (`check --all` and `check --json` through the daemon).
	Check []CheckItem `json:"check,omitempty"`
	// LeasesRefused: for check, the leases the intent refused in part or
	// whole (their address or routes would take over its own networks).
	LeasesRefused []LeaseRefusal `json:"leasesRefused,omitempty"`
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
	Disruption *Disruption `json:"disruption,omitempty"`
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

// call is a Request on its way to the loop, with where to answer.
type call struct {
	req   Request
	reply chan Response
	// sub is the subscriber of a CmdWatch (events.go).
	sub *subscriber
}

// Call hands req to the loop and waits for the answer. It is what the
// socket server does for each connection; tests call it directly.
func (a *Agent) Call(ctx context.Context, req Request) (Response, error) {
	if req.Command == CmdMetrics {
		return a.metricsResponse(), nil // outside the loop
	}
	return a.send(ctx, call{req: req, reply: make(chan Response, 1)})
}

// send hands c to the loop and waits for its reply.
func (a *Agent) send(ctx context.Context, c call) (Response, error) {
	select {
	case a.calls <- c:
	case <-a.done:
		return Response{}, ErrNotRunning
	case <-ctx.Done():
		return Response{}, ctx.Err()
	}
	select {
	case r := <-c.reply:
		return r, nil
	case <-a.done:
		return Response{}, ErrNotRunning
	case <-ctx.Done():
		return Response{}, ctx.Err()
	}
}

// handle answers a call, in the loop. A trial with probes is answered
// later, when its probe round ends (try).
func (a *Agent) handle(ctx context.Context, c call) {
	if c.req.Command == CmdWatch {
		c.reply <- a.startWatchCall(c)
		return
	}
	if c.req.Command == CmdTry {
		if resp, done := a.try(ctx, c.req, c.reply); done {
			a.publishMetrics()
			c.reply <- resp
		}
		return
	}
	resp := a.answer(ctx, c.req)
	a.publishMetrics() // a caller that scrapes after the answer sees what it did
	c.reply <- resp
}

func (a *Agent) answer(ctx context.Context, req Request) Response {
	switch req.Command {
	case CmdStatus:
		st := a.status()
		return Response{Status: &st}
	case CmdShow:
		return Response{Items: showItems(a.st.current)}
	case CmdApply:
		if t := a.st.trial; t != nil { // the API's document is the trial's
			return Response{Error: fmt.Sprintf("a trial is pending (since %s): confirm or roll it back first", t.status.Since.Format(time.RFC3339))}
		}
		if err := a.checkVersion(req.IfVersion); err != nil {
			return errorResponse(err)
		}
		return a.apply(ctx, req.Intent)
	case CmdRollback:
		if req.Trial != "" {
			return a.rollbackTrial(ctx, req.Trial)
		}
		if t := a.st.trial; t != nil {
			return Response{Error: fmt.Sprintf("a trial is pending (%s, since %s): a rollback of versions waits until it ends; "+
				"name the trial to revert it (`netagent rollback`), or confirm it", t.status.ID, t.status.Since.Format(time.RFC3339))}
		}
		return a.rollback(ctx, req)
	case CmdConfirm:
		return a.confirmTrial(ctx, req.Trial)
	case CmdPlan:
		return a.plan(ctx, req.Intent)
	case CmdCheck:
		return a.check(ctx, req.Intent)
	}
	return Response{Error: fmt.Sprintf("unknown command %q (want apply, plan, check, show, status, metrics, rollback, try or confirm)", req.Command)}
}

// withAPIDoc returns the loop's documents with raw as the API's document,
// resolved; problems lists why raw was rejected (nil: it was accepted).
func (a *Agent) withAPIDoc(raw []byte) (next *docSet, res resolution, problems []string, err error) {
	next = a.st.docs.clone()
	contents := map[string][]byte{apiDocName: raw}
	next.update(a.api.Name(), contents)
	res, err = next.resolve(time.Now(), a.renderer())
	if err != nil {
		return nil, res, nil, err
	}
	if bad, ok := res.rejected[apiDocName]; ok {
		return nil, res, bad, nil
	}
	if bad := res.conflicts[apiDocName]; len(bad) > 0 {
		return nil, res, bad, nil // an apply that takes an object of a file is refused
	}
	if d := next.docs[apiDocName]; d != nil && len(d.errs) > 0 {
		return nil, res, d.errs, nil // does not parse
	}
	return next, res, nil, nil
}

// apply makes raw the API's document, if the documents stay valid with it,
// and reconciles at once. A rejected document changes nothing.
func (a *Agent) apply(ctx context.Context, raw json.RawMessage) Response {
	if len(raw) == 0 {
		return Response{Error: errNoIntent.Error()}
	}
	next, res, problems, err := a.withAPIDoc(raw)
	switch {
	case err != nil:
		return Response{Error: err.Error()}
	case problems != nil:
		a.log.WithField("problems", len(problems)).Warn("api: intent rejected; nothing changed")
		return Response{Error: "intent rejected", Problems: problems}
	}
	a.adoptResolved(next, res, reasonAPI)
	a.api.set(raw)
	a.st.want(reasonAPI)
	before := configurators.PredictInputs(a.st.current) // plan's input, kept before the reconcile changes it
	found := a.found()                                  // as before: a NIC's restore forgets it
	rs := a.reconcile(ctx)
	st := a.status()
	ops, sum := withDisruption(opResults(rs.OperationLog), rs.OperationLog, before, found)
	return Response{Operations: ops, Disruption: sum, Blocked: blockedItems(rs.Blocked), Status: &st}
}

// plan is a dry run: of the running intent, or of the documents with raw
// as the API's document.
func (a *Agent) plan(ctx context.Context, raw json.RawMessage) Response {
	intended, refused := a.intendedWith(raw)
	if refused != nil {
		return *refused
	}
	rs := a.cfg.Kernel.Plan(ctx, a.st.results.records, a.st.current, intended)
	ops, sum := withDisruption(opResults(rs.OperationLog), rs.OperationLog, a.st.current, a.found())
	return Response{Operations: ops, Disruption: sum, Blocked: blockedItems(rs.Blocked)}
}

// intendedWith is the running intended graph, or, with raw, the graph of
// the documents with raw as the API's document (nothing changes); a
// response when raw is refused.
func (a *Agent) intendedWith(raw json.RawMessage) (*dg.Graph, *Response) {
	if len(raw) == 0 {
		return a.st.intended, nil
	}
	_, res, problems, err := a.withAPIDoc(raw)
	switch {
	case err != nil:
		return nil, &Response{Error: err.Error()}
	case problems != nil:
		return nil, &Response{Error: "intent rejected", Problems: problems}
	case res.changed:
		return res.graph, nil
	}
	return a.st.intended, nil
}

// check reads the kernel back and plans against the running intent (or
// the documents with raw as the API's document, as plan), so that it
// reports what differs in the kernel, not in the agent's memory.
func (a *Agent) check(ctx context.Context, raw json.RawMessage) Response {
	intended, refused := a.intendedWith(raw)
	if refused != nil {
		return *refused
	}
	policies := a.st.policy.adopted
	if intended != a.st.intended {
		policies = a.st.policy.rendered // of the documents with raw, just rendered
	}
	rb, err := a.cfg.Kernel.ReadCurrent(ctx, intended)
	if err != nil {
		return Response{Error: fmt.Sprintf("reading the kernel back: %v", err)}
	}
	rs := a.cfg.Kernel.Plan(ctx, a.st.results.records, rb, intended)
	rep := host.Compare(rb, intended)
	differs, ignored := checkDiffers(rep, intended, policies)
	leases := a.refusals // the adopted graph's: the intended one keeps an Equal lease item without its new Refused
	if intended != a.st.intended {
		leases = RefusalsOf(intended)
	}
	return Response{Operations: opResults(withoutOps(rs.OperationLog, ignored)), Blocked: blockedItems(rs.Blocked),
		Differs: differs, Check: CheckItems(intended, rep, policies), LeasesRefused: LeaseRefusals(leases)}
}

func opResults(log reconciler.OperationLog) []OpResult {
	out := make([]OpResult, 0, len(log))
	for _, e := range log {
		r := OpResult{Op: e.Op.String(), Item: e.Ref.String(), Recreate: e.Recreate, InProgress: e.InProgress}
		if e.Item != nil {
			r.Value = e.Item.String()
		}
		if e.Err != nil {
			r.Error = e.Err.Error()
		}
		out = append(out, r)
	}
	return out
}

func blockedItems(m map[dg.ItemRef]string) []BlockedItem {
	out := make([]BlockedItem, 0, len(m))
	for _, ref := range slices.SortedFunc(maps.Keys(m), dg.ItemRef.Compare) {
		out = append(out, BlockedItem{Item: ref.String(), Reason: m[ref]})
	}
	return out
}

func showItems(g *dg.Graph) []ShownItem {
	var out []ShownItem
	for _, ref := range g.Refs() {
		it, st, _ := g.Lookup(ref)
		out = append(out, ShownItem{Item: ref.String(), Value: it.String(), State: st.State.String(),
			External: it.External(), File: fileOf(g, ref)})
	}
	return out
}
