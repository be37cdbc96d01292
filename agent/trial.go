package agent

// Trials through the daemon (`netagent try --via-daemon`, CmdTry): a
// document applied as the socket API's document that reverts unless it is
// confirmed (CmdConfirm) before its deadline.
//
//   - While a trial is pending, the trial changes nothing the daemon keeps
//     on disk: it is no version, the accepted documents saved are those
//     without it (a daemon killed during the trial starts again from
//     them), and the intent directory is untouched.
//   - The trial reverts by itself, as the one-shot try does (the rule is
//     agent/trial's Judge), when an item fails or stays blocked
//     (waited for up to Wait: settleTrial) unless KeepPartial, when a
//     read-back right after the apply differs from the intent, when a
//     probe fails, or at the deadline (an alarm of the loop); items failed
//     or blocked before it are not its doing and count for none of these;
//     CmdRollback naming the pending trial (Request.Trial) reverts it now;
//     a confirm or rollback naming a trial that is no longer pending fails
//     (ErrTrialEnded), so that of a confirm and a rollback sent at once
//     exactly one wins, and a rollback without a trial (of versions) is
//     refused while one is pending. Reverting puts back
//     the API document that ran before and, with Config.Trials (the
//     daemon's host.Runtime), returns the kernel to its before-images
//     (the journal of agent/host, the same code as the one-shot
//     `netagent try`), then reconciles.
//   - The probes run outside the loop: a goroutine per probe round, bounded
//     by ProbeTimeout and the deadline, posts its outcome into the loop
//     (probesDone), which alone changes the trial. The try call is answered
//     once the trial stands or reverted; meanwhile the loop handles
//     everything else, and confirm is refused. An outcome whose trial has
//     ended is ignored.
//   - A change of the other documents while the trial is pending (an intent
//     file edited) is adopted at once, the trial staying on top: the
//     documents without the trial (base) are recorded as a version, saved
//     as the accepted ones, and given to the target's trial record as
//     Previous (trial.Handle.Update). A revert returns to the base, so the
//     edit stays; a confirm keeps both. An apply over the socket is refused
//     meanwhile: the API document is the trial's.
//   - Confirming writes the document atomically into the intent directory
//     (Config.TrialDir) as Request.Name (default trial-<version>.json), so
//     that it takes the API document's place, and records the version.
//     The trial's record says first that the confirm writes that file
//     (trial.Handle.Confirming: trial.WriteConfirmed), so that a daemon killed once it is written
//     finds the trial confirmed when it starts again, not reverted.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/netagent/netagent/agent/api"
	"github.com/netagent/netagent/agent/host"
	"github.com/netagent/netagent/agent/source"
	"github.com/netagent/netagent/agent/status"
	"github.com/netagent/netagent/agent/trial"
	"github.com/netagent/netagent/agent/versions"
	dg "github.com/netagent/netagent/depgraph"
)

// DefaultTrialTimeout is a trial's timeout when the request names none.
const DefaultTrialTimeout = trial.DefaultTimeout

// Prober runs a trial's probes (specs as `--probe` takes them) inside the
// target; nil error: all passed.
type Prober func(ctx context.Context, specs []string) error

// PreChecker runs a trial's probes once before it changes anything: the
// specs that judge it and the failures of the others (trial.PreCheck).
type PreChecker func(ctx context.Context, specs []string) (counted []string, failing []trial.Failing)

// ProbeWatcher watches a standing trial's probes (specs) every interval
// until ctx ends; the channel carries the failure that reverts the trial
// (a *trial.ProbeFailure, from trial.Watch), then closes.
type ProbeWatcher func(ctx context.Context, specs []string, every time.Duration) <-chan error

// preCheck runs a CmdTry's probes once, outside the loop (Call), before
// the trial changes anything: the probes failing already are left out of
// req.Probes and named in req.FailingBefore; the answer, set, refuses the
// trial (ProbesMustPassBefore).
func (a *Agent) preCheck(ctx context.Context, req *api.Request) *api.Response {
	req.FailingBefore = nil
	if len(req.Probes) == 0 || a.cfg.PreCheck == nil {
		return nil
	}
	params, err := trial.ParseParams(req.Timeout, req.ProbeTimeout, req.Wait)
	if err != nil {
		return nil // the loop refuses the request (checkTrial)
	}
	ctx, cancel := context.WithTimeout(ctx, params.ProbeTimeout)
	defer cancel()
	counted, failing := a.cfg.PreCheck(ctx, req.Probes)
	if len(failing) == 0 {
		return nil
	}
	if req.ProbesMustPassBefore {
		return &api.Response{Error: trial.Refusal(failing).Error(), ProbesFailing: true}
	}
	for _, f := range failing {
		a.log.WithField("probe", f.Probe).WithField("error", f.Err).Warn("trial: the probe fails before any change: it does not judge the trial")
		req.FailingBefore = append(req.FailingBefore, f.String())
	}
	req.Probes = counted
	return nil
}

