package agent

import (
	"context"
	"maps"
	"slices"
	"time"

	"github.com/netagent/netagent/agent/host"
	"github.com/netagent/netagent/configurators/nftables"
	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/items"
)

// NftWatcher reports the changes other writers make in the target's
// nftables tables (nftables.NewWatcher).
type NftWatcher = nftables.EventWatcher

// NftEvent says that nftables tables may have changed
// (nftables.Event): which, or, with Resync, any.
type NftEvent = nftables.Event

// The repair of nftables tables within a second: the watcher follows the
// intended tables (followNft) and drops netagent's own transactions; the
// loop gathers a burst of events (an `nft flush ruleset` is one
// transaction of many notifications, a script of nft commands many
// transactions: Config.NftDebounce), at most one burst every
// nftMinInterval, and checkNft reads the tables back
// alone, one dump each, and takes what another writer changed or deleted
// as the drift check would, under the tables' drift policies (repair,
// report, ignore), without waiting for it.
//
// A table netagent wrote whose write is not yet verified (justWritten) is
// the Verifier's (host.Verifier): an event naming it runs the drift check
// at once, which
// repairs it at once the first time in a row and, undone again, holds it
// as not converging and writes it again after the backoff of a failed
// item (doubling): a writer that fights netagent meets a backoff, never a
// loop. The events of a table held until its backoff ends are left to it. A Resync (the
// subscription made again, or notifications dropped: ENOBUFS) checks
// every table, leaving those netagent just wrote to the drift check that
// verifies them within verifyDelay.

// noteNft takes in one event of the watcher.
func (s *loopState) noteNft(ev NftEvent) {
	for _, t := range ev.Tables {
		s.nftTables[t] = struct{}{}
	}
	s.nftResync = s.nftResync || ev.Resync
}

// followNft gives the watcher the intended tables, when the intended
// graph changed since it last did.
func (a *Agent) followNft() {
	s := a.st
	if a.cfg.Nftables == nil || (s.nftFollowed != nil && s.nftRev == s.intended.Rev()) {
		return
	}
	s.nftRev = s.intended.Rev()
	follow := map[string]dg.ItemRef{}
	for it := range s.intended.Unordered() {
		if t, ok := it.(*items.NftTable); ok {
			follow[nftables.TableKey(t.Family, t.Table)] = dg.Ref(t)
		}
	}
	if s.nftFollowed != nil && maps.Equal(follow, s.nftFollowed) {
		return
	}
	s.nftFollowed = follow
	a.cfg.Nftables.Follow(slices.Sorted(maps.Keys(follow)))
}

// nftMinInterval is the least time between two read-backs of the tables
// after events: a writer that changes netagent's tables all the time
// costs at most ten read-backs a second.
const nftMinInterval = 100 * time.Millisecond

// nftDue reports whether the events gathered may be handled now: not
// within nftMinInterval of the last time (nftWait calls again then), nor
// while operations go on (the debounce does, after them).
func (a *Agent) nftDue() bool {
	s := a.st
	if wait := nftMinInterval - time.Since(s.nftLast); wait > 0 {
		if s.nftWait.at.IsZero() {
			s.nftWait.set(wait)
		}
		return false
	}
	if a.inFlightBesidesLeases() {
		s.nftDeb.Touch()
		return false
	}
	return true
}

// checkNft handles a burst of nftables events.
func (a *Agent) checkNft(ctx context.Context) {
	s := a.st
	if !a.nftDue() {
		return
	}
	refs, resync := s.nftNamed(), s.nftResync
	clear(s.nftTables)
	s.nftResync = false
	s.nftLast = time.Now()
	r := &s.results
	var mine []dg.ItemRef // the tables to compare here
	for _, ref := range refs {
		switch {
		case r.held[ref] != nil && r.held[ref].found != nil: // held: its backoff writes it again
		case a.justWritten(ref):
			if !resync {
				a.log.WithField("item", ref.String()).Info("nftables: a table written since the last drift check changed; checking drift now")
				a.checkDrift(ctx)
				return
			}
		default:
			mine = append(mine, ref)
		}
	}
	a.repairNft(ctx, mine)
}

// justWritten reports whether ref was written and the read-back that
// verifies the write is still to come: the drift check verifyDelay after
// it, or with drift checks off, verifyDelay of the write (the written
// items are never taken then).
func (a *Agent) justWritten(ref dg.ItemRef) bool {
	r := &a.st.results
	return r.written[ref] && (a.st.unsettled || time.Since(r.wroteAt) < verifyDelay)
}

// nftNamed returns the followed tables the burst named, every followed
// table after a Resync, in ref order.
func (s *loopState) nftNamed() []dg.ItemRef {
	var out []dg.ItemRef
	for key, ref := range s.nftFollowed {
		if _, named := s.nftTables[key]; named || s.nftResync {
			out = append(out, ref)
		}
	}
	slices.SortFunc(out, dg.ItemRef.Compare)
	return out
}

// repairNft reads the tables back and takes in what changed in refs.
func (a *Agent) repairNft(ctx context.Context, refs []dg.ItemRef) {
	if len(refs) == 0 {
		return
	}
	s := a.st
	start := time.Now()
	list, err := a.cfg.Kernel.ReadNftItems(ctx, s.intended)
	if err != nil {
		a.log.WithError(err).Warn("reading the nftables tables back after an event; the drift check will")
		return
	}
	found := nftDrifts(s.current, list, refs)
	a.log.WithField("tables", len(refs)).WithField("drifted", len(found)).WithField("took", time.Since(start).Round(time.Microsecond)).
		Debug("nftables: tables read back after events")
	a.repairFound(found)
}

// nftDrifts compares the tables refs of current (settled ones: created)
// with list, the tables read back: each gone or held otherwise.
func nftDrifts(current *dg.Graph, list []dg.Item, refs []dg.ItemRef) []host.Finding {
	kernel := make(map[dg.ItemRef]dg.Item, len(list))
	for _, it := range list {
		kernel[dg.Ref(it)] = it
	}
	var out []host.Finding
	for _, ref := range refs {
		it, st, ok := current.Lookup(ref)
		if !ok || st.State != dg.StateCreated {
			continue // failed or in transition: retried, or settles, anyway
		}
		now, there := kernel[ref]
		switch {
		case !there:
			out = append(out, host.Finding{Drift: host.Drift{Ref: ref, Old: it}})
		case !now.Equal(it):
			out = append(out, host.Finding{Drift: host.Drift{Ref: ref, Old: it, New: now}})
		}
	}
	return out
}

// repairFound takes in what a check of some items found (checkLinks,
// checkNft) as the drift check would (takeFindings), and asks for the
// reconcile that repairs it.
func (a *Agent) repairFound(found []host.Finding) {
	if len(found) == 0 {
		return
	}
	reported := map[dg.ItemRef]host.Drift{}
	if a.takeFindings(found, reported) {
		a.st.want(reasonDrift)
	}
	a.addReported(reported)
}

// addReported adds the report items a check of some items found to those
// the last drift check reported.
func (a *Agent) addReported(reported map[dg.ItemRef]host.Drift) {
	if len(reported) == 0 {
		return
	}
	p := &a.st.policy
	p.reported = maps.Clone(p.reported)
	if p.reported == nil {
		p.reported = map[dg.ItemRef]host.Drift{}
	}
	maps.Copy(p.reported, reported)
}
