package leasebook

import (
	"context"
	"testing"
	"testing/synctest"
	"time"
)

// Exchanges on one interface are PaceMin apart, each failure in a row
// doubles the wait before the next (up to PaceMax), a success starts
// again; other interfaces are not held up; a canceled wait returns.
func TestPacer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var p Pacer
		ctx := context.Background()
		start := time.Now()
		at := func() time.Duration { return time.Since(start) }
		for i := range 3 {
			if err := p.Wait(ctx, "up0"); err != nil || at() != time.Duration(i)*PaceMin {
				t.Fatalf("exchange %d at %v (%v), want %v", i, at(), err, time.Duration(i)*PaceMin)
			}
		}
		if p.Wait(ctx, "up1"); at() != 2*PaceMin {
			t.Errorf("another interface waited until %v", at())
		}
		mark := at()
		for _, want := range []time.Duration{2 * time.Second, 4 * time.Second, 8 * time.Second} {
			p.Done("up0", true)
			p.Wait(ctx, "up0")
			if got := at() - mark; got != want {
				t.Errorf("after a failure the next exchange came %v later, want %v", got, want)
			}
			mark = at()
		}
		p.Done("up0", false)
		p.Done("up0", true)
		p.Wait(ctx, "up0")
		if got := at() - mark; got != PaceFail {
			t.Errorf("after a success and one failure: %v, want %v", got, PaceFail)
		}
		for range 20 {
			p.Done("up0", true)
		}
		cctx, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		if err := p.Wait(cctx, "up0"); err == nil {
			t.Errorf("a wait of %v ended with its context's minute: no error", PaceMax)
		}
		if failDelay(100) != PaceMax {
			t.Errorf("failDelay(100) = %v", failDelay(100))
		}
	})
}