// pendingTrial is the trial in progress; the loop owns it.
type pendingTrial struct {
	// id tells the outcome of this trial's probe round from a later
	// trial's (probeResult).
	id      uint64
	raw     []byte
	prevAPI []byte
	// prevDoc is the API's document as it was before the trial (nil:
	// none): with the files as they are, the base that a revert returns
	// to.
	prevDoc *doc
	status  status.TrialStatus
	handle  trial.Handle

	keepPartial  bool
	wait         time.Duration
	probeTimeout time.Duration
	// before are the items failed or blocked before the trial: not the
	// trial's doing, they neither revert it nor hold it up.
	before map[dg.ItemRef]bool
	// waiting is the try call, answered with resp and the status once the
	// trial stands or reverted (answerWaiting): after the items it blocked
	// were waited for (status.Settling) and its probes passed
	// (status.Probing; stopProbes cancels them).
	waiting    chan<- api.Response
	resp       api.Response
	stopProbes context.CancelFunc
	// failure is the probe failure that reverts the trial (nil: none),
	// for its outcome.
	failure *trial.ProbeFailure
}

// probeResult is the outcome of a trial's probe round, sent into the loop
// by the goroutine that ran it.
type probeResult struct {
	trial uint64
	err   error
	// watched: the failure comes from the watch of the standing trial
	// (watchProbes), not from its probe round.
	watched bool
}

// try answers CmdTry: at once (done) when the trial is refused; once it
// has begun, through reply when it stands (its blocked items waited for,
// its probes passed: settleTrial, probesDone) or has reverted, the loop
// going on meanwhile.
func (a *Agent) try(ctx context.Context, req api.Request, reply chan<- api.Response) (resp api.Response, done bool) {
	s := a.st
	t, next, res, refused := a.newTrial(req)
	if t == nil {
		return refused, true
	}
	if a.cfg.Trials != nil {
		files, prev := t.intents(s.docs, req.Intent)
		h, err := a.cfg.Trials.Begin(host.Trial{Started: t.status.Since, Deadline: t.status.Deadline,
			Files: files, Previous: prev, Probes: req.Probes})
		if err != nil {
			return api.Response{Error: fmt.Sprintf("beginning the trial: %v", err)}, true
		}
		t.handle = h
	}
	s.trial = t // before adopting: the trial is no version
	a.adoptResolved(next, res, reasonTry)
	a.api.set(req.Intent)
	s.want(reasonTry)
	rs := a.reconcile(ctx)
	t.waiting = reply
	t.resp = api.Response{Operations: api.OpResults(rs.OperationLog), Blocked: api.BlockedItems(rs.Blocked)}
	s.trialAlarm.set(time.Until(t.status.Deadline))
	a.log.WithField("deadline", t.status.Deadline.Format(time.RFC3339)).WithField("name", t.status.Name).Info("trial applied: reverts at the deadline unless confirmed")
	t.status.Settling = true
	s.trialWait.set(t.wait)
	a.settleTrial(ctx, false)
	return api.Response{}, false
}

// settleTrial moves the trial on once what it applied has settled: an item
// it made fail reverts it (unless it keeps what converged); while items it
// blocked wait for a link, it waits, at most its Wait (then: expired), and
// then reverts unless it keeps what converged; then the kernel is read back
// (verification) and the probes start. The loop calls it after each turn
// while the trial settles.
func (a *Agent) settleTrial(ctx context.Context, expired bool) {
	s := a.st
	t := s.trial
	p := a.trialProblems(t)
	p.Waiting = !expired
	step, rev := trial.Judge(p, t.keepPartial)
	switch {
	case step == trial.Wait:
		return // the link events may unblock them
	case step == trial.Reverts:
		a.revertTrial(ctx, rev.Reason)
		return
	}
	t.status.Settling = false
	s.trialWait.stop()
	if p.Partial() {
		// As the one-shot try: a trial that did not converge is not
		// verified.
		a.log.WithField("failed", len(p.Failed)).WithField("blocked", len(p.Blocked)).Warn("trial: items failed or stayed blocked; kept with what converged (keep partial)")
	} else if reason := a.verifyTrial(ctx, t); reason != "" {
		a.revertTrial(ctx, reason)
		return
	}
	if len(t.status.Probes) > 0 {
		a.startProbes(ctx, t)
		return
	}
	a.answerWaiting(t, nil)
}

