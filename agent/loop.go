package agent

import (
	"context"
	"time"

	"github.com/netagent/netagent/agent/host"
	"github.com/netagent/netagent/agent/lease"
	"github.com/netagent/netagent/agent/member"
	"github.com/netagent/netagent/agent/status"
	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/internal/pace"
	"github.com/netagent/netagent/items/lease4"
)

// Why a reconcile ran; logged with every reconcile as the field "reason".
const (
	reasonStart    = "start"    // the first reconcile after Run began
	reasonIntent   = "intent"   // a source's documents changed
	reasonReload   = "reload"   // SIGHUP: every source read again
	reasonLink     = "link"     // an external link appeared, went or changed
	reasonRetry    = "retry"    // the backoff of a failed item ran out
	reasonDrift    = "drift"    // the read-back found objects changed behind our back
	reasonAPI      = "api"      // an apply over the socket
	reasonResume   = "resume"   // an asynchronous operation finished
	reasonRollback = "rollback" // a rollback over the socket
	reasonTry      = "try"      // a trial applied or reverted (trial.go)
	reasonConfirm  = "confirm"  // a trial confirmed
)

// loopState is everything the loop goroutine owns. Nothing else touches it.
type loopState struct {
	docs     *docSet
	intended *dg.Graph // one graph for the agent's life, edited in place
	current  *dg.Graph
	// orphans are the intended items the Guard keeps although no document
	// holds them, with why (see Guard).
	orphans map[dg.ItemRef]string
	// judged is the Guard's judgement of the graph resolve rendered last.
	judged *host.Guarded

	reasons []string        // why the next reconcile runs; none: no reconcile
	dirty   map[string]bool // sources to load when the intent burst ends
	read    map[string]bool // sources read at least once

	intentDeb, linkDeb *pace.Debouncer
	linkNames          map[string]struct{} // links named by the events of a burst
	linkResync         bool                // the link subscription was (re)made

	// ownedDeb gathers the owned watcher's events (ownedrepair.go);
	// ownedPending: some since the last check; ownedLast: when an event
	// last ran the drift check; ownedWait: the end of ownedMinInterval
	// after it, when events wait for it; ownedChecks counts those checks.
	ownedDeb     *pace.Debouncer
	ownedPending bool
	ownedLast    time.Time
	ownedWait    alarm
	ownedChecks  int

	nftDeb    *pace.Debouncer
	nftTables map[string]struct{} // the tables named by the nftables events of a burst
	nftResync bool                // the nftables subscription was (re)made or dropped events
	// nftFollowed are the tables the nftables watcher follows (the
	// intended ones, by nftables.TableKey), as of the intended graph's
	// revision nftRev (nftrepair.go).
	nftFollowed map[string]dg.ItemRef
	nftRev      uint64
	nftLast     time.Time // when checkNft last read the tables back
	nftWait     alarm     // the end of nftMinInterval after it, when events wait for it

	resume   <-chan string // Status.ReadyToResume of the last reconcile
	retry    alarm
	drift    alarm
	watchdog *time.Ticker // nil: no watchdog
	// unsettled: a reconcile changed the kernel and the read-back that
	// verifies it has not yet found it all kept (see Config.Settled).
	unsettled bool

	results results     // per-item status: the reconciler's records of current, and the agent's own
	notes   notes       // errors outside any item (sources, rendering)
	conds   status.Memo // the conditions' Since stamps, kept between status builds

	trial      *pendingTrial // nil: none pending (trial.go)
	trialSeq   uint64        // the id of the last trial begun
	trialAlarm alarm         // the pending trial's deadline
	trialWait  alarm         // the end of its wait for blocked items
	lastTrial  *status.TrialOutcome

	policy driftPolicies // the drift policies of the intent (driftpolicy.go)
	// renderedWith are the leases the intended graph was last rendered
	// with: an edit rendered on its own must render with the same
	// (adoptEdit).
	renderedWith map[string]*lease4.Lease

	fleetJournal *member.Journal // journals the pending fleet trial (fleettrial.go)

	leases     lease.Schedulers // the DHCP leases in use and their timers (agent/lease)
	leaseAlarm alarm            // when the soonest of them is due (leases.go)
	// adoptingLeases: `run --adopt` adopts beyond the first reconcile,
	// until the leases of other clients it found are settled (leases.go).
	adoptingLeases bool
}

// alarm is a one-shot timer whose channel is nil while it is not set, so
// that the loop's select case is off.
type alarm struct {
	t  *time.Timer
	at time.Time
}

func (a *alarm) set(d time.Duration) {
	a.at = time.Now().Add(d)
	if a.t == nil {
		a.t = time.NewTimer(d)
		return
	}
	a.t.Reset(d)
}

