package gctune

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
		{"apply", "", "", OneShotPercent},
		{"check", "", "", OneShotPercent},
		{"run", "", "", OneShotPercent},
		{"apply", "200", "", 100},
		{"apply", "", "1GiB", 100},
	} {
		debug.SetGCPercent(100)
		t.Setenv("GOGC", c.gogc)
		t.Setenv("GOMEMLIMIT", c.memlimit)
		Tune()
		if got := current(); got != c.want {
			t.Errorf("%s with GOGC=%q GOMEMLIMIT=%q: GOGC %d, want %d", c.command, c.gogc, c.memlimit, got, c.want)
		}
	}
}

// ReturnMemory runs one collection at a time in the background: a call
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
	ReturnMemory()
	returning.Store(false)
	if n := forced() - before; n != 0 {
		t.Errorf("%d forced collections while one ran, want none", n)
	}
	ReturnMemory()
	wait()
	if n := forced() - before; n != 1 {
		t.Errorf("%d forced collections, want 1", n)
	}
}

// A small intent gives the heap gcHeadroom above its estimated live size
// (at most MaxPercent), a large one keeps OneShotPercent; GOGC or
// GOMEMLIMIT in the environment wins.
func TestSizeGC(t *testing.T) {
	for _, c := range []struct {
		bytes, want int
	}{
		{0, MaxPercent},              // 8 MB estimated: 600, at most 200
		{114 << 10, MaxPercent},      // 500 bridge+vxlan pairs: 15 MB
		{573 << 10, 109},             // 10k routes: 44 MB
		{1 << 20, 66},                // 72 MB
		{5800 << 10, OneShotPercent}, // 100k routes: 370 MB, 13
	} {
		if got := PercentFor(c.bytes); got != c.want {
			t.Errorf("PercentFor(%d) = %d, want %d", c.bytes, got, c.want)
		}
	}
	restore := debug.SetGCPercent(100)
	defer debug.SetGCPercent(restore)
	current := func() int { p := debug.SetGCPercent(-1); debug.SetGCPercent(p); return p }
	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "")
	Size(573 << 10)
	if got := current(); got != 109 {
		t.Errorf("GOGC %d after Size of 10k routes, want 109", got)
	}
	debug.SetGCPercent(100)
	t.Setenv("GOGC", "300")
	Size(573 << 10)
	if got := current(); got != 100 {
		t.Errorf("GOGC %d after Size with GOGC set, want the runtime's (100)", got)
	}
}
