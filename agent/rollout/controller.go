package rollout

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/netagent/netagent/agent/member"
	"github.com/netagent/netagent/agent/status"
	"github.com/netagent/netagent/agent/trial"
	"github.com/netagent/netagent/fleet"
	"github.com/netagent/netagent/internal/plural"
	"github.com/netagent/netagent/store"
)

// Clock is the controller's time (a fake in tests).
type Clock interface{ Now() time.Time }

// Controller runs one rollout (see the package doc).
type Controller struct {
	Store  store.Store
	Layout fleet.Layout
	ID     string
	// Owner names this controller in the lease (unique per process).
	Owner string
	Clock Clock
	// Watch, if set, holds the hosts' statuses (else each step lists
	// them) and wakes Run up when one changes.
	Watch *StatusWatch
	// Preflight, if set, plans each wave's hosts against their snapshots
	// before the wave pushes anything (preflight.go).
	Preflight *Preflight

	// The host records as last read or written (nil: read them).
	hosts map[string]*HostState
	vers  hostVersions
}

// Result is what a Step did.
type Result struct {
	Phase string
	// State is the rollout after the step (nil when it could not be read).
	State *State
	// Wrote: the step changed the state (step again at once); else it
	// waits for the hosts, a bake or the operator.
	Wrote bool
}

// Final reports whether the rollout ended or stopped (halted): Run returns.
func (r Result) Final() bool {
	return r.Phase == PhaseCompleted || r.Phase == PhaseAborted || r.Phase == PhaseHalted
}

// step is one Step's view: the state read, its version, the time.
type step struct {
	c   *Controller
	s   *State
	ver store.Version
	now time.Time
}

// Step makes at most one transition of the rollout and writes it: the
// hosts' records that changed, then the state, each with a CAS. The
// controller keeps the host records it read or wrote between steps (it
// alone writes them while it holds the lease); any error drops them, so
// that the next step reads them again.
func (c *Controller) Step(ctx context.Context) (Result, error) {
	r, err := c.step(ctx)
	if err != nil {
		c.hosts, c.vers = nil, nil
	}
	return r, err
}

func (c *Controller) step(ctx context.Context) (Result, error) {
	now := c.Clock.Now()
	if err := c.lease(ctx, now); err != nil {
		return Result{}, err
	}
	s, ver, err := loadState(ctx, c.Store, c.Layout, c.ID)
	if err != nil {
		return Result{}, err
	}
	if c.vers == nil {
		if c.hosts, c.vers, err = loadHosts(ctx, c.Store, c.Layout, s); err != nil {
			return Result{}, err
		}
	}
	s.Hosts = c.hosts
	before, _ := json.Marshal(s)
	p := &step{c: c, s: s, ver: ver, now: now}
	if _, err := p.transition(ctx); err != nil {
		return Result{Phase: s.Phase, State: s}, err
	}
	n, err := saveHosts(ctx, c.Store, c.Layout, c.ID, s.Hosts, c.vers)
	if err != nil {
		return Result{Phase: s.Phase, State: s}, err
	}
	if after, _ := json.Marshal(s); !bytes.Equal(before, after) {
		s.Updated = now
		if _, err := save(ctx, c.Store, c.Layout, s, ver); err != nil {
			return Result{Phase: s.Phase, State: s}, err
		}
		n++
	}
	return Result{Phase: s.Phase, State: s, Wrote: n > 0}, nil
}

// transition changes p.s in memory (and the hosts' keys) for one step.
func (p *step) transition(ctx context.Context) (bool, error) {
	switch p.s.Phase {
	case PhaseRunning:
		return p.running(ctx)
	case PhaseHalted:
		return p.resolvePushing(ctx, false)
	case PhaseAborting:
		return p.aborting(ctx)
	}
	return false, nil
}

func (p *step) running(ctx context.Context) (bool, error) {
	s := p.s
	if s.Wave >= len(s.Spec.Waves) {
		s.Phase = PhaseCompleted
		return true, nil
	}
	if s.Wave >= len(s.Waves) {
		return p.startWave(ctx)
	}
	if pushed, err := p.resolvePushing(ctx, true); pushed || err != nil {
		return pushed, err
	}
	if planned, err := p.preflight(ctx); planned || err != nil {
		return planned, err
	}
	changed, err := p.readReports(ctx)
	if err != nil {
		return false, err
	}
	if n, t := failures(s, s.Wave), tolerance(s, s.Wave)+s.Waves[s.Wave].Accepted; n > t {
		s.Phase = PhaseHalted
		s.Reason = fmt.Sprintf("wave %s: %s failed (reverted, timed out or not Ready), more than its tolerance of %d", s.Waves[s.Wave].Name, plural.N(n, "host"), t)
		return true, nil
	}
	if s.Waves[s.Wave].preflightHolds(p.c) {
		return changed, nil
	}
	if marked, err := p.markNext(ctx); marked || err != nil {
		return marked, err
	}
	return p.bake() || changed, nil
}

