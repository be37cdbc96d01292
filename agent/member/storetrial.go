package member

// Fleet trials: a document key of the store may hold a trial envelope
// (`netagent fleet push --try`):
//
//	{"trial": {"timeout": "60s", "probes": ["ping:192.0.2.1"]}, "intent": {...}}
//
// A host that receives one applies its intent on trial, the document's
// version it applied before (its last good one) being the revert target:
//
//   - Before its intent is delivered, its probes run once
//     (StoreSourceConfig.PreCheck, trial.PreCheck, outside the loop; the
//     source delivers what it did before meanwhile): one failing already
//     is reported (fleet.Trial.FailingBefore) and does not judge the
//     trial, unless probesMustPassBefore: then the trial reverts without
//     being applied. The timeout runs from the delivery on.
//   - The trial is confirmed when the agent converged to it (Ready, with
//     the trial's store revision among its Revisions) and its probes then
//     passed (StoreSourceConfig.Prober, inside the host's namespace,
//     within the probe round's window: probeTimeout, never past the
//     deadline): the intent becomes the host's version of that document.
//   - It reverts when a counted probe did not pass in that window (at
//     once: fleet.Trial.Probe and ProbeFailedAt say which and when), or
//     when it has not been confirmed by its timeout (items failed or
//     blocked): the source delivers the document's previous version again
//     (none: the document is withdrawn, as before the trial) and the loop
//     reconciles back to it.
//   - An envelope is untrusted input: at most trial.MaxProbes probes, each
//     valid (trial.CheckSpecs), a timeout of at most MaxTrialTimeout and a
//     probe timeout of at most the timeout; an invalid one is refused as
//     an invalid document.
//   - A reverted revision is not tried again until the key's revision
//     changes, and that is remembered in the state directory
//     (StoreSourceConfig.StateDir): a restart does not retry it, and a
//     trial that was pending when the agent stopped counts as reverted
//     ("the agent restarted during the trial").
//   - The host's fleet status carries the trial (fleet.Trial: source,
//     revision, pending|confirmed|reverted, reason). Hosts write nothing
//     else back: the operator promotes the trial by pushing the plain
//     document once enough hosts confirmed.
//
// The revert goes the way a trial through the socket API's does (the
// agent's trial.go): with the agent's Config.Trials (the daemon's
// host.Runtime), the loop begins a target trial (BeginJournal, journal.go)
// before it applies the trial's intent, so that the
// before-image of everything the trial changes is journaled; a revert
// returns the kernel to them (the journal's revert), then reconciles to
// the document's previous version; a confirmed trial, or one the operator
// replaced or deleted, drops the journal. A daemon killed during the
// trial finds the target's trial pending at its next start and reverts
// the kernel from the journal before anything else (host's Recover), and the
// source counts the trial as reverted: the trials and their revert
// targets (the previous version of each document) live in the state
// directory's store (fleetTrialsKey), written before the trial's intent
// is delivered to the loop.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/netagent/netagent/agent/host"
	"github.com/netagent/netagent/agent/trial"
	"github.com/netagent/netagent/agent/versions"
	"github.com/netagent/netagent/fleet"
	"github.com/netagent/netagent/internal/statefile"
	"github.com/netagent/netagent/store"
	"github.com/netagent/netagent/store/local"
)

// Trial states of fleet.Trial.
const (
	FleetTrialPending   = "pending"
	FleetTrialConfirmed = "confirmed"
	FleetTrialReverted  = "reverted"
)

// DefaultTrialTimeout is a fleet trial's timeout when its envelope names
// none: every trial's (trial.DefaultTimeout).
const DefaultTrialTimeout = trial.DefaultTimeout

// fleetTrialsFile, in the state directory, is where releases before the
// state directory's store remembered the fleet trials (fleetTrialsKey).
const fleetTrialsFile = "fleet-trials.json"

