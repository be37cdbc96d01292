package pace

import "time"

// Debouncer turns a burst of events into one: it fires quiet after the
// last event of a burst, but never later than maxWait after the first, so
// that a steady stream of events (a flapping link, an editor saving every
// keystroke) still gets handled.
//
// An event known to be complete (a file renamed into place) needs no quiet
// period: TouchSettled ends its burst after the short settle window
// instead, which gathers a tool's several files written in a row; a burst
// that also has an ordinary event keeps the quiet period.
//
// It belongs to the loop goroutine. C returns nil while nothing is
// Pending, which switches the loop's select case off.
type Debouncer struct {
	quiet, settle, maxWait time.Duration
	timer                  *time.Timer
	first                  time.Time // zero while idle
	slow                   bool      // the burst has an ordinary event
}

// NewDebouncer returns a Debouncer whose settle window is the quiet period.
func NewDebouncer(quiet, maxWait time.Duration) *Debouncer {
	return &Debouncer{quiet: quiet, settle: quiet, maxWait: max(maxWait, quiet)}
}

// WithSettle sets the settle window of events known complete.
func (d *Debouncer) WithSettle(settle time.Duration) *Debouncer {
	d.settle = min(settle, d.quiet)
	return d
}

// Touch records an event and (re)arms the timer for the quiet period.
func (d *Debouncer) Touch() {
	d.slow = true
	d.arm(d.quiet)
}

// TouchSettled records an event known complete: the burst ends after the
// settle window, unless it has ordinary events, whose timer it leaves as
// it is.
func (d *Debouncer) TouchSettled() {
	if d.slow {
		return
	}
	d.arm(d.settle)
}

func (d *Debouncer) arm(wait time.Duration) {
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
func (d *Debouncer) C() <-chan time.Time {
	if d.first.IsZero() {
		return nil
	}
	return d.timer.C
}

// Fired marks the burst handled; call it after receiving from C.
func (d *Debouncer) Fired() { d.first, d.slow = time.Time{}, false }

// Pending reports whether a burst is waiting.
func (d *Debouncer) Pending() bool { return !d.first.IsZero() }