// startWave selects the current wave's hosts, once its approval is in.
func (p *step) startWave(ctx context.Context) (bool, error) {
	s := p.s
	w := &s.Spec.Waves[s.Wave]
	if w.ApprovalRequired && !s.Approvals[w.Name] {
		return false, nil
	}
	var hosts []string
	if len(w.Hosts) > 0 || len(w.Labels) > 0 || w.Percent > 0 {
		pool, err := p.pool(ctx)
		if err != nil {
			return false, err
		}
		hosts = Select(w, Order(s.Spec.Rollout, pool), takenSet(s.Waves))
	}
	s.Waves = append(s.Waves, WaveState{Name: w.Name, Hosts: hosts})
	return true, nil
}

// maxStatusBytes bounds one host's status read.
const maxStatusBytes = 64 << 10

// statuses are every host's status, by host: the watch's when the
// controller has one in step with the store, else one listing.
func (p *step) statuses(ctx context.Context) (map[string]*fleet.Status, error) {
	if p.c.Watch != nil {
		if out, ok := p.c.Watch.statuses(); ok {
			return out, nil
		}
	}
	entries, _, err := p.c.Store.List(ctx, p.c.Layout.StatusDir())
	if err != nil {
		return nil, fmt.Errorf("listing the hosts' statuses: %w", err)
	}
	out := map[string]*fleet.Status{}
	dir := p.c.Layout.StatusDir() + "/"
	for _, e := range entries {
		host := strings.TrimPrefix(e.Key, dir)
		if st := parseStatus(host, e.Value); st != nil {
			out[host] = st
		}
	}
	return out, nil
}

// pool is the hosts a wave may select: those with a status, and, for a
// group's document, that report a document of the group.
func (p *step) pool(ctx context.Context) ([]Candidate, error) {
	sts, err := p.statuses(ctx)
	if err != nil {
		return nil, err
	}
	group, _, _ := p.s.Spec.Place()
	var out []Candidate
	for host, st := range sts {
		if group != "" && !inGroup(st, group) {
			continue
		}
		labels := st.Labels
		if fleet.CheckLabels(labels) != nil {
			labels = nil // not trusted: the host is chosen by name or percent only
		}
		out = append(out, Candidate{Host: host, Labels: labels})
	}
	return out, nil
}

func inGroup(st *fleet.Status, group string) bool {
	for src := range st.Revisions {
		if strings.HasPrefix(src, "groups/"+group+"/") {
			return true
		}
	}
	return false
}

func (p *step) hostKey(host string) string {
	_, doc, _ := p.s.Spec.Place()
	return p.c.Layout.HostDoc(host, doc)
}

func (p *step) envelope(wave int) ([]byte, error) {
	w := &p.s.Spec.Waves[wave]
	return member.EnvelopeWith(p.s.Intent, member.TrialOptions{Timeout: w.trialTimeout(), Probes: w.Probes, Bake: w.bake()})
}

// markNext records the next hosts to push (as many as the concurrency
// leaves room for) with their keys' values before: written before any key
// is, so that a restart knows what it was about to do.
func (p *step) markNext(ctx context.Context) (bool, error) {
	s := p.s
	ws := &s.Waves[s.Wave]
	room := s.Spec.Waves[s.Wave].Concurrency
	if room == 0 {
		room = len(ws.Hosts)
	}
	for _, h := range ws.Hosts {
		if hs := s.Hosts[h]; hs != nil && hs.State == HostPending {
			room--
		}
	}
	var next []string
	for _, h := range ws.Hosts {
		if len(next) >= room {
			break
		}
		if s.Hosts[h] == nil {
			next = append(next, h)
		}
	}
	marks := make([]*HostState, len(next))
	err := forEach(len(next), func(i int) error {
		hs := &HostState{Wave: s.Wave, State: HostPushing}
		e, err := p.c.Store.Read(ctx, p.hostKey(next[i]))
		switch {
		case err == nil:
			hs.Previous, hs.Had, hs.PrevVersion = e.Value, true, int64(e.Version)
		case !errors.Is(err, store.ErrNotFound):
			return fmt.Errorf("reading %s: %w", p.hostKey(next[i]), err)
		}
		marks[i] = hs
		return nil
	})
	if err != nil {
		return false, err
	}
	for i, h := range next {
		s.Hosts[h] = marks[i]
	}
	return len(next) > 0, nil
}

