package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/netagent/netagent/agent/api"
	"github.com/netagent/netagent/agent/host"
	"github.com/netagent/netagent/agent/status"
	"github.com/netagent/netagent/configurators"
	"github.com/netagent/netagent/configurators/link"
	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/reconciler"
)

// call is a Request on its way to the loop, with where to answer.
type call struct {
	req   api.Request
	reply chan api.Response
	// sub is the subscriber of a CmdWatch (events.go).
	sub *api.Subscriber
}

var _ api.Handler = (*Agent)(nil)

// Call hands req to the loop and waits for the answer (api.Handler: the
// socket server calls it for each request); tests call it directly.
func (a *Agent) Call(ctx context.Context, req api.Request) (api.Response, error) {
	if req.Command == api.CmdMetrics {
		return a.metricsResponse(), nil // outside the loop
	}
	if req.Command == api.CmdTry {
		if refused := a.preCheck(ctx, &req); refused != nil { // outside the loop: the probes take time
			return *refused, nil
		}
	}
	return a.send(ctx, call{req: req, reply: make(chan api.Response, 1)})
}

// send hands c to the loop and waits for its reply.
func (a *Agent) send(ctx context.Context, c call) (api.Response, error) {
	select {
	case a.calls <- c:
	case <-a.done:
		return api.Response{}, api.ErrNotRunning
	case <-ctx.Done():
		return api.Response{}, ctx.Err()
	}
	select {
	case r := <-c.reply:
		return r, nil
	case <-a.done:
		return api.Response{}, api.ErrNotRunning
	case <-ctx.Done():
		return api.Response{}, ctx.Err()
	}
}