// trialProblems lists the items failed and blocked now that were not
// before the trial.
func (a *Agent) trialProblems(t *pendingTrial) trial.Problems {
	s := a.st
	var p trial.Problems
	p.Failed = s.results.failed(s.current)
	for _, ref := range s.results.records.Blocked() {
		if _, ok := s.results.block(s.current, s.intended, ref); ok && !slices.Contains(p.Failed, ref) {
			p.Blocked = append(p.Blocked, ref)
		}
	}
	return p.Since(t.before)
}

// problemsNow are the items failed or blocked now.
func (a *Agent) problemsNow() map[dg.ItemRef]bool {
	s := a.st
	out := map[dg.ItemRef]bool{}
	for _, ref := range s.results.failed(s.current) {
		out[ref] = true
	}
	for _, ref := range s.results.records.Blocked() {
		if _, ok := s.results.block(s.current, s.intended, ref); ok {
			out[ref] = true
		}
	}
	return out
}

// newTrial checks a CmdTry request and returns the trial it asks for,
// with the documents to adopt; nil and the answer when it is refused
// (nothing changed then).
func (a *Agent) newTrial(req api.Request) (*pendingTrial, *docSet, resolution, api.Response) {
	s := a.st
	params, name, err := a.checkTrial(req)
	if err != nil {
		return nil, nil, resolution{}, errorResponse(err)
	}
	next, res, problems, err := a.withAPIDoc(req.Intent)
	switch {
	case err != nil:
		return nil, nil, resolution{}, api.Response{Error: err.Error()}
	case problems != nil:
		return nil, nil, resolution{}, api.Response{Error: "intent rejected", Problems: problems}
	}
	now := time.Now()
	s.trialSeq++
	t := &pendingTrial{id: s.trialSeq, raw: req.Intent, prevAPI: a.api.raw,
		keepPartial: req.KeepPartial, wait: params.Wait, probeTimeout: params.ProbeTimeout, before: a.problemsNow(),
		status: status.TrialStatus{ID: status.TrialID(now), Since: now, Deadline: now.Add(params.Timeout), Probes: req.Probes, FailingBefore: req.FailingBefore, Name: name, KeepPartial: req.KeepPartial}}
	if d := s.docs.docs[apiDocName]; d != nil && d.good != nil {
		prev := *d
		t.prevDoc = &prev
	}
	return t, next, res, api.Response{}
}

// checkTrial checks what a CmdTry request asks for: the trial's timings
// and the intent file that confirming it writes.
func (a *Agent) checkTrial(req api.Request) (trial.Params, string, error) {
	s := a.st
	if s.trial != nil {
		return trial.Params{}, "", fmt.Errorf("a trial is pending (since %s): confirm or roll it back first", s.trial.status.Since.Format(time.RFC3339))
	}
	if len(req.Intent) == 0 {
		return trial.Params{}, "", errNoIntent
	}
	if err := a.checkVersion(req.IfVersion); err != nil {
		return trial.Params{}, "", err
	}
	params, err := trial.ParseParams(req.Timeout, req.ProbeTimeout, req.Wait)
	if err != nil {
		return trial.Params{}, "", err
	}
	if len(req.Probes) > 0 {
		if a.cfg.Probe == nil {
			return trial.Params{}, "", errors.New("probes: the daemon cannot run probes")
		}
		if err := trial.CheckSpecs(req.Probes); err != nil {
			return trial.Params{}, "", err
		}
	}
	name, err := a.trialName(req.Name)
	return params, name, err
}

