package lease

import (
	"time"

	"github.com/sirupsen/logrus"
)

// Scheduler owns the leases of one family in use on each interface and
// their timers (the package doc). Its methods run on the loop goroutine;
// a nil Scheduler (the family is not configured) holds nothing.
type Scheduler[L Lease[L]] struct {
	fam  Family[L]
	info Info // fam's
	book Book[L]
	cfg  Config

	used map[string]L         // the leases in use: what renders
	ver  uint64               // the version of the book they came from
	due  map[string]time.Time // the next exchange (or the expiry) of each
	busy map[string]L         // the lease an exchange in flight extends
	// restart: leases let go whose item leaves the current state after
	// the next reconcile (TakeRestarts).
	restart map[string]bool
	// kept: the leases the state directory kept at start that no server
	// has confirmed yet (their items ask again; not HoldsKept): in use
	// while their item is, until they expire.
	kept map[string]bool
	// lastError: why the last exchange on each lease failed (status),
	// until one succeeds.
	lastError map[string]string
	// refused: what the intended graph leaves out of each lease in use
	// (Refusals).
	refused map[string]string
	// found: the kept leases that are other clients' leases an adoption
	// found (Adopt), not the state directory's.
	found map[string]bool
}

// New returns the scheduler of family f over book (where its lease items'
// configurator holds the leases it acquires), holding nothing yet (Seed).
func New[L Lease[L]](f Family[L], book Book[L], cfg Config) *Scheduler[L] {
	if cfg.Log == nil {
		cfg.Log = logrus.New()
	}
	if cfg.Observe == nil {
		cfg.Observe = func(string, string) {}
	}
	return &Scheduler[L]{fam: f, info: f.Info(), book: book, cfg: cfg, used: map[string]L{}, due: map[string]time.Time{}, busy: map[string]L{},
		restart: map[string]bool{}, kept: map[string]bool{}, lastError: map[string]string{}, refused: map[string]string{},
		found: map[string]bool{}}
}

// Seed starts with the leases the state directory keeps, still valid at
// now, so that a restart withdraws nothing: held and due at T1
// (HoldsKept), or in use while their items ask the servers again
// (INIT-REBOOT) and due at their expiry. Without a state directory the
// first Sync takes in whatever the book holds.
func (s *Scheduler[L]) Seed(now time.Time) {
	if s.cfg.StateDir == "" {
		return
	}
	kept, book := s.fam.Kept(s.cfg.StateDir, now), s.book
	msg := s.info.Name + ": starting with the kept lease"
	if !s.fam.HoldsKept() {
		msg += "; asking the server again"
	}
	for _, l := range kept {
		if s.fam.HoldsKept() {
			book.Set(l)
		}
		s.cfg.Log.WithFields(s.fam.Fields(l)).Info(msg)
	}
	held, ver := book.Snapshot()
	s.ver = ver
	if s.fam.HoldsKept() {
		kept = held
	}
	for name, l := range kept {
		s.used[name] = l
		s.due[name] = l.RenewAt()
		if !s.fam.HoldsKept() {
			s.kept[name], s.due[name] = true, l.Expires()
		}
	}
}

// Adopt takes in the leases other DHCP clients hold that an adoption
// found, on the interfaces with no lease in use: in use as kept leases
// that are not held (their items ask the servers for the same address:
// INIT-REBOOT), due at their expiry, until a server answers, their item
// goes, or they expire (Adopting). It reports whether it took any.
func (s *Scheduler[L]) Adopt(found map[string]L) bool {
	if s == nil || s.fam.HoldsKept() {
		return false
	}
	took := false
	for name, l := range found {
		if _, ok := s.used[name]; ok {
			continue
		}
		s.used[name], s.kept[name], s.found[name], s.due[name] = l, true, true, l.Expires()
		took = true
	}
	return took
}

// Adopting reports whether a found lease (Adopt) still waits for its
// server's answer.
func (s *Scheduler[L]) Adopting() bool {
	if s == nil {
		return false
	}
	for name := range s.found {
		if s.kept[name] {
			return true
		}
		delete(s.found, name)
	}
	return false
}

