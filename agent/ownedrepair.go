package agent

import (
	"context"
	"time"

	"github.com/netagent/netagent/agent/linkwatch"
)

// OwnedWatcher reports changes of netagent's own routes, addresses and
// neighbours in the target namespace (linkwatch.NewOwned: a subscription
// whose socket filter drops everyone else's in the kernel).
type OwnedWatcher = linkwatch.Watcher

// The repair of owned objects within a second: someone deletes or changes
// one of netagent's routes, addresses or neighbours by hand (a link's are
// the link watcher's: refreshLinks). The watcher's events are gathered in
// a burst (Config.LinkDebounce, up to ten times that under a steady
// stream), at most one burst every ownedMinInterval, and each burst runs
// the drift check at once instead of at its next interval: the drift
// policies (repair, report, ignore), the metrics and the status are the
// drift check's.
//
// Events while a write of netagent's is not yet verified (unsettled: the
// notifications of its own writes among them) are left to the drift check
// that verifies it, due within verifyDelay of the write: that one holds a
// change the kernel did not keep twice in a row (a writer fighting back)
// and writes it again only after the backoff of a failed item, so a
// fighting writer meets a backoff and a "not converging" status, never a
// loop. With drift checks off (Config.DriftInterval negative) events
// repair nothing either. The periodic drift check stays: a notification
// the kernel dropped (the socket's buffer full, ENOBUFS) comes as a Resync,
// which checks too.

// ownedMinInterval is the least time between two drift checks run by owned
// objects' events: a writer that changes netagent's objects all the time
// costs at most two read-backs a second.
const ownedMinInterval = 500 * time.Millisecond

// noteOwned takes in one event of the owned watcher.
func (s *loopState) noteOwned(linkwatch.Event) { s.ownedPending = true }

// checkOwned handles a burst of owned objects' events: see above.
func (a *Agent) checkOwned(ctx context.Context) {
	s := a.st
	switch {
	case !s.ownedPending:
		return
	case a.cfg.DriftInterval <= 0 || s.unsettled:
		s.ownedPending = false
		return
	}
	if wait := ownedMinInterval - time.Since(s.ownedLast); wait > 0 {
		if s.ownedWait.at.IsZero() {
			s.ownedWait.set(wait)
		}
		return
	}
	if a.inFlightBesidesLeases() {
		s.ownedDeb.Touch()
		return
	}
	s.ownedPending = false
	s.ownedLast = time.Now()
	s.ownedChecks++
	a.log.Debug("owned objects changed; checking drift now")
	a.checkDrift(ctx)
}
