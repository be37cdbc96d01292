package agent

import "time"

// debouncer turns a burst of events into one: it fires quiet after the
// last event of a burst, but never later than maxWait after the first, so
// that a steady stream of events (a flapping link, an editor saving every
// keystroke) still gets handled.
//
// It belongs to the loop goroutine. C returns nil while nothing is
// pending, which switches the loop's select case off.
type debouncer struct {
	quiet, maxWait time.Duration
	timer          *time.Timer
	first          time.Time // zero while idle
}

func newDebouncer(quiet, maxWait time.Duration) *debouncer {
	return &debouncer{quiet: quiet, maxWait: max(maxWait, quiet)}
}

// touch records an event and (re)arms the timer.
func (d *debouncer) touch() {
	now := time.Now()
	if d.first.IsZero() {
		d.first = now
	}
	wait := min(d.quiet, d.first.Add(d.maxWait).Sub(now))
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
func (d *debouncer) fired() { d.first = time.Time{} }

// pending reports whether a burst is waiting.
func (d *debouncer) pending() bool { return !d.first.IsZero() }