// trialName checks the intent file that confirming a trial writes ("":
// trial-<next version>.json).
func (a *Agent) trialName(name string) (string, error) {
	if name == "" {
		name = versions.NextTrialName(a.hist.current)
	}
	if !source.IsIntentFile(name) || filepath.Base(name) != name {
		return "", fmt.Errorf("name %q: want a file name ending in .json", name)
	}
	if a.cfg.TrialDir == "" {
		return "", errors.New("the daemon has no intent directory to write a confirmed trial to")
	}
	if a.source("dir:"+a.cfg.TrialDir) == nil {
		return "", fmt.Errorf("the intent directory %s is not among the daemon's sources", a.cfg.TrialDir)
	}
	if _, err := os.Stat(filepath.Join(a.cfg.TrialDir, name)); err == nil {
		return "", fmt.Errorf("name %q: the intent directory has a file of that name", name)
	}
	return name, nil
}

// base is docs without the trial: the API's document from before it, and
// every other document as it is.
func (t *pendingTrial) base(docs *docSet) *docSet {
	b := docs.clone()
	if t.prevDoc != nil {
		d := *t.prevDoc
		b.docs[apiDocName] = &d
	} else {
		delete(b.docs, apiDocName)
	}
	return b
}

// intents returns, for the target's trial record, the whole intent of the
// trial (the read-back hint of a revert: docs with api as the API's
// document) and the base (Previous: what a revert after a reboot
// converges to).
func (t *pendingTrial) intents(docs *docSet, api []byte) (files, prev map[string][]byte) {
	files, prev = map[string][]byte{}, map[string][]byte{}
	for n, d := range t.base(docs).docs {
		if d.goodRaw != nil && d.good != nil {
			prev[n] = d.goodRaw
			if n != apiDocName {
				files[n] = d.goodRaw
			}
		}
	}
	files[apiDocName] = api
	return files, prev
}

// verifyTrial reads the kernel back after the trial's apply and says why
// the trial must revert ("": it stands): the kernel differs from the
// intent in an item that was not failed or blocked before the trial.
func (a *Agent) verifyTrial(ctx context.Context, t *pendingTrial) string {
	s := a.st
	rb, err := a.cfg.Kernel.ReadCurrent(ctx, s.intended)
	if err != nil {
		return fmt.Sprintf("verification: reading the kernel back: %v", err)
	}
	var p trial.Problems
	for _, op := range a.cfg.Kernel.Plan(ctx, s.results.records, rb, s.intended).OperationLog {
		p.Unkept = append(p.Unkept, op.Ref)
	}
	if _, rev := trial.Judge(p.Since(t.before), t.keepPartial); rev != nil {
		return rev.Reason
	}
	return ""
}

// startProbes runs t's probe round in a goroutine of its own, for the
// probe timeout at most and never past the trial's deadline; its outcome
// comes back into the loop (probesDone). The loop goes on meanwhile:
// status, link events, file changes and other requests are answered.
func (a *Agent) startProbes(ctx context.Context, t *pendingTrial) {
	end := trial.Window(time.Now(), t.probeTimeout, t.status.Deadline)
	pctx, cancel := context.WithDeadline(ctx, end)
	t.stopProbes = cancel
	t.status.Probing = true
	id, specs, run := t.id, slices.Clone(t.status.Probes), a.cfg.Probe
	within := time.Until(end).Round(time.Millisecond)
	a.log.WithField("probes", strings.Join(specs, ",")).WithField("within", within).Info("trial: probing")
	go func() {
		err := run(pctx, specs)
		if err != nil && errors.Is(pctx.Err(), context.DeadlineExceeded) {
			err = fmt.Errorf("not passed within %v: %w", within, err)
		}
		select {
		case a.probed <- probeResult{trial: id, err: err}:
		case <-ctx.Done():
		}
	}()
}

// probesDone handles the outcome of a probe round: the trial reverts if a
// probe failed, else it stands; the waiting try call gets the answer. The
// outcome of a round whose trial has ended (confirmed, reverted, at its
// deadline) is ignored.
func (a *Agent) probesDone(ctx context.Context, p probeResult) {
	t := a.st.trial
	if t == nil || t.id != p.trial || t.status.Probing == p.watched {
		a.log.WithError(p.err).Debug("ignoring the probes' outcome: their trial has ended")
		return
	}
	t.stopProbes()
	t.status.Probing = false
	if p.err != nil {
		t.failure = trial.FailureOf(p.err)
		a.revertTrial(ctx, fmt.Sprintf("probe failed: %v", p.err))
		return
	}
	a.log.Info("trial: every probe passed")
	a.answerWaiting(t, nil)
	a.watchProbes(ctx, t)
}