func (a *alarm) stop() {
	if a.t != nil {
		a.t.Stop()
	}
	a.at = time.Time{}
}

func (a *alarm) C() <-chan time.Time {
	if a.at.IsZero() {
		return nil
	}
	return a.t.C
}

// fired marks the alarm handled; call it after receiving from C.
func (a *alarm) fired() { a.at = time.Time{} }

func (s *loopState) watchdogC() <-chan time.Time {
	if s.watchdog == nil {
		return nil
	}
	return s.watchdog.C
}

// want asks for a reconcile at the end of this turn of the loop.
func (s *loopState) want(reason string) {
	for _, r := range s.reasons {
		if r == reason {
			return
		}
	}
	s.reasons = append(s.reasons, reason)
}

// loop is the agent's only goroutine with state: it handles one event at a
// time and reconciles at the end of a turn that asked for it.
func (a *Agent) loop(ctx context.Context) {
	s := a.st
	for {
		select {
		case <-ctx.Done():
			return
		case name := <-a.changed:
			s.dirty[name] = true
			s.intentDeb.Touch()
		case name := <-a.settled:
			s.dirty[name] = true
			s.intentDeb.TouchSettled()
		case <-s.intentDeb.C():
			s.intentDeb.Fired()
			a.loadSources(s.takeDirty(), reasonIntent)
		case ev := <-a.links:
			s.noteLinks(ev)
			s.linkDeb.Touch()
		case <-s.linkDeb.C():
			s.linkDeb.Fired()
			a.refreshLinks(ctx)
		case ev := <-a.owned:
			s.noteOwned(ev)
			s.ownedDeb.Touch()
		case <-s.ownedDeb.C():
			s.ownedDeb.Fired()
			a.checkOwned(ctx)
		case <-s.ownedWait.C():
			s.ownedWait.fired()
			a.checkOwned(ctx)
		case ev := <-a.nft:
			s.noteNft(ev)
			s.nftDeb.Touch()
		case <-s.nftDeb.C():
			s.nftDeb.Fired()
			a.checkNft(ctx)
		case <-s.nftWait.C():
			s.nftWait.fired()
			a.checkNft(ctx)
		case <-s.retry.C():
			s.retry.fired()
			a.retryDue()
		case <-s.drift.C():
			s.drift.fired()
			a.checkDrift(ctx)
		case <-s.resume:
			s.resume = nil
			s.want(reasonResume)
		case <-a.reloadc:
			a.reload(ctx)
		case c := <-a.calls:
			a.handle(ctx, c)
		case p := <-a.probed:
			a.probesDone(ctx, p)
		case <-s.trialAlarm.C():
			s.trialAlarm.fired()
			if s.trial != nil {
				a.revertTrial(ctx, "timeout: not confirmed by "+s.trial.status.Deadline.Format(time.RFC3339))
			}
		case <-s.trialWait.C():
			s.trialWait.fired()
			if t := s.trial; t != nil && t.status.Settling {
				a.settleTrial(ctx, true)
			}
		case <-s.leaseAlarm.C():
			s.leaseAlarm.fired()
			a.leasesChanged(s.leases.Due(ctx, s.leaseGraphs()))
		case r := <-a.leasesDone:
			a.leasesChanged(r.Take(s.leaseGraphs()))
		case <-s.watchdogC():
			a.notify("watchdog", a.cfg.Notifier.Watchdog)
		}
		a.syncFleetTrials(ctx)
		a.followNft()
		a.reconcileWanted(ctx)
		if t := s.trial; t != nil && t.status.Settling {
			a.settleTrial(ctx, false)
		}
		a.publishMetrics()
		a.reportStatus()
		a.publishEvents()
	}
}

// reconcileWanted reconciles if this turn asked for it, and again if the
// reconcile changed the leases (their address and routes are rendered
// then: syncLeases), a bounded number of times.
func (a *Agent) reconcileWanted(ctx context.Context) {
	for n := 0; len(a.st.reasons) > 0 && n < 4; n++ {
		a.reconcile(ctx)
		a.syncLeases()
	}
}

// takeDirty returns the sources marked changed and clears the marks.
func (s *loopState) takeDirty() []string {
	names := make([]string, 0, len(s.dirty))
	for n := range s.dirty {
		names = append(names, n)
	}
	clear(s.dirty)
	return names
}

// notify calls a Notifier method, logging a failure.
func (a *Agent) notify(what string, f func() error) {
	if err := f(); err != nil {
		a.log.WithError(err).WithField("notify", what).Warn("service manager notification failed")
	}
}