// TrialEnvelope is the value of a document key that holds a trial.
type TrialEnvelope struct {
	Trial  TrialSpec       `json:"trial"`
	Intent json.RawMessage `json:"intent"`
}

// TrialSpec is how a fleet trial is confirmed.
type TrialSpec struct {
	Timeout string   `json:"timeout,omitempty"` // DefaultTrialTimeout when empty
	Probes  []string `json:"probes,omitempty"`
	// ProbeTimeout bounds the probe round once the host converged to the
	// trial (trial.DefaultProbeTimeout when empty; at most Timeout).
	ProbeTimeout string `json:"probeTimeout,omitempty"`
	// ProbesMustPassBefore: a probe failing before the change reverts the
	// trial before its intent is applied, instead of being left out.
	ProbesMustPassBefore bool `json:"probesMustPassBefore,omitempty"`
	// Bake is how long a confirmed trial's probes keep running (a
	// rollout's wave's bake): a probe that fails trial.FailuresToRevert
	// times in a row then makes the host Degraded (fleet.Trial.BakeProbe),
	// which the rollout counts against the wave's tolerance. "": none.
	Bake string `json:"bake,omitempty"`
}

// bake is the spec's bake (0: none).
func (spec TrialSpec) bake() (time.Duration, error) {
	if spec.Bake == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(spec.Bake)
	if err != nil || d < 0 || d > MaxTrialTimeout {
		return 0, fmt.Errorf("trial.bake: %q is no duration of at most %v", spec.Bake, MaxTrialTimeout)
	}
	return d, nil
}

// MaxTrialTimeout bounds a fleet trial's timeout: an envelope comes from
// the store, as untrusted as the intent.
const MaxTrialTimeout = 24 * time.Hour

// check checks the spec (probes by trial.CheckSpecs; the timeouts
// positive, at most MaxTrialTimeout, the probe timeout at most the
// timeout) and returns its timeout and probe timeout.
func (spec TrialSpec) check() (timeout, probeTimeout time.Duration, err error) {
	timeout, probeTimeout = DefaultTrialTimeout, trial.DefaultProbeTimeout
	if spec.Timeout != "" {
		d, err := time.ParseDuration(spec.Timeout)
		if err != nil || d <= 0 || d > MaxTrialTimeout {
			return 0, 0, fmt.Errorf("trial.timeout: %q is no positive duration of at most %v", spec.Timeout, MaxTrialTimeout)
		}
		timeout = d
	}
	if spec.ProbeTimeout != "" {
		d, err := time.ParseDuration(spec.ProbeTimeout)
		if err != nil || d <= 0 || d > timeout {
			return 0, 0, fmt.Errorf("trial.probeTimeout: %q is no positive duration of at most the timeout (%v)", spec.ProbeTimeout, timeout)
		}
		probeTimeout = d
	}
	if err := trial.CheckSpecs(spec.Probes); err != nil {
		return 0, 0, fmt.Errorf("trial.%w", err)
	}
	if _, err := spec.bake(); err != nil {
		return 0, 0, err
	}
	return timeout, probeTimeout, nil
}

// ErrNotEnvelope: a document is no trial envelope.
var ErrNotEnvelope = errors.New("not a trial envelope")

// ParseTrialEnvelope parses raw as a trial envelope: ErrNotEnvelope when
// it has no top-level "trial" key, another error when it has one but is
// not a valid envelope.
func ParseTrialEnvelope(raw []byte) (TrialEnvelope, time.Duration, error) {
	var env TrialEnvelope
	if !bytes.Contains(raw, []byte(`"trial"`)) {
		return env, 0, ErrNotEnvelope
	}
	var top map[string]json.RawMessage
	if json.Unmarshal(raw, &top) != nil {
		return env, 0, ErrNotEnvelope
	}
	if _, ok := top["trial"]; !ok {
		return env, 0, ErrNotEnvelope
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&env); err != nil {
		return env, 0, fmt.Errorf("trial envelope: %w", err)
	}
	if len(env.Intent) == 0 || bytes.Equal(env.Intent, []byte("null")) {
		return env, 0, errors.New("trial envelope: intent: missing")
	}
	timeout, _, err := env.Trial.check()
	if err != nil {
		return env, 0, fmt.Errorf("trial envelope: %w", err)
	}
	return env, timeout, nil
}

