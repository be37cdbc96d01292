package agent

// Trials through the daemon (`netagent try --via-daemon`, CmdTry): a
// document applied as the socket API's document that reverts unless it is
// confirmed (CmdConfirm) before its deadline.
//
//   - While a trial is pending, nothing the daemon keeps on disk changes:
//     no version is recorded, the accepted documents are not saved (a
//     daemon killed during the trial starts again from the pre-trial
//     documents), and the intent directory is untouched.
//   - The trial reverts by itself when an item fails, when a read-back
//     right after the apply differs from the intent, when a probe fails,
//     or at the deadline (an alarm of the loop); CmdRollback with a trial
//     pending reverts it now. Reverting puts back the API document that
//     ran before and, with Config.Trials (the daemon's target.Runtime),
//     returns the kernel to its before-images (the journal of agent/target,
//     the same code as the one-shot `netagent try`), then reconciles.
//   - Confirming writes the document atomically into the intent directory
//     (Config.TrialDir) as Request.Name (default trial-<version>.json), so
//     that it takes the API document's place, and records the version.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/netagent/netagent/agent/target"
	"github.com/netagent/netagent/agent/versions"
	"github.com/netagent/netagent/configurators/statefile"
)

// The trial commands of the socket API.
const (
	CmdTry     = "try"     // apply Intent as a trial that reverts after Timeout unless confirmed
	CmdConfirm = "confirm" // make the pending trial permanent
)

// DefaultTrialTimeout is a trial's timeout when the request names none.
const DefaultTrialTimeout = 60 * time.Second

// Trials begins trials on the target (the daemon: target.Runtime): from
// Begin until the handle's Confirm or Revert, the target journals the
// before-image of everything it changes.
type Trials interface {
	Begin(t target.Trial) (TrialHandle, error)
}

// TrialHandle is a trial begun by Trials.
type TrialHandle interface {
	Confirm() error
	// Revert returns the kernel to what it was before the trial.
	Revert(ctx context.Context, reason string) error
}

// Prober runs a trial's probes (specs as `--probe` takes them) inside the
// target; nil error: all passed.
type Prober func(ctx context.Context, specs []string) error

// TrialStatus is the pending trial, in Status.
type TrialStatus struct {
	Since    time.Time `json:"since"`
	Deadline time.Time `json:"deadline"`
	Probes   []string  `json:"probes,omitempty"`
	// Name is the intent file that confirming writes (the daemon's).
	Name string `json:"name,omitempty"`
	// PID runs the trial: a one-shot `netagent try` (status reads it from
	// the state directory, target.PendingTrial).
	PID int `json:"pid,omitempty"`
}

// TrialOutcome is how the last trial ended, in Status.
type TrialOutcome struct {
	Result string    `json:"result"` // "confirmed" or "reverted"
	Reason string    `json:"reason,omitempty"`
	At     time.Time `json:"at"`
	File   string    `json:"file,omitempty"` // confirmed: the intent file written
}

// pendingTrial is the trial in progress; the loop owns it.
type pendingTrial struct {
	raw     []byte
	prevAPI []byte
	status  TrialStatus
	handle  TrialHandle
}

// try answers CmdTry.
func (a *Agent) try(ctx context.Context, req Request) Response {
	s := a.st
	if s.trial != nil {
		return Response{Error: fmt.Sprintf("a trial is pending (since %s): confirm or roll it back first", s.trial.status.Since.Format(time.RFC3339))}
	}
	if len(req.Intent) == 0 {
		return Response{Error: errNoIntent.Error()}
	}
	if err := a.checkVersion(req.IfVersion); err != nil {
		return errorResponse(err)
	}
	timeout, err := parseTimeout(req.Timeout)
	if err != nil {
		return Response{Error: err.Error()}
	}
	if timeout == 0 {
		timeout = DefaultTrialTimeout
	}
	name := req.Name
	if name == "" {
		next := 1
		if a.hist.current != nil {
			next = a.hist.current.Number + 1
		}
		name = fmt.Sprintf("trial-%d.json", next)
	}
	if !IsIntentFile(name) || filepath.Base(name) != name {
		return Response{Error: fmt.Sprintf("name %q: want a file name ending in .json", name)}
	}
	if a.cfg.TrialDir == "" {
		return Response{Error: "the daemon has no intent directory to write a confirmed trial to"}
	}
	if a.source("dir:"+a.cfg.TrialDir) == nil {
		return Response{Error: fmt.Sprintf("the intent directory %s is not among the daemon's sources", a.cfg.TrialDir)}
	}
	if _, err := os.Stat(filepath.Join(a.cfg.TrialDir, name)); err == nil {
		return Response{Error: fmt.Sprintf("name %q: the intent directory has a file of that name", name)}
	}
	next, res, problems, err := a.withAPIDoc(req.Intent)
	switch {
	case err != nil:
		return Response{Error: err.Error()}
	case problems != nil:
		return Response{Error: "intent rejected", Problems: problems}
	}
	now := time.Now()
	t := &pendingTrial{raw: req.Intent, prevAPI: a.api.raw,
		status: TrialStatus{Since: now, Deadline: now.Add(timeout), Probes: req.Probes, Name: name}}
	if a.cfg.Trials != nil {
		// Files: the whole intent of the trial (the read-back hint of
		// a revert); Previous: the intent before it.
		prev, files := map[string][]byte{}, map[string][]byte{apiDocName: req.Intent}
		for n, d := range s.docs.docs {
			if d.goodRaw != nil {
				prev[n] = d.goodRaw
				if n != apiDocName {
					files[n] = d.goodRaw
				}
			}
		}
		h, err := a.cfg.Trials.Begin(target.Trial{Started: now, Deadline: t.status.Deadline,
			Files: files, Previous: prev, Probes: req.Probes})
		if err != nil {
			return Response{Error: fmt.Sprintf("beginning the trial: %v", err)}
		}
		t.handle = h
	}
	s.trial = t // before adopting: no version, no saved documents
	a.adoptResolved(next, res, reasonTry)
	a.api.set(req.Intent)
	s.want(reasonTry)
	rs := a.reconcile(ctx)
	resp := Response{Operations: opResults(rs.OperationLog), Blocked: blockedItems(rs.Blocked)}
	if reason := a.trialFault(ctx); reason != "" {
		if err := a.revertTrial(ctx, reason); err != nil {
			resp.Error = err.Error()
		}
		st := a.status()
		resp.Status = &st
		return resp
	}
	s.trialAlarm.set(time.Until(t.status.Deadline))
	a.log.WithField("deadline", t.status.Deadline.Format(time.RFC3339)).WithField("name", name).Info("trial applied: reverts at the deadline unless confirmed")
	st := a.status()
	resp.Status = &st
	return resp
}

