package agent

import (
	"context"

	"github.com/netagent/netagent/agent/host"
	"github.com/netagent/netagent/agent/member"
	"github.com/netagent/netagent/agent/status"
)

// The loop's side of the fleet member (agent/member). Its account of
// itself to its fleet (Config.Report): the loop takes a snapshot of what it
// holds at the end of every turn; package member builds the fleet.Status
// of it, handed on only when it changed. And the fleet trials: their
// journals begin and end on the loop (member.BeginJournal).

// reportStatus hands the fleet status to Config.Report if it changed.
func (a *Agent) reportStatus() {
	if a.cfg.Report == nil || a.st == nil || a.st.current == nil {
		return
	}
	fs := member.StatusOf(a.reportSnapshot(), a.reported)
	if last := a.reported; last != nil && member.SameReport(last, &fs) {
		return
	}
	a.reported = &fs
	a.cfg.Report(fs)
}

// reportSnapshot is what the fleet status says of the loop's state.
func (a *Agent) reportSnapshot() member.Snapshot {
	s := a.st
	snap := member.Snapshot{Converged: s.results.lastEnd}
	if v := a.hist.current; v != nil {
		snap.Version, snap.Digest = uint64(v.Number), v.Digest
	}
	for name, d := range s.docs.docs {
		if d.good != nil {
			snap.Docs = append(snap.Docs, member.Doc{Name: name, Raw: d.goodRaw, Source: a.source(d.source)})
		}
	}
	snap.Ready, snap.Degraded = status.AgentConditions(a.snapshot(), s.conds)
	return snap
}

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