// Sync takes in what the lease items' configurator did (a lease
// acquired, confirmed or let go) and what the exchanges did: a lease
// whose binding or end changed asks to render again, and the timers
// follow the leases held.
func (s *Scheduler[L]) Sync(g Graphs) Changes {
	if s == nil {
		return Changes{}
	}
	if s.fam.HoldsKept() {
		s.forgetUnwanted(g)
	}
	held, ver := s.book.Snapshot()
	if ver == s.ver {
		return Changes{}
	}
	s.ver = ver
	if held == nil {
		held = map[string]L{}
	}
	s.stillKept(held, g)
	changed := s.takeHeld(held)
	changed = s.takeGone(held) || changed
	s.used = held
	return Changes{Rerender: changed}
}

// takeHeld takes in the leases held, new or extended, and reports whether
// one changes what renders.
func (s *Scheduler[L]) takeHeld(held map[string]L) bool {
	changed := false
	for name, l := range held {
		old := s.used[name]
		if old == l {
			continue
		}
		changed = changed || Differs(old, l)
		if s.kept[name] {
			continue // still being asked for: due at its expiry (Seed)
		}
		s.due[name] = l.RenewAt()
		if s.fam.Acquired(old, l) {
			s.cfg.Observe(name, "acquired")
			s.cfg.Log.WithFields(s.fam.Fields(l)).Info(s.info.Name + ": lease acquired")
		}
	}
	return changed
}

// takeGone forgets the leases in use that the book no longer holds, and
// reports whether there were any.
func (s *Scheduler[L]) takeGone(held map[string]L) bool {
	changed := false
	for name, old := range s.used {
		if _, ok := held[name]; ok {
			continue
		}
		changed = true
		delete(s.due, name)
		if old.ValidAt(time.Now()) && !s.restart[name] { // else counted and logged by expire or done
			s.cfg.Observe(name, "lost")
			s.cfg.Log.WithField("interface", name).Warn(s.info.Name + ": lease let go (carrier lost or " +
				s.info.Option + " dropped); " + s.info.Withdrawn)
		}
	}
	return changed
}

// stillKept adds to held the kept leases still waiting for their server's
// answer: their item is in the current state (being asked for again) and
// they have not expired. A kept lease that a server confirmed, or whose
// item went, is kept no more.
func (s *Scheduler[L]) stillKept(held map[string]L, g Graphs) {
	now := time.Now()
	for name := range s.kept {
		l, inUse := s.used[name]
		_, confirmed := held[name]
		if !confirmed && inUse && l.ValidAt(now) && g.Current != nil && g.Current.Contains(s.info.Ref(name)) {
			held[name] = l
			continue
		}
		delete(s.kept, name)
	}
}

// forgetUnwanted forgets the held leases of interfaces whose intent no
// longer asks for one and whose lease item is not in the current state
// (a kept lease of a former intent, held at start: no item to delete
// releases it).
func (s *Scheduler[L]) forgetUnwanted(g Graphs) {
	if g.Intended == nil || g.Current == nil {
		return
	}
	for name := range s.used {
		ref := s.info.Ref(name)
		if g.Intended.Contains(ref) || g.Current.Contains(ref) {
			continue
		}
		s.cfg.Log.WithField("interface", name).Info(s.info.Name + ": forgetting the kept lease of an interface without " + s.info.Option)
		s.book.Drop(name)
		if s.cfg.StateDir != "" {
			s.fam.Forget(s.cfg.StateDir, name)
		}
	}
}

// Used returns the leases in use, by interface (render's facts); the
// caller does not change it.
func (s *Scheduler[L]) Used() map[string]L {
	if s == nil {
		return nil
	}
	return s.used
}

// Next returns when the soonest lease is due (zero: none): the caller's
// timer calls Due then.
func (s *Scheduler[L]) Next() time.Time {
	if s == nil {
		return time.Time{}
	}
	return soonest(s.due, s.used, s.busy)
}