// resolvePushing settles the hosts recorded as about to be pushed: a key
// that holds the envelope already was pushed (by a controller that died
// before it recorded it); one at its previous version is pushed now
// (push) or skipped; another value is someone else's: a conflict.
func (p *step) resolvePushing(ctx context.Context, push bool) (bool, error) {
	var hosts []string
	for _, h := range slices.Sorted(maps.Keys(p.s.Hosts)) {
		if p.s.Hosts[h].State == HostPushing {
			hosts = append(hosts, h)
		}
	}
	envs := map[int][]byte{}
	for _, h := range hosts {
		if w := p.s.Hosts[h].Wave; envs[w] == nil {
			env, err := p.envelope(w)
			if err != nil {
				return false, err
			}
			envs[w] = env
		}
	}
	// Each host's record is its own: the calls share nothing else.
	err := forEach(len(hosts), func(i int) error {
		hs := p.s.Hosts[hosts[i]]
		return p.resolveOne(ctx, hosts[i], hs, envs[hs.Wave], push)
	})
	return len(hosts) > 0, err
}

func (p *step) resolveOne(ctx context.Context, host string, hs *HostState, env []byte, push bool) error {
	key := p.hostKey(host)
	e, err := p.c.Store.Read(ctx, key)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("reading %s: %w", key, err)
	}
	switch {
	case int64(e.Version) == hs.PrevVersion && !push:
		hs.State = HostSkipped
	case int64(e.Version) == hs.PrevVersion:
		v, err := p.c.Store.WriteCAS(ctx, key, env, store.Version(hs.PrevVersion))
		if errors.Is(err, store.ErrCASFailed) {
			hs.State, hs.Reason = HostConflict, "its document changed while the controller pushed it"
			return nil
		}
		if err != nil {
			return fmt.Errorf("pushing %s: %w", key, err)
		}
		hs.State, hs.Version, hs.Pushed = HostPending, int64(v), p.now
	case bytes.Equal(e.Value, env):
		hs.State, hs.Version, hs.Pushed = HostPending, int64(e.Version), p.now
	default:
		hs.State, hs.Reason = HostConflict, fmt.Sprintf("its document changed under the controller (version %s)", e.Version)
	}
	return nil
}

// readReports updates the current wave's hosts from their statuses.
func (p *step) readReports(ctx context.Context) (bool, error) {
	sts, err := p.statuses(ctx)
	if err != nil {
		return false, err
	}
	changed := false
	w := &p.s.Spec.Waves[p.s.Wave]
	for _, h := range p.s.Waves[p.s.Wave].Hosts {
		hs := p.s.Hosts[h]
		if hs == nil {
			continue
		}
		state, notReady := hs.State, hs.NotReady
		p.judge(h, hs, sts[h], w)
		changed = changed || hs.State != state || hs.NotReady != notReady
	}
	return changed, nil
}

// judge moves a pushed host on by its status.
func (p *step) judge(host string, hs *HostState, st *fleet.Status, w *Wave) {
	_, doc, _ := p.s.Spec.Place()
	src := "hosts/" + host + "/" + doc // the name the host reports it by
	switch hs.State {
	case HostPending:
		switch {
		case st != nil && st.Trial != nil && st.Trial.Source == src && st.Trial.Revision == hs.Version &&
			st.Trial.State == member.FleetTrialConfirmed:
			hs.State = HostConfirmed
		case st != nil && st.Trial != nil && st.Trial.Source == src && st.Trial.Revision == hs.Version &&
			st.Trial.State == member.FleetTrialReverted:
			hs.State, hs.Reason = HostReverted, st.Trial.Reason
		case p.now.After(hs.Pushed.Add(w.trialTimeout() + trial.DefaultProbeTimeout + ReportGrace)):
			hs.State, hs.Reason = HostTimeout, "no report of its trial within the trial timeout"
		}
	case HostConfirmed:
		if st != nil && storeUnreachable(st) {
			return // the store's outage, not the document's: judged when it answers again
		}
		hs.NotReady = st == nil || !st.Ready || st.Degraded
		if st != nil && st.Trial != nil && st.Trial.Source == src && st.Trial.Revision == hs.Version && st.Trial.BakeProbe != "" {
			hs.Reason = "during the bake: " + st.Trial.BakeFailure
		}
	}
}