// handle answers a call, in the loop. A trial with probes is answered
// later, when its probe round ends (try).
func (a *Agent) handle(ctx context.Context, c call) {
	if c.req.Command == api.CmdWatch {
		c.reply <- a.startWatch(c)
		return
	}
	if c.req.Command == api.CmdTry {
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

func (a *Agent) answer(ctx context.Context, req api.Request) api.Response {
	switch req.Command {
	case api.CmdStatus:
		st := a.status()
		return api.Response{Status: &st}
	case api.CmdShow:
		return api.Response{Items: api.ShowItems(a.st.current)}
	case api.CmdApply:
		if t := a.st.trial; t != nil { // the API's document is the trial's
			return api.Response{Error: fmt.Sprintf("a trial is pending (since %s): confirm or roll it back first", t.status.Since.Format(time.RFC3339))}
		}
		if err := a.checkVersion(req.IfVersion); err != nil {
			return errorResponse(err)
		}
		return a.apply(ctx, req.Intent)
	case api.CmdRollback:
		if req.Trial != "" {
			return a.rollbackTrial(ctx, req.Trial)
		}
		if t := a.st.trial; t != nil {
			return api.Response{Error: fmt.Sprintf("a trial is pending (%s, since %s): a rollback of versions waits until it ends; "+
				"name the trial to revert it (`netagent rollback`), or confirm it", t.status.ID, t.status.Since.Format(time.RFC3339))}
		}
		return a.rollback(ctx, req)
	case api.CmdConfirm:
		return a.confirmTrial(ctx, req.Trial)
	case api.CmdPlan:
		return a.plan(ctx, req.Intent)
	case api.CmdCheck:
		return a.check(ctx, req.Intent)
	}
	return api.Response{Error: fmt.Sprintf("unknown command %q (want apply, plan, check, show, status, metrics, rollback, try or confirm)", req.Command)}
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
func (a *Agent) apply(ctx context.Context, raw json.RawMessage) api.Response {
	if len(raw) == 0 {
		return api.Response{Error: errNoIntent.Error()}
	}
	next, res, problems, err := a.withAPIDoc(raw)
	switch {
	case err != nil:
		return api.Response{Error: err.Error()}
	case problems != nil:
		a.log.WithField("problems", len(problems)).Warn("api: intent rejected; nothing changed")
		return api.Response{Error: "intent rejected", Problems: problems}
	}
	a.adoptResolved(next, res, reasonAPI)
	a.api.set(raw)
	a.st.want(reasonAPI)
	before := configurators.PredictInputs(a.st.current) // plan's input, kept before the reconcile changes it
	found := a.found()                                  // as before: a NIC's restore forgets it
	rs := a.reconcile(ctx)
	st := a.status()
	ops, sum := withDisruption(api.OpResults(rs.OperationLog), rs.OperationLog, before, found)
	return api.Response{Operations: ops, Disruption: sum, Blocked: api.BlockedItems(rs.Blocked), Status: &st}
}

// plan is a dry run: of the running intent, or of the documents with raw
// as the API's document.
func (a *Agent) plan(ctx context.Context, raw json.RawMessage) api.Response {
	intended, refused := a.intendedWith(raw)
	if refused != nil {
		return *refused
	}
	rs := a.cfg.Kernel.Plan(ctx, a.st.results.records, a.st.current, intended)
	ops, sum := withDisruption(api.OpResults(rs.OperationLog), rs.OperationLog, a.st.current, a.found())
	return api.Response{Operations: ops, Disruption: sum, Blocked: api.BlockedItems(rs.Blocked)}
}

// intendedWith is the running intended graph, or, with raw, the graph of
// the documents with raw as the API's document (nothing changes); a
// response when raw is refused.
func (a *Agent) intendedWith(raw json.RawMessage) (*dg.Graph, *api.Response) {
	if len(raw) == 0 {
		return a.st.intended, nil
	}
	_, res, problems, err := a.withAPIDoc(raw)
	switch {
	case err != nil:
		return nil, &api.Response{Error: err.Error()}
	case problems != nil:
		return nil, &api.Response{Error: "intent rejected", Problems: problems}
	case res.changed:
		return res.graph, nil
	}
	return a.st.intended, nil
}

// intendedAlone renders raw alone, as a document of the API that no other
// document joins (nothing changes); a response when raw is refused.
func (a *Agent) intendedAlone(raw json.RawMessage) (*dg.Graph, *api.Response) {
	set := newDocSet()
	set.update(a.api.Name(), map[string][]byte{apiDocName: raw})
	res, err := set.resolve(time.Now(), a.renderer())
	switch {
	case err != nil:
		return nil, &api.Response{Error: err.Error()}
	case len(res.rejected[apiDocName]) > 0:
		return nil, &api.Response{Error: "intent rejected", Problems: res.rejected[apiDocName]}
	case set.docs[apiDocName] != nil && len(set.docs[apiDocName].errs) > 0:
		return nil, &api.Response{Error: "intent rejected", Problems: set.docs[apiDocName].errs}
	case res.graph == nil:
		return nil, &api.Response{Error: "intent rejected: it renders nothing"}
	}
	return res.graph, nil
}

// check reads the kernel back and compares it with the running intent
// (or with raw alone, the whole intent as a one-shot check takes its
// files: raw is merged with no document of the daemon's and becomes none),
// so that it reports what differs in the kernel, not in the agent's
// memory. It changes nothing.
func (a *Agent) check(ctx context.Context, raw json.RawMessage) api.Response {
	intended, refused := a.st.intended, (*api.Response)(nil)
	if len(raw) > 0 {
		intended, refused = a.intendedAlone(raw)
	}
	if refused != nil {
		return *refused
	}
	policies := a.st.policy.adopted
	if intended != a.st.intended {
		policies = a.st.policy.rendered // of the documents with raw, just rendered
	}
	rb, err := a.cfg.Kernel.ReadCurrent(ctx, intended)
	if err != nil {
		return api.Response{Error: fmt.Sprintf("reading the kernel back: %v", err)}
	}
	rs := a.cfg.Kernel.Plan(ctx, a.st.results.records, rb, intended)
	rep := host.Compare(rb, intended)
	differs, ignored := status.Differing(rep, intended, policies)
	leases := a.refusals // the adopted graph's: the intended one keeps an Equal lease item without its new Refused
	if intended != a.st.intended {
		leases = status.RefusalsOf(intended)
	}
	return api.Response{Operations: api.OpResults(status.WithoutOps(rs.OperationLog, ignored)), Blocked: api.BlockedItems(rs.Blocked),
		Differs: differs, Check: status.CheckItems(intended, rep, policies), LeasesRefused: status.LeaseRefusals(leases)}
}

// nicsFound is a Kernel that knows what the physical NICs netagent
// changed had before it (host.Kernel: the state directory's record,
// link.ReadFound; nil when not known), which a NIC leaving the intent gets
// back: the daemon's predictions are then the one-shot plan's.
type nicsFound interface {
	Found() link.Found
}

// found is what the physical NICs had before netagent, when the Kernel
// knows (nil otherwise: a NIC's restore is predicted as what may happen).
// Read before a reconcile: a restore forgets it.
func (a *Agent) found() link.Found {
	if k, ok := a.cfg.Kernel.(nicsFound); ok {
		return k.Found()
	}
	return nil
}

// withDisruption gives each of ops (api.OpResults of log) what it does to
// traffic, from before, the state the plan starts from, and found, what
// the NICs had before netagent (a.found), as the one-shot plan predicts
// it (host.PredictOpsFound); and returns the summary of the plan's
// disruption (host.SummarizeDisruption), nil without operations.
func withDisruption(ops []api.OpResult, log reconciler.OperationLog, before *dg.Graph, found link.Found) ([]api.OpResult, *status.DisruptionSummary) {
	preds := host.PredictOpsFound(log, before, found)
	for i, p := range preds {
		if i < len(ops) {
			ops[i].Disruption = status.DisruptionOf(p)
		}
	}
	if len(log) == 0 {
		return ops, nil
	}
	d := status.SummaryOf(host.SummarizeDisruption(log, preds, nil))
	return ops, &d
}

// errNoIntent is returned for an apply without a document.
var errNoIntent = errors.New("apply needs an intent document")