// watchProbes runs the probes of the standing trial t again every probe
// interval while it waits for its confirmation (Config.Watch, outside
// the loop): a probe failing trial.FailuresToRevert times in a row
// reverts it then (probesDone), not at its deadline.
func (a *Agent) watchProbes(ctx context.Context, t *pendingTrial) {
	if a.cfg.Watch == nil || len(t.status.Probes) == 0 {
		return
	}
	every := a.cfg.ProbeInterval
	if every <= 0 {
		every = trial.ProbeInterval
	}
	wctx, cancel := context.WithDeadline(ctx, t.status.Deadline)
	t.stopProbes = cancel
	id, failed := t.id, a.cfg.Watch(wctx, slices.Clone(t.status.Probes), every)
	a.log.WithField("every", every).Info("trial: watching the probes until the trial is confirmed")
	go func() {
		err, ok := <-failed
		if !ok || err == nil || wctx.Err() != nil {
			return
		}
		select {
		case a.probed <- probeResult{trial: id, err: err, watched: true}:
		case <-ctx.Done():
		}
	}()
}

// answerWaiting answers the try call that waits for t's probes, if any,
// with err (the revert's) and the status now.
func (a *Agent) answerWaiting(t *pendingTrial, err error) {
	if t.waiting == nil {
		return
	}
	resp := t.resp
	if err != nil {
		resp.Error = err.Error()
	}
	st := a.status()
	resp.Status = &st
	a.publishMetrics() // as handle: a caller that scrapes after the answer sees it
	t.waiting <- resp  // buffered: Call's reply
	t.waiting = nil
}

// revertTrial reverts the pending trial for reason.
func (a *Agent) revertTrial(ctx context.Context, reason string) error {
	s := a.st
	t := s.trial
	s.trialAlarm.stop()
	s.trialWait.stop()
	if t.stopProbes != nil {
		t.stopProbes()
	}
	var errs []error
	if t.handle != nil {
		if err := t.handle.Revert(ctx, reason); err != nil {
			errs = append(errs, fmt.Errorf("reverting the kernel: %w", err))
		}
		if cur, err := a.cfg.Kernel.ReadCurrent(ctx, s.intended); err == nil {
			s.current = cur
		}
	}
	s.trial = nil
	next := a.withPrevAPI(t)
	a.adopt(next, reasonTry)
	s.want(reasonTry)
	a.reconcile(ctx)
	s.lastTrial = t.outcome("reverted", reason)
	a.log.WithField("reason", reason).Warn("trial reverted")
	err := errors.Join(errs...)
	a.answerWaiting(t, err)
	return err
}

// outcome is how t ended (result, reason), now, with its times, the
// probes that failed before it and the probe whose failure reverted it.
func (t *pendingTrial) outcome(result, reason string) *status.TrialOutcome {
	o := &status.TrialOutcome{ID: t.status.ID, Result: result, Reason: reason, At: time.Now(),
		Since: t.status.Since, Deadline: t.status.Deadline, FailingBefore: slices.Clone(t.status.FailingBefore)}
	if f := t.failure; f != nil {
		o.Probe, o.ProbeFailedAt = f.Probe, f.At
	}
	return o
}

// namedTrial is the pending trial that a confirm or rollback names (id
// "": whichever is pending), or the answer that refuses the request: no
// trial is pending, or the one named is not (ErrTrialEnded, with how it
// ended when it was the last).
func (a *Agent) namedTrial(id string) (*pendingTrial, *api.Response) {
	s := a.st
	t := s.trial
	switch {
	case id == "" && t == nil:
		return nil, &api.Response{Error: host.ErrNoTrial.Error()}
	case id == "" || (t != nil && t.status.ID == id):
		return t, nil
	}
	resp := &api.Response{}
	now := "no trial is pending"
	if t != nil {
		now = "the pending trial is " + t.status.ID
	}
	if o := s.lastTrial; o != nil && o.ID == id {
		oc := *o
		resp.TrialEnded = &oc
		how := fmt.Sprintf("it was %s at %s", o.Result, o.At.Format(time.RFC3339))
		switch {
		case o.Reason != "":
			how += " (" + o.Reason + ")"
		case o.File != "":
			how += " (" + o.File + " written)"
		}
		now = how + "; " + now
	}
	resp.Error = fmt.Sprintf("trial %s: %v: %s", id, api.ErrTrialEnded, now)
	return nil, resp
}

