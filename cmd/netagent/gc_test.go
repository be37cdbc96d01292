package main

import (
	"runtime"
	"runtime/debug"
	"testing"
)

// Every command runs with GOGC=50, the daemon too; any command whose
// environment sets GOGC or GOMEMLIMIT keeps the runtime's setting.
func TestTuneGC(t *testing.T) {
	restore := debug.SetGCPercent(100)
	defer debug.SetGCPercent(restore)
	current := func() int { p := debug.SetGCPercent(-1); debug.SetGCPercent(p); return p }
	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "")
	for _, c := range []struct {
		command, gogc, memlimit string
		want                    int
	}{
		{"apply", "", "", oneShotGCPercent},
		{"check", "", "", oneShotGCPercent},
		{"run", "", "", oneShotGCPercent},
		{"apply", "200", "", 100},
		{"apply", "", "1GiB", 100},
	} {
		debug.SetGCPercent(100)
		t.Setenv("GOGC", c.gogc)
		t.Setenv("GOMEMLIMIT", c.memlimit)
		tuneGC(c.command)
		if got := current(); got != c.want {
			t.Errorf("%s with GOGC=%q GOMEMLIMIT=%q: GOGC %d, want %d", c.command, c.gogc, c.memlimit, got, c.want)
		}
	}
}

// returnMemory runs one collection at a time in the background: a call
// while one runs does nothing, and a call after it runs one.
func TestReturnMemoryOneAtATime(t *testing.T) {
	forced := func() uint32 {
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.NumForcedGC
	}
	wait := func() {
		for returning.Load() {
			runtime.Gosched()
		}
	}
	before := forced()
	returning.Store(true) // one running
	returnMemory()
	returning.Store(false)
	if n := forced() - before; n != 0 {
		t.Errorf("%d forced collections while one ran, want none", n)
	}
	returnMemory()
	wait()
	if n := forced() - before; n != 1 {
		t.Errorf("%d forced collections, want 1", n)
	}
}
