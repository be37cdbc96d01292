package reconciler

import "testing"

// The log grows by doubling up to the run's hint and past it, never one
// entry at a time (a run may log more operations than its hint: a
// recreate is two); a big group takes it to the hint at once.
func TestReserveLogGrowth(t *testing.T) {
	u := &run{logHint: 10}
	grows := 0
	for range 1000 {
		c := cap(u.log)
		u.reserveLog(1)
		u.log = append(u.log, OpLogEntry{})
		if cap(u.log) != c {
			grows++
		}
	}
	if grows > 10 {
		t.Errorf("1000 entries with a hint of 10: the log grew %d times", grows)
	}
	u = &run{logHint: 100_001}
	u.reserveLog(1)
	u.log = append(u.log, OpLogEntry{})
	u.reserveLog(100_000)
	if cap(u.log) != 100_001 {
		t.Errorf("a batch of 100000 after one entry: capacity %d, want 100001", cap(u.log))
	}
	u = &run{logHint: 100_000}
	u.reserveLog(1000)
	if cap(u.log) != 100_000 {
		t.Errorf("a group of 1000 first: capacity %d, want the hint, 100000", cap(u.log))
	}
}
