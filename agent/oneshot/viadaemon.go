package oneshot

// With --via-daemon, apply, plan, check and try go through the socket API
// of the daemon that serves the namespace: the intent files become the
// API's document, beside the daemon's intent directory. These calls talk
// to that daemon (agent/api's Call and Watch) and return its answers;
// cmd prints them.

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/netagent/netagent/agent/api"
	"github.com/netagent/netagent/agent/host"
	"github.com/netagent/netagent/agent/status"
	"github.com/netagent/netagent/agent/trial"
)

// DaemonTimeout bounds one exchange with the daemon.
const DaemonTimeout = time.Minute

// DaemonCallError is a daemon that could not be asked (no answer, a
// broken exchange).
type DaemonCallError struct {
	Holder host.Holder
	Err    error
}

func (e *DaemonCallError) Error() string { return fmt.Sprintf("the daemon %s: %v", e.Holder, e.Err) }
func (e *DaemonCallError) Unwrap() error { return e.Err }

// DaemonRefusedError is a daemon that answered with an error: it changed
// nothing. Resp is its answer (Problems, Conflict).
type DaemonRefusedError struct {
	Holder host.Holder
	Resp   *api.Response
}

func (e *DaemonRefusedError) Error() string {
	return fmt.Sprintf("the daemon %s answered: %s", e.Holder, e.Resp.Error)
}

// CallDaemon sends command with the intent files as the API document to
// the daemon h and returns its answer. with, if given, completes the
// request. A file that cannot be read is its *fs.PathError; an invalid
// document its error; otherwise a *DaemonCallError or a
// *DaemonRefusedError.
func CallDaemon(ctx context.Context, h host.Holder, command string, files []string, with ...func(*api.Request)) (*api.Response, error) {
	doc, err := DaemonDocument(files)
	if err != nil {
		return nil, err
	}
	req := api.Request{Command: command, Intent: doc}
	for _, f := range with {
		f(&req)
	}
	return askDaemon(ctx, h, req)
}

// askDaemon sends req to the daemon h: its answer, or why there is none.
func askDaemon(ctx context.Context, h host.Holder, req api.Request) (*api.Response, error) {
	resp, err := api.Call(ctx, h.Socket, req)
	if err != nil {
		return nil, &DaemonCallError{Holder: h, Err: err}
	}
	if resp.Error != "" {
		return nil, &DaemonRefusedError{Holder: h, Resp: resp}
	}
	return resp, nil
}

// DaemonApplied is an apply through the daemon: its answer, and apply's
// document of it (the items still pending after the wait).
type DaemonApplied struct {
	Resp    *api.Response
	Doc     ApplyDoc
	Outcome Outcome
}

// ApplyViaDaemon makes the files the daemon's API document, then waits up
// to wait for the daemon to report every item of that document created.
func ApplyViaDaemon(h host.Holder, files []string, wait time.Duration, with ...func(*api.Request)) (*DaemonApplied, error) {
	ctx, cancel := context.WithTimeout(context.Background(), DaemonTimeout+wait)
	defer cancel()
	start := time.Now()
	resp, err := CallDaemon(ctx, h, api.CmdApply, files, with...)
	if err != nil {
		return nil, err
	}
	pending := WaitAPIItems(ctx, h.Socket, wait, APIPending(resp.Status))
	doc := DaemonApplyDoc(resp.Operations, pending, time.Since(start))
	if resp.Disruption != nil { // as a one-shot apply's
		doc.Disruption = &DisruptionDoc{DisruptionSummary: *resp.Disruption, ProtectedTouched: []string{}}
	}
	res := &DaemonApplied{Resp: resp, Doc: doc}
	if !doc.Converged {
		res.Outcome = NotConverged
	}
	return res, nil
}

// WaitAPIItems waits up to wait for the daemon to create the items of the
// API's document that are pending, following its event stream (status
// --watch's): at each change of an item it asks the status again. It
// returns those still pending at the end.
func WaitAPIItems(ctx context.Context, socket string, wait time.Duration, pending []ProblemDoc) []ProblemDoc {
	if len(pending) == 0 || wait <= 0 {
		return pending
	}
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	w, err := api.Watch(ctx, socket)
	if err != nil {
		return pending
	}
	defer w.Close()
	for len(pending) > 0 {
		e, err := w.Next()
		if err != nil {
			return pending // the wait is over, or the daemon went
		}
		switch {
		case e.Kind == api.EventStatus && e.Status != nil: // the stream's first: the whole status
			pending = APIPending(e.Status)
		case e.Kind == api.EventItem || e.Kind == api.EventMissed:
			st, err := api.Call(ctx, socket, api.Request{Command: api.CmdStatus})
			if err != nil || st.Status == nil {
				return pending
			}
			pending = APIPending(st.Status)
		}
	}
	return nil
}

// PlanViaDaemon asks the daemon h what it would do with the files as its
// API document: NotConverged if an item is blocked or an operation is
// predicted to fail.
func PlanViaDaemon(h host.Holder, files []string) (*api.Response, Outcome, error) {
	ctx, cancel := context.WithTimeout(context.Background(), DaemonTimeout)
	defer cancel()
	resp, err := CallDaemon(ctx, h, api.CmdPlan, files)
	if err != nil {
		return nil, 0, err
	}
	if len(resp.Blocked) > 0 || slices.ContainsFunc(resp.Operations, func(op api.OpResult) bool { return op.Error != "" }) {
		return resp, NotConverged, nil
	}
	return resp, Converged, nil
}