// confirmTrial answers CmdConfirm of the trial id ("": the pending one):
// the document goes into the intent directory and takes the API
// document's place.
func (a *Agent) confirmTrial(ctx context.Context, id string) api.Response {
	s := a.st
	t, refused := a.namedTrial(id)
	if refused != nil {
		return *refused
	}
	if t.status.Probing || t.status.Settling {
		return api.Response{Error: "the trial is still being checked (its probes run, or its blocked items are waited for): confirm once it stands, or roll it back (the trial stays pending)"}
	}
	src := a.source("dir:" + a.cfg.TrialDir)
	path, err := trial.WriteConfirmed(t.handle, a.cfg.TrialDir, t.status.Name, t.raw)
	if err != nil {
		return api.Response{Error: err.Error()}
	}
	s.trialAlarm.stop()
	if t.stopProbes != nil {
		t.stopProbes() // the watch
	}
	s.trial = nil
	var errs []error
	if t.handle != nil {
		if err := t.handle.Confirm(); err != nil {
			errs = append(errs, err)
		}
	}
	a.adoptConfirmed(t, src, path)
	a.log.WithField("file", path).Info("trial confirmed")
	if len(s.reasons) > 0 {
		a.reconcile(ctx)
	}
	st := a.status()
	resp := api.Response{Status: &st}
	if err := errors.Join(errs...); err != nil {
		resp.Error = err.Error()
	}
	return resp
}

// adoptConfirmed adopts the documents once trial t is confirmed: the
// intent directory's (src) with the file the confirm wrote (path) in
// place of the API document, recorded as the version and saved.
func (a *Agent) adoptConfirmed(t *pendingTrial, src source.IntentSource, path string) {
	s := a.st
	next := a.withPrevAPI(t)
	if src != nil {
		a.loadInto(next, src.Name())
	}
	a.adopt(next, reasonConfirm)
	// The same merged intent as the trial's: adopt saw no change. A
	// rollback in force was set aside by the trial, and the confirmed
	// document is a change of the documents: it ends.
	if a.hist.override != nil {
		a.endOverride()
	}
	if v, err := a.versionOf(s.docs, reasonConfirm); err == nil {
		a.recordVersion(v, versions.Any)
	}
	a.saveDocs()
	s.lastTrial = t.outcome("confirmed", "")
	s.lastTrial.File = path
}

// trialBaseChanged records a change of the documents other than the
// trial's while it is pending (an intent file edited): the documents
// without the trial are a new version, saved as the accepted ones, and
// the trial's record on the target says that a revert after a reboot
// returns to them. The trial stays applied on top.
func (a *Agent) trialBaseChanged(t *pendingTrial, next *docSet, reason string) {
	base := t.base(next)
	v, err := a.versionOf(base, reason)
	if err != nil {
		a.log.WithError(err).Warn("recording the version of the intent")
		return
	}
	if o := a.hist.override; o != nil && v.Digest != o.SetAside {
		a.log.WithField("version", o.Version).Info("the intent documents changed: the rollback ends; they apply again")
		a.endOverride()
	}
	if err := a.recordVersion(v, versions.Any); err != nil {
		a.log.WithError(err).Warn("recording the version of the intent")
	}
	if t.handle != nil {
		files, prev := t.intents(next, t.raw)
		if err := t.handle.Update(files, prev); err != nil {
			a.log.WithError(err).Warn("recording the documents before the trial in its record")
		}
	}
	a.log.Info("the intent documents changed while a trial is pending: a new version; the trial stays applied on top")
}

// rollbackTrial answers CmdRollback of the trial id: it reverts now, if
// that trial is still pending.
func (a *Agent) rollbackTrial(ctx context.Context, id string) api.Response {
	if _, refused := a.namedTrial(id); refused != nil {
		return *refused
	}
	resp := api.Response{}
	if err := a.revertTrial(ctx, "rolled back on request"); err != nil {
		resp.Error = err.Error()
	}
	st := a.status()
	resp.Status = &st
	return resp
}

// withPrevAPI gives the API its document from before trial t back: the
// document set to adopt once the trial has ended.
func (a *Agent) withPrevAPI(t *pendingTrial) *docSet {
	next := a.st.docs.clone()
	contents := map[string][]byte{}
	if t.prevAPI != nil {
		contents[apiDocName] = t.prevAPI
	}
	next.update(a.api.Name(), contents)
	a.api.set(t.prevAPI)
	return next
}