// storeUnreachable reports whether st says its host does not reach the
// store (it then keeps what it has: not Ready, Degraded).
func storeUnreachable(st *fleet.Status) bool {
	for _, c := range st.Conditions {
		if c.Status && c.Reason == status.ReasonSourceUnreachable {
			return true
		}
	}
	return false
}

// bake starts the current wave's bake when every host has an outcome,
// and ends the wave when the bake is over.
func (p *step) bake() bool {
	s := p.s
	ws := &s.Waves[s.Wave]
	for _, h := range ws.Hosts {
		if hs := s.Hosts[h]; hs == nil || hs.State == HostPending || hs.State == HostPushing {
			return false
		}
	}
	if ws.BakeUntil.IsZero() {
		ws.BakeUntil = p.now.Add(s.Spec.Waves[s.Wave].bake())
		return true
	}
	if p.now.Before(ws.BakeUntil) {
		return false
	}
	ws.Done = true
	s.Wave++
	return true
}

// aborting writes every pushed host's previous document back, with a CAS
// on the version pushed; a key that changed since is left (a conflict).
func (p *step) aborting(ctx context.Context) (bool, error) {
	if _, err := p.resolvePushing(ctx, false); err != nil {
		return false, err
	}
	for _, h := range slices.Sorted(maps.Keys(p.s.Hosts)) {
		if err := p.rollBack(ctx, h, p.s.Hosts[h]); err != nil {
			return false, err
		}
	}
	p.s.Phase = PhaseAborted
	return true, nil
}

func (p *step) rollBack(ctx context.Context, host string, hs *HostState) error {
	switch hs.State {
	case HostPending, HostConfirmed, HostReverted, HostTimeout:
	default:
		return nil
	}
	key := p.hostKey(host)
	var err error
	if hs.Had {
		_, err = p.c.Store.WriteCAS(ctx, key, hs.Previous, store.Version(hs.Version))
	} else {
		err = p.c.Store.DeleteCAS(ctx, key, store.Version(hs.Version))
	}
	if err == nil {
		hs.State = HostRolledBack
		return nil
	}
	if !errors.Is(err, store.ErrCASFailed) && !errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("rolling %s back: %w", key, err)
	}
	// Changed since the push: our own rollback (a controller that died
	// before recording it) or someone else's write.
	e, rerr := p.c.Store.Read(ctx, key)
	switch {
	case rerr != nil && !errors.Is(rerr, store.ErrNotFound):
		return fmt.Errorf("reading %s: %w", key, rerr)
	case (rerr != nil && !hs.Had) || (rerr == nil && hs.Had && bytes.Equal(e.Value, hs.Previous)):
		hs.State = HostRolledBack
	default:
		hs.State, hs.Reason = HostConflict, "its document changed after the push: not rolled back"
	}
	return nil
}

// transient errors make Run step again after poll: a write that lost a
// race (the step reads everything again), and a store that does not
// answer (etcd restarting: the members ride it out too).
func transient(err error) bool {
	return errors.Is(err, store.ErrCASFailed) || errors.Is(err, store.ErrUnavailable)
}

// Run steps the rollout until it completes, halts or is aborted, waiting
// poll between steps that changed nothing (less when the Watch sees a
// status change). sleep waits (time.Sleep's shape, ending early with
// ctx); report, if set, is told after each step.
func (c *Controller) Run(ctx context.Context, poll time.Duration, sleep func(context.Context, time.Duration) error, report func(Result)) (Result, error) {
	for {
		r, err := c.Step(ctx)
		if err != nil && !transient(err) {
			return r, err
		}
		if report != nil {
			report(r)
		}
		if r.Final() {
			return r, nil
		}
		if !r.Wrote || err != nil {
			if err := c.wait(ctx, poll, sleep); err != nil {
				return r, err
			}
		}
	}
}

// wait sleeps poll, or until the watch sees a status change.
func (c *Controller) wait(ctx context.Context, poll time.Duration, sleep func(context.Context, time.Duration) error) error {
	if c.Watch == nil {
		return sleep(ctx, poll)
	}
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- sleep(sctx, poll) }()
	select {
	case err := <-done:
		return err
	case <-c.Watch.Changed():
		cancel()
		<-done
		return ctx.Err()
	}
}
