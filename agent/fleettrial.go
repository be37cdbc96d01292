package agent

import (
	"context"

	"github.com/netagent/netagent/agent/host"
	"github.com/netagent/netagent/agent/member"
)

// syncFleetTrials follows the fleet trials as the store sources last
// delivered them (Load), before the loop reconciles to what they
// delivered: a pending trial gets a journal before its intent is applied;
// a reverted one has the kernel put back from its journal; one confirmed,
// replaced or deleted drops its journal (member.Journal). One trial is
// journaled at a time, and none while a socket API trial is pending (its
// journal is the target's): such a fleet trial reverts by reconciling
// alone.
func (a *Agent) syncFleetTrials(ctx context.Context) {
	s := a.st
	if a.cfg.Trials == nil {
		return
	}
	for _, src := range a.cfg.Sources {
		ss, ok := src.(*member.StoreSource)
		if !ok {
			continue
		}
		if j := s.fleetJournal; j != nil && j.Source() == ss {
			a.endFleetJournal(ctx, j)
		}
		if s.fleetJournal == nil && s.trial == nil {
			s.fleetJournal = ss.BeginJournal(a.acceptedDocs(), a.beginFleetTrial, a.log)
		}
	}
}

// beginFleetTrial begins the target trial of a fleet trial.
func (a *Agent) beginFleetTrial(t host.Trial) (member.JournalHandle, error) {
	return a.cfg.Trials.Begin(t)
}

// acceptedDocs are the documents the loop applies, by name.
func (a *Agent) acceptedDocs() map[string][]byte {
	docs := map[string][]byte{}
	for n, d := range a.st.docs.docs {
		if d.goodRaw != nil && d.good != nil {
			docs[n] = d.goodRaw
		}
	}
	return docs
}

// endFleetJournal ends j when its trial is no longer pending; reverted,
// the kernel is read back (the journal put it back) and reconciled to what
// the source delivers now.
func (a *Agent) endFleetJournal(ctx context.Context, j *member.Journal) {
	s := a.st
	ended, reverted := j.End(ctx, a.log)
	if !ended {
		return
	}
	s.fleetJournal = nil
	if !reverted {
		return
	}
	if cur, err := a.cfg.Kernel.ReadCurrent(ctx, s.intended); err == nil {
		s.current = cur
	}
	s.want(reasonTry)
}
