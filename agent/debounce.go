package agent

import "time"

// debouncer turns a burst of events into one: it fires quiet after the
// last event of a burst, but never later than maxWait after the first, so
// that a steady stream of events (a flapping link, an editor saving every
// keystroke) still gets handled.
//
// An event known to be complete (a file renamed into place) needs no quiet
// period: touchSettled ends its burst after the short settle window
// instead, which gathers a tool's several files written in a row; a burst
// that also has an ordinary event keeps the quiet period.
//
// It belongs to the loop goroutine. C returns nil while nothing is
// pending, which switches the loop's select case off.
type debouncer struct {
	quiet, settle, maxWait time.Duration
	timer                  *time.Timer
	first                  time.Time // zero while idle
	slow                   bool      // the burst has an ordinary event
}

// newDebouncer returns a debouncer whose settle window is the quiet period.
func newDebouncer(quiet, maxWait time.Duration) *debouncer {
	return &debouncer{quiet: quiet, settle: quiet, maxWait: max(maxWait, quiet)}
}

// withSettle sets the settle window of events known complete.
func (d *debouncer) withSettle(settle time.Duration) *debouncer {
	d.settle = min(settle, d.quiet)
	return d
}

// touch records an event and (re)arms the timer for the quiet period.
func (d *debouncer) touch() {
	d.slow = true
	d.arm(d.quiet)
}

// touchSettled records an event known complete: the burst ends after the
// settle window, unless it has ordinary events, whose timer it leaves as
// it is.
func (d *debouncer) touchSettled() {
	if d.slow {
		return
	}
	d.arm(d.settle)
}

func (d *debouncer) arm(wait time.Duration) {
	now := time.Now()
	if d.first.IsZero() {
		d.first = now
	}
	wait = min(wait, d.first.Add(d.maxWait).Sub(now))
	if d.timer == nil {
		d.timer = time.NewTimer(wait)
		return
	}
	d.timer.Reset(wait)
}

// C is the channel that fires when the burst is over, or nil when idle.
func (d *debouncer) C() <-chan time.Time {
	if d.first.IsZero() {
		return nil
	}
	return d.timer.C
}

// fired marks the burst handled; call it after receiving from C.
func (d *debouncer) fired() { d.first, d.slow = time.Time{}, false }

// pending reports whether a burst is waiting.
func (d *debouncer) pending() bool { return !d.first.IsZero() }