// trialFault says why the trial just applied must revert ("": it stands).
func (a *Agent) trialFault(ctx context.Context) string {
	s := a.st
	if failed := s.results.failed(s.current); len(failed) > 0 {
		return fmt.Sprintf("%d items failed (%s first)", len(failed), failed[0])
	}
	if rb, err := a.cfg.Kernel.ReadCurrent(ctx, s.intended); err != nil {
		return fmt.Sprintf("verification: reading the kernel back: %v", err)
	} else if ops := a.cfg.Kernel.Plan(ctx, s.results.records, rb, s.intended).OperationLog; len(ops) > 0 {
		return fmt.Sprintf("verification: the kernel differs from the intent (%d operations, %s first)", len(ops), ops[0].Ref)
	}
	if len(s.trial.status.Probes) > 0 {
		if a.cfg.Probe == nil {
			return "probes: the daemon cannot run probes"
		}
		if err := a.cfg.Probe(ctx, s.trial.status.Probes); err != nil {
			return fmt.Sprintf("probe failed: %v", err)
		}
	}
	return ""
}

// revertTrial reverts the pending trial for reason.
func (a *Agent) revertTrial(ctx context.Context, reason string) error {
	s := a.st
	t := s.trial
	s.trialAlarm.stop()
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
	s.lastTrial = &TrialOutcome{Result: "reverted", Reason: reason, At: time.Now()}
	a.log.WithField("reason", reason).Warn("trial reverted")
	return errors.Join(errs...)
}

// confirmTrial answers CmdConfirm: the document goes into the intent
// directory and takes the API document's place.
func (a *Agent) confirmTrial(ctx context.Context) Response {
	s := a.st
	t := s.trial
	if t == nil {
		return Response{Error: target.ErrNoTrial.Error()}
	}
	src := a.source("dir:" + a.cfg.TrialDir)
	path := filepath.Join(a.cfg.TrialDir, t.status.Name)
	var doc bytes.Buffer
	if json.Indent(&doc, t.raw, "", "  ") != nil { // the socket's encoding compacts it
		doc.Reset()
		doc.Write(t.raw)
	}
	doc.WriteByte('\n')
	if err := statefile.WriteAtomic(path, doc.Bytes()); err != nil {
		return Response{Error: fmt.Sprintf("writing %s: %v (the trial stays pending)", path, err)}
	}
	s.trialAlarm.stop()
	s.trial = nil
	var errs []error
	if t.handle != nil {
		if err := t.handle.Confirm(); err != nil {
			errs = append(errs, err)
		}
	}
	next := a.withPrevAPI(t)
	if src != nil {
		a.loadInto(next, src.Name())
	}
	a.adopt(next, reasonConfirm)
	// The same merged intent as the trial's: adopt saw no change.
	if v, err := a.versionOf(s.docs, reasonConfirm); err == nil {
		a.recordVersion(v, versions.Any)
	}
	a.saveDocs()
	s.lastTrial = &TrialOutcome{Result: "confirmed", At: time.Now(), File: path}
	a.log.WithField("file", path).Info("trial confirmed")
	if len(s.reasons) > 0 {
		a.reconcile(ctx)
	}
	st := a.status()
	resp := Response{Status: &st}
	if err := errors.Join(errs...); err != nil {
		resp.Error = err.Error()
	}
	return resp
}

// trialStatus puts the pending trial and the last outcome into st.
func (a *Agent) trialStatus(st *Status) {
	if t := a.st.trial; t != nil {
		ts := t.status
		ts.Probes = append([]string(nil), ts.Probes...)
		st.Trial = &ts
	}
	if o := a.st.lastTrial; o != nil {
		oc := *o
		st.LastTrial = &oc
	}
}

// parseTimeout parses Request.Timeout ("": the default).
func parseTimeout(s string) (time.Duration, error) {
	if s == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("timeout %q: want a positive duration (60s)", s)
	}
	return d, nil
}

// rollbackTrial answers CmdRollback while a trial is pending: it reverts
// now.
func (a *Agent) rollbackTrial(ctx context.Context) Response {
	resp := Response{}
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