// CheckViaDaemon asks the daemon h to compare the kernel with the intent
// files (the whole intent, as a one-shot check takes them; without files,
// with the daemon's own intent). It changes nothing: the files do not
// become the API's document. NotConverged if an item differs, is missing
// or extra, or a lease was refused (CheckCounts of its answer).
func CheckViaDaemon(h host.Holder, files []string) (*api.Response, Outcome, error) {
	ctx, cancel := context.WithTimeout(context.Background(), DaemonTimeout)
	defer cancel()
	resp, err := CallDaemon(ctx, h, api.CmdCheck, files)
	if err != nil {
		return nil, 0, err
	}
	if _, converged := CheckCounts(resp.Check, resp.LeasesRefused); converged {
		return resp, Converged, nil
	}
	return resp, NotConverged, nil
}

// TryViaDaemon starts the trial of files in the daemon h (named name; ""
// the daemon's default): the daemon answers once it applied the trial (o
// AutoConfirm: once its probes passed too).
func TryViaDaemon(h host.Holder, files []string, o *TryOptions, name string, with ...func(*api.Request)) (*api.Response, error) {
	ctx, cancel := context.WithTimeout(context.Background(), DaemonTimeout+o.Timeout)
	defer cancel()
	return CallDaemon(ctx, h, api.CmdTry, files, append(slices.Clone(with), func(r *api.Request) {
		r.Timeout, r.Probes, r.Name = o.Timeout.String(), o.Probes, name
		r.ProbeTimeout, r.KeepPartial, r.Wait = o.ProbeTimeout.String(), o.KeepPartial, o.Apply.Wait.String()
		r.ProbesMustPassBefore = o.ProbesMustPassBefore
	})...)
}

// PollDaemonTrial asks the daemon h whether its trial tr has ended: the
// daemon's status if so (its LastTrial says how), nil while it runs.
func PollDaemonTrial(h host.Holder, tr *status.TrialStatus) (*status.Status, error) {
	ctx, cancel := context.WithTimeout(context.Background(), DaemonTimeout)
	defer cancel()
	resp, err := api.Call(ctx, h.Socket, api.Request{Command: api.CmdStatus})
	if err != nil {
		return nil, &DaemonCallError{Holder: h, Err: err}
	}
	if resp.Status == nil {
		return nil, &DaemonCallError{Holder: h, Err: fmt.Errorf("no status in its answer")}
	}
	if t := resp.Status.Trial; t == nil || !t.Since.Equal(tr.Since) {
		return resp.Status, nil
	}
	return nil, nil
}

// DaemonTrialRequest sends confirm or rollback (command) of the pending
// trial id to the daemon h, and returns the outcome it reports (nil: none).
func DaemonTrialRequest(h host.Holder, command, id string) (*status.TrialOutcome, error) {
	ctx, cancel := context.WithTimeout(context.Background(), DaemonTimeout)
	defer cancel()
	resp, err := askDaemon(ctx, h, api.Request{Command: command, Trial: id})
	if err != nil {
		return nil, err
	}
	if resp.Status == nil {
		return nil, nil
	}
	return resp.Status.LastTrial, nil
}

// RollbackViaDaemon asks the daemon h to roll back to version n:
// NotConverged if an item is blocked, an operation failed or the daemon
// reports errors.
func RollbackViaDaemon(h host.Holder, n int, with ...func(*api.Request)) (*api.Response, Outcome, error) {
	ctx, cancel := context.WithTimeout(context.Background(), DaemonTimeout)
	defer cancel()
	req := api.Request{Command: api.CmdRollback, Version: n}
	for _, f := range with {
		f(&req)
	}
	resp, err := askDaemon(ctx, h, req)
	if err != nil {
		return nil, 0, err
	}
	failed := slices.ContainsFunc(resp.Operations, func(op api.OpResult) bool { return op.Error != "" })
	if len(resp.Blocked) > 0 || (resp.Status != nil && len(resp.Status.Errors) > 0) || failed {
		return resp, NotConverged, nil
	}
	return resp, Converged, nil
}

// DaemonStatus asks the daemon listening on socket for its status (an
// error from api.Call: no daemon answers; a *DaemonRefusedError: it
// answered no status). A status without the last trial gets the one
// stateDir records: the daemon's trials before its start, or a
// one-shot's.
func DaemonStatus(ctx context.Context, socket, stateDir string) (*status.Status, error) {
	resp, err := api.Call(ctx, socket, api.Request{Command: api.CmdStatus})
	if err != nil {
		return nil, err
	}
	if resp.Error != "" || resp.Status == nil {
		return nil, &DaemonRefusedError{Holder: host.Holder{Socket: socket}, Resp: resp}
	}
	if resp.Status.LastTrial == nil {
		resp.Status.LastTrial = trial.LastOutcome(stateDir)
	}
	return resp.Status, nil
}
