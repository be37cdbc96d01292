// Package pace says when the daemon's loop acts again: Backoff spaces the
// retries of what failed (doubling, with jitter, up to a limit), and
// Debouncer turns a burst of events into one (a quiet period, capped by a
// longest wait; a shorter settle window for events known complete).
// Both are plain values owned by the goroutine that uses them; neither
// starts a goroutine.
package pace