// storeTrial is one document's latest trial: what the fleet status
// shows of it (fleet.Trial: revision, state, reason, the probes failing
// before it, the probe that reverted it, its times; Source is the
// document's name, set when shown), and what the source needs.
type storeTrial struct {
	fleet.Trial
	// Previous is the version of the document before the trial (nil with
	// HasPrevious false: none), delivered again once it reverted.
	Previous    []byte `json:"previous,omitempty"`
	HasPrevious bool   `json:"hasPrevious,omitempty"`
	Intent      []byte `json:"intent,omitempty"`

	probes         []string
	timeout        time.Duration
	probeTimeout   time.Duration
	mustPassBefore bool
	// prechecking: its probes run once before its intent is delivered
	// (preCheck); meanwhile the source delivers what it did before.
	prechecking bool
	probing     bool
	// standing: its first probe round passed; its probes are watched
	// until its deadline (watchTrial), when it is confirmed.
	standing bool
	bake     time.Duration
	timer    *time.Timer
	// stopWatch ends the watch of its probes (standing, or baking).
	stopWatch context.CancelFunc
}

// fleetTrialsState is fleetTrialsFile's content.
type fleetTrialsState struct {
	Trials    map[string]*storeTrial `json:"trials,omitempty"`
	Delivered map[string][]byte      `json:"delivered,omitempty"`
}

// fleetTrialsKey is the key of the fleet trials (fleetTrialsState) in the
// state directory's store (versions.StoreDir, package store/local: where
// the versions live, written atomically and fsynced). fleetTrialsFile is
// where releases before kept them: read once, moved into the store.
const fleetTrialsKey = "fleet/trials"

// trialsStore runs fn on the state directory's store, opened for it.
func (s *StoreSource) trialsStore(fn func(ctx context.Context, st store.Store) error) error {
	st, err := local.Open(filepath.Join(s.cfg.StateDir, versions.StoreDir), local.Options{NoFSNotify: true, DropReplaced: true})
	if err != nil {
		return err
	}
	defer st.Close()
	return fn(context.Background(), st)
}

// loadTrials reads what the state directory remembers (s.mu held or not
// yet shared).
func (s *StoreSource) loadTrials() error {
	s.trials, s.delivered = map[string]*storeTrial{}, map[string][]byte{}
	if s.cfg.StateDir == "" {
		return nil
	}
	raw, err := s.readTrials()
	if raw == nil || err != nil {
		return err
	}
	var st fleetTrialsState
	if err := json.Unmarshal(raw, &st); err != nil {
		return fmt.Errorf("reading the fleet trials: %w", err)
	}
	for name, t := range st.Trials {
		if t.State == FleetTrialPending {
			t.State, t.Reason, t.Ended = FleetTrialReverted, "the agent restarted during the trial", time.Now()
			s.trialsDirty = true
		}
		s.trials[name] = t
	}
	if st.Delivered != nil {
		s.delivered = st.Delivered
	}
	return nil
}

