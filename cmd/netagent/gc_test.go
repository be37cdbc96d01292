package main

import (
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
