package member

import (
	"context"
	"maps"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/netagent/netagent/agent/host"
)

// JournalHandle is a target trial begun for a fleet trial (the agent's
// TrialHandle): Confirm drops its journal, Revert returns the kernel to
// the before-images it journaled.
type JournalHandle interface {
	Confirm() error
	Revert(ctx context.Context, reason string) error
}

// BeginFunc begins a target trial (the agent's Config.Trials.Begin): from
// then on the target journals the before-image of everything it changes.
type BeginFunc func(t host.Trial) (JournalHandle, error)

// Journal is the target trial that journals one fleet trial's changes.
// The agent's loop holds at most one: it begins it (BeginJournal) before
// it reconciles to the trial's intent, and asks it at every later Load
// whether the trial ended (End).
type Journal struct {
	src    *StoreSource
	doc    string
	rev    int64
	handle JournalHandle
}

// Source is the source whose trial j journals.
func (j *Journal) Source() *StoreSource { return j.src }

// pendingLoaded returns a pending trial of what the last Load delivered
// ("": none) and its revert target now.
func (s *StoreSource) pendingLoaded() (name string, t storeTrial, previous []byte, hasPrevious bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for n, lt := range s.loadedTrials {
		if lt.State == FleetTrialPending {
			name, t = n, lt
			break
		}
	}
	if cur := s.trials[name]; cur != nil {
		previous, hasPrevious = cur.Previous, cur.HasPrevious
	}
	return name, t, previous, hasPrevious
}

// BeginJournal begins the journal of s's pending trial, if its last Load
// delivered one; nil if it did not, or if begin failed (logged: the
// trial's revert then reconciles to the previous document alone). docs
// are the loop's accepted documents (name → content): the target trial's
// Files; its Previous are the same with the trial's document at its
// previous version (none: without it).
func (s *StoreSource) BeginJournal(docs map[string][]byte, begin BeginFunc, log logrus.FieldLogger) *Journal {
	name, t, previous, hasPrevious := s.pendingLoaded()
	if name == "" {
		return nil
	}
	prev := maps.Clone(docs)
	delete(prev, name)
	if hasPrevious {
		prev[name] = previous
	}
	h, err := begin(host.Trial{Started: time.Now(), Deadline: t.Deadline, Files: docs, Previous: prev, Probes: t.probes})
	log = log.WithField("document", name).WithField("revision", t.Revision)
	if err != nil {
		log.WithError(err).Warn("fleet trial: journaling its changes failed; its revert reconciles to the previous document alone")
		return nil
	}
	log.Info("fleet trial: journaling the kernel's before-images")
	return &Journal{src: s, doc: name, rev: t.Revision, handle: h}
}

// End ends j when its trial is no longer pending in what the source last
// delivered (ended false: it still is). A trial confirmed, replaced or
// deleted drops the journal; one reverted (reverted true) has the kernel
// put back from the journal, after which the loop reads the kernel back
// and reconciles to what the source delivers now.
func (j *Journal) End(ctx context.Context, log logrus.FieldLogger) (ended, reverted bool) {
	j.src.mu.Lock()
	t, ok := j.src.loadedTrials[j.doc]
	j.src.mu.Unlock()
	if ok && t.Revision == j.rev && t.State == FleetTrialPending {
		return false, false
	}
	log = log.WithField("document", j.doc).WithField("revision", j.rev)
	if !ok || t.Revision != j.rev || t.State != FleetTrialReverted {
		if err := j.handle.Confirm(); err != nil {
			log.WithError(err).Warn("fleet trial: dropping its journal")
		}
		return true, false
	}
	if err := j.handle.Revert(ctx, "fleet trial reverted: "+t.Reason); err != nil {
		log.WithError(err).Warn("fleet trial: reverting the kernel from its journal; reconciling to the previous document")
	}
	return true, true
}