// readTrials reads the fleet trials from the state directory's store, or
// else from the fleetTrialsFile of a release before (moved into the store
// by the next save); nil: none.
func (s *StoreSource) readTrials() ([]byte, error) {
	var raw []byte
	err := s.trialsStore(func(ctx context.Context, st store.Store) error {
		e, err := st.Read(ctx, fleetTrialsKey)
		if errors.Is(err, store.ErrNotFound) {
			return nil
		}
		raw = e.Value
		return err
	})
	if err != nil || raw != nil {
		return raw, wrapTrialsErr(err)
	}
	raw, err = statefile.LoadRecord(filepath.Join(s.cfg.StateDir, fleetTrialsFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, wrapTrialsErr(err)
	}
	s.trialsDirty = true // moved into the store by the next save
	return raw, nil
}

// wrapTrialsErr names the fleet trials in a failure to read them.
func wrapTrialsErr(err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("reading the fleet trials: %w", err)
}

// saveTrials writes what must survive a restart into the state
// directory's store (s.mu held): before Load returns a trial's intent,
// the trial and its revert target are there.
func (s *StoreSource) saveTrials() {
	if s.cfg.StateDir == "" || !s.trialsDirty {
		return
	}
	raw, err := json.Marshal(fleetTrialsState{Trials: s.trials, Delivered: s.delivered})
	if err == nil {
		err = s.trialsStore(func(ctx context.Context, st store.Store) error {
			for {
				var cur store.Version
				if e, err := st.Read(ctx, fleetTrialsKey); err == nil {
					cur = e.Version
				} else if !errors.Is(err, store.ErrNotFound) {
					return err
				}
				_, err := st.WriteCAS(ctx, fleetTrialsKey, raw, cur)
				if !errors.Is(err, store.ErrCASFailed) {
					return err
				}
			}
		})
	}
	if err != nil {
		s.cfg.Log.WithError(err).Warn("remembering the fleet trials")
		return
	}
	os.Remove(filepath.Join(s.cfg.StateDir, fleetTrialsFile)) // moved into the store
	s.trialsDirty = false
}

// noteTrial sees version e of the document name arrive; old is the version
// the source held before (nil: none) (s.mu held).
func (s *StoreSource) noteTrial(name string, e store.Entry, old *store.Entry) {
	env, timeout, err := ParseTrialEnvelope(e.Value)
	t := s.trials[name]
	if err != nil {
		if errors.Is(err, ErrNotEnvelope) && t != nil && t.Revision != int64(e.Version) {
			// A plain document replaces the trial (the operator promoted
			// or abandoned it).
			s.stopTrial(t)
			delete(s.trials, name)
			s.trialsDirty = true
		}
		return
	}
	if t != nil && t.Revision == int64(e.Version) {
		return // known: pending, confirmed or reverted
	}
	if t != nil {
		s.stopTrial(t)
	}
	_, probeTimeout, _ := env.Trial.check() // checked by ParseTrialEnvelope
	bake, _ := env.Trial.bake()
	nt := &storeTrial{Trial: fleet.Trial{Revision: int64(e.Version), State: FleetTrialPending}, Intent: env.Intent,
		probes: env.Trial.Probes, timeout: timeout, probeTimeout: probeTimeout, mustPassBefore: env.Trial.ProbesMustPassBefore, bake: bake}
	if old != nil {
		nt.Previous, nt.HasPrevious = s.deliverable(name, old.Value)
	} else {
		nt.Previous, nt.HasPrevious = s.delivered[name]
	}
	s.trials[name] = nt
	s.trialsDirty = true
	if len(nt.probes) > 0 && s.cfg.PreCheck != nil {
		nt.prechecking = true
		go s.preCheck(s.probeCtx(), name, nt.Revision, slices.Clone(nt.probes), probeTimeout)
		return
	}
	s.startTrial(name, nt)
}

// startTrial delivers the pending trial t of the document name from now
// on, reverted at its timeout unless confirmed (s.mu held).
func (s *StoreSource) startTrial(name string, t *storeTrial) {
	now := time.Now()
	t.prechecking, t.Started, t.Deadline = false, now, now.Add(t.timeout)
	rev, timeout := t.Revision, t.timeout
	t.timer = time.AfterFunc(timeout, func() { s.trialDeadline(name, rev, timeout) })
	s.trialsDirty = true
	s.changed()
	s.cfg.Log.WithField("document", name).WithField("revision", rev).WithField("timeout", timeout).Info("fleet trial: applying; reverts unless confirmed by its probes")
}

// preCheck runs the probes of the trial of name at revision rev once,
// within the probe timeout, before its intent is delivered (the daemon's
// pre-check, trial.PreCheck): a probe failing already is reported in
// the trial (FailingBefore) and does not judge it, or, with
// ProbesMustPassBefore, reverts the trial before any change. It runs
// outside the loop and the source's lock.
func (s *StoreSource) preCheck(ctx context.Context, name string, rev int64, probes []string, within time.Duration) {
	pctx, cancel := context.WithTimeout(ctx, within)
	counted, failing := s.cfg.PreCheck(pctx, probes)
	cancel()
	if ctx.Err() != nil {
		return // the agent stops: the trial counts as reverted at the next start
	}
	s.mu.Lock()
	t := s.trials[name]
	if t == nil || t.Revision != rev || !t.prechecking {
		s.mu.Unlock()
		return
	}
	log := s.cfg.Log.WithField("document", name).WithField("revision", rev)
	for _, f := range failing {
		log.WithField("probe", f.Probe).WithField("error", f.Err).Warn("fleet trial: the probe fails before any change: it does not judge the trial")
		t.FailingBefore = append(t.FailingBefore, f.String())
	}
	if len(failing) > 0 && t.mustPassBefore {
		s.mu.Unlock() // still prechecking: never delivered until finishTrial reverts it
		s.finishTrial(name, rev, trial.Refusal(failing))
		return
	}
	t.probes = counted
	s.startTrial(name, t)
	s.mu.Unlock()
}

// noteLoaded records the trials a Load delivered, for the journal
// (BeginJournal, Journal.End): one still pre-checked was not (s.mu
// held).
func (s *StoreSource) noteLoaded() {
	s.loadedTrials = map[string]storeTrial{}
	for name, t := range s.trials {
		if !t.prechecking {
			s.loadedTrials[name] = storeTrial{Trial: t.Trial, probes: t.probes}
		}
	}
}

// forgetTrial forgets the trial and the delivered version of a document
// deleted from the store (s.mu held).
func (s *StoreSource) forgetTrial(name string) {
	if t := s.trials[name]; t != nil {
		s.stopTrial(t)
		delete(s.trials, name)
		s.trialsDirty = true
	}
	if _, ok := s.delivered[name]; ok {
		delete(s.delivered, name)
		s.trialsDirty = true
	}
}

// stopTrial stops a pending trial's timer and the watch of its probes
// (s.mu held).
func (s *StoreSource) stopTrial(t *storeTrial) {
	if t.timer != nil {
		t.timer.Stop()
	}
	if t.stopWatch != nil {
		t.stopWatch()
		t.stopWatch = nil
	}
}

// deliverable is what the source delivers for the version raw of the
// document name: raw, or a trial's intent, or what its revert returns to
// (ok false: nothing) (s.mu held).
func (s *StoreSource) deliverable(name string, raw []byte) ([]byte, bool) {
	env, _, err := ParseTrialEnvelope(raw)
	if err != nil {
		return raw, true // plain, or an invalid envelope the loop refuses
	}
	t := s.trials[name]
	if t != nil && t.prechecking && bytes.Equal(t.Intent, env.Intent) {
		return t.Previous, t.HasPrevious // not yet: what the source delivered before
	}
	if t == nil || t.State != FleetTrialReverted {
		return env.Intent, true
	}
	if bytes.Equal(t.Intent, env.Intent) || t.Intent == nil {
		return t.Previous, t.HasPrevious
	}
	return env.Intent, true
}

// deliver is Load's view of one entry; it remembers what it delivered
// (s.mu held).
func (s *StoreSource) deliver(name string, e store.Entry, out map[string][]byte) {
	raw, ok := s.deliverable(name, e.Value)
	if !ok {
		if _, had := s.delivered[name]; had {
			delete(s.delivered, name)
			s.trialsDirty = true
		}
		return
	}
	out[name] = raw
	if !bytes.Equal(s.delivered[name], raw) {
		s.delivered[name] = raw
		s.trialsDirty = true
	}
}

// finishTrial ends the pending trial of name at revision rev: confirmed
// (err nil) or reverted (err says why).
func (s *StoreSource) finishTrial(name string, rev int64, err error) {
	s.mu.Lock()
	t := s.trials[name]
	if t == nil || t.Revision != rev || t.State != FleetTrialPending {
		s.mu.Unlock()
		return
	}
	s.stopTrial(t)
	t.prechecking, t.Ended = false, time.Now()
	if f := trial.FailureOf(err); f != nil {
		t.Probe, t.ProbeFailedAt = f.Probe, f.At
	}
	log := s.cfg.Log.WithField("document", name).WithField("revision", rev)
	if err == nil {
		t.State, t.Previous, t.HasPrevious = FleetTrialConfirmed, nil, false
		log.Info("fleet trial confirmed: its probes passed through the trial window")
		s.startBake(name, t)
	} else {
		t.State, t.Reason = FleetTrialReverted, err.Error()
		log.WithError(err).Warn("fleet trial reverted: the previous version of the document is applied again")
	}
	s.trialsDirty = true
	s.saveTrials()
	s.changed()
	w := s.writer
	s.mu.Unlock()
	if w != nil {
		w.trialChanged()
	}
}

// observe sees the agent's fleet status: a pending trial the agent
// converged to starts its probes.
func (s *StoreSource) observe(st fleet.Status) {
	if !st.Ready {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for name, t := range s.trials {
		if t.State != FleetTrialPending || t.prechecking || t.probing || st.Revisions[name] != t.Revision {
			continue
		}
		t.probing = true
		end := trial.Window(time.Now(), t.probeTimeout, t.Deadline)
		go s.runProbes(s.probeCtx(), name, t.Revision, slices.Clone(t.probes), end)
	}
}

// probeCtx is the context of probe rounds: Watch's, which ends with the
// agent (s.mu held).
func (s *StoreSource) probeCtx() context.Context {
	if s.watchCtx == nil {
		return context.Background()
	}
	return s.watchCtx
}

// runProbes runs a trial's probes until end (its probe round's window:
// the probe timeout, never past its deadline) and ends it;
// if the agent stops meanwhile (parent ends), the trial stays pending (and
// counts as reverted at the next start).
func (s *StoreSource) runProbes(parent context.Context, name string, rev int64, probes []string, end time.Time) {
	var err error
	if len(probes) > 0 {
		if s.cfg.Prober == nil {
			err = errors.New("no prober: the probes cannot run")
		} else {
			ctx, cancel := context.WithDeadline(parent, end)
			err = s.cfg.Prober(ctx, probes)
			cancel()
			if parent.Err() != nil {
				return
			}
			if err != nil {
				err = fmt.Errorf("probe failed: %w", err)
			}
		}
	}
	if err == nil && len(probes) > 0 {
		s.stand(name, rev, probes)
		return
	}
	s.finishTrial(name, rev, err)
}

// trialState is the trial the fleet status shows: a pending one, else the
// one of the highest revision (nil: none).
func (s *StoreSource) trialState() *fleet.Trial {
	s.mu.Lock()
	defer s.mu.Unlock()
	var best *fleet.Trial
	for _, name := range slices.Sorted(maps.Keys(s.trials)) {
		t := s.trials[name]
		ft := &fleet.Trial{}
		*ft = t.Trial
		ft.Source, ft.FailingBefore = name, slices.Clone(t.FailingBefore)
		switch {
		case best == nil,
			t.State == FleetTrialPending && best.State != FleetTrialPending,
			(t.State == FleetTrialPending) == (best.State == FleetTrialPending) && t.Revision > best.Revision:
			best = ft
		}
	}
	return best
}

// trialDeadline ends the trial of name at revision rev at its deadline:
// confirmed when it stands (its probes passed, then kept passing), else
// reverted.
func (s *StoreSource) trialDeadline(name string, rev int64, timeout time.Duration) {
	s.mu.Lock()
	t := s.trials[name]
	standing := t != nil && t.Revision == rev && t.standing
	s.mu.Unlock()
	if standing {
		s.finishTrial(name, rev, nil)
		return
	}
	s.finishTrial(name, rev, fmt.Errorf("timeout: not converged with its probes passed within %s", timeout))
}

// stand keeps the trial of name at revision rev, whose first probe round
// passed, pending until its deadline, its probes watched meanwhile (as
// the daemon's standing trial: trial.Watch): one that fails
// trial.FailuresToRevert rounds in a row reverts it at once.
func (s *StoreSource) stand(name string, rev int64, probes []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.trials[name]
	if t == nil || t.Revision != rev || t.State != FleetTrialPending {
		return
	}
	t.standing = true
	ctx, cancel := context.WithDeadline(s.probeCtx(), t.Deadline)
	t.stopWatch = cancel
	failed := s.watch(ctx, probes)
	s.cfg.Log.WithField("document", name).WithField("revision", rev).WithField("until", t.Deadline).
		Info("fleet trial: its probes passed; watching them until its deadline")
	go func() {
		if err, ok := <-failed; ok && err != nil {
			s.finishTrial(name, rev, fmt.Errorf("probe failed: %w", err))
		}
	}()
}

// startBake watches a trial confirmed now through its bake: a probe
// failing then makes the host Degraded (bakeFailed) (s.mu held).
func (s *StoreSource) startBake(name string, t *storeTrial) {
	if t.bake <= 0 || len(t.probes) == 0 {
		return
	}
	t.BakeUntil = t.Ended.Add(t.bake)
	ctx, cancel := context.WithDeadline(s.probeCtx(), t.BakeUntil)
	t.stopWatch = cancel
	failed, rev := s.watch(ctx, slices.Clone(t.probes)), t.Revision
	go func() {
		if err, ok := <-failed; ok && err != nil {
			s.bakeFailed(name, rev, err)
		}
	}()
}

// bakeFailed records the probe that failed during the bake of the
// confirmed trial of name at revision rev: the host's status is Degraded.
func (s *StoreSource) bakeFailed(name string, rev int64, err error) {
	s.mu.Lock()
	t := s.trials[name]
	if t == nil || t.Revision != rev || t.State != FleetTrialConfirmed {
		s.mu.Unlock()
		return
	}
	t.BakeProbe, t.BakeFailure = err.Error(), err.Error()
	if f := trial.FailureOf(err); f != nil {
		t.BakeProbe = f.Probe
	}
	s.cfg.Log.WithField("document", name).WithField("revision", rev).WithError(err).Warn("fleet trial: a probe failed during the bake: the host is Degraded")
	s.trialsDirty = true
	s.saveTrials()
	w := s.writer
	s.mu.Unlock()
	if w != nil {
		w.trialChanged()
	}
}

// watch watches the probes until ctx ends (Watcher, else trial.Watch over
// Prober).
func (s *StoreSource) watch(ctx context.Context, probes []string) <-chan error {
	if s.cfg.Watcher != nil {
		return s.cfg.Watcher(ctx, probes, trial.ProbeInterval)
	}
	ps := make([]host.Prober, len(probes))
	for i, spec := range probes {
		ps[i] = specProber{spec: spec, run: s.cfg.Prober}
	}
	return trial.Watch(ctx, ps, trial.ProbeInterval, trial.FailuresToRevert)
}

// specProber is one probe spec run by a StoreSourceConfig.Prober, each
// run bounded by trial.ProbeInterval.
type specProber struct {
	spec string
	run  func(ctx context.Context, specs []string) error
}

func (p specProber) Probe(ctx context.Context) error {
	if p.run == nil {
		return errors.New("no prober: the probes cannot run")
	}
	ctx, cancel := context.WithTimeout(ctx, trial.ProbeInterval)
	defer cancel()
	return p.run(ctx, []string{p.spec})
}

func (p specProber) String() string { return p.spec }
