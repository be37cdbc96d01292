package lease

import "time"

// Action is what a lease due needs (ActionAt).
type Action int

const (
	Wait   Action = iota // not yet, or an exchange is in flight
	Expire               // its end has come
	Renew                // with its server, before T2
	Rebind               // with any server, before its end
)

// ActionAt returns what l, due at at, needs at now; busy: an exchange on
// it is in flight (whose outcome is ignored when it expires meanwhile).
func ActionAt[L Lease[L]](l L, at time.Time, busy bool, now time.Time) Action {
	switch {
	case !now.Before(l.Expires()):
		return Expire
	case busy || at.After(now):
		return Wait
	case now.Before(l.RebindAt()):
		return Renew
	}
	return Rebind
}

// RetryAt is when to try again after an exchange on l went unanswered at
// now (renewing: a renewal, else a rebinding): at half the time left
// until the end of its state (T2 for a renewal, the expiry for a
// rebinding), at least 5 s apart, never after that end; a renewal that ran
// into T2 goes on as a rebinding at once.
func RetryAt[L Lease[L]](l L, renewing bool, now time.Time) time.Time {
	end := l.RebindAt()
	if !now.Before(end) {
		if renewing {
			return now
		}
		end = l.Expires()
	}
	next := now.Add(max(end.Sub(now)/2, 5*time.Second))
	if next.After(end) {
		next = end
	}
	return next
}

// Differs reports whether l, in place of old (the zero L: none), changes
// what renders from the lease: a new binding, or a new end (its address's
// lifetime).
func Differs[L Lease[L]](old, l L) bool {
	var none L
	return old == none || !old.SameBinding(l) || !old.Expires().Equal(l.Expires())
}

// SameLeases reports whether held renders as used does: the same
// interfaces, none of whose leases Differs.
func SameLeases[L Lease[L]](used, held map[string]L) bool {
	if len(used) != len(held) {
		return false
	}
	for name, l := range held {
		if Differs(used[name], l) {
			return false
		}
	}
	return true
}

// Fresh reports whether l may be trusted at now as if its server had
// confirmed it: it has not reached its renewal time (T1), before which a
// client asks nothing of its server (RFC 2131 4.4.5).
func Fresh[L Lease[L]](l L, now time.Time) bool {
	return now.Before(l.RenewAt())
}

// TrustFresh holds in book each of leases (those a state directory
// keeps) that is Fresh at now, as if its server had confirmed it: a
// caller reads them back as held and asks no server for them (a second
// one-shot apply of the same intent runs no operation for them). A lease
// past T1 is asked for again.
func TrustFresh[L Lease[L]](book Book[L], leases map[string]L, now time.Time) {
	for _, l := range leases {
		if Fresh(l, now) {
			book.Set(l)
		}
	}
}

// soonest returns when the soonest of the leases due is: its next
// exchange, or, while one is in flight, its expiry (an exchange that
// hangs never keeps a lease past its end); zero when none is.
func soonest[L Lease[L]](due map[string]time.Time, used, busy map[string]L) time.Time {
	var next time.Time
	var none L
	for name, at := range due {
		if l := used[name]; l != none && busy[name] == l {
			at = l.Expires()
		}
		if next.IsZero() || at.Before(next) {
			next = at
		}
	}
	return next
}

// stillInUse takes the exchange on old (name's lease) off busy and
// reports whether old is still the lease in use on name: not let go or
// replaced while the exchange ran.
func stillInUse[L comparable](name string, old L, used, busy map[string]L) bool {
	if busy[name] == old {
		delete(busy, name)
	}
	return used[name] == old
}

// extendedEvent names an extension in logs and metrics.
func extendedEvent(rebind bool) string {
	if rebind {
		return "rebound"
	}
	return "renewed"
}

// state names an exchange in logs.
func state(rebind bool) string {
	if rebind {
		return "rebind"
	}
	return "renew"
}
