package pace

import (
	"testing"
	"testing/synctest"
	"time"
)

func TestBackoffDoublesUpToTheLimit(t *testing.T) {
	b := Backoff{Base: 100 * time.Millisecond, Limit: time.Minute, Rand: func() float64 { return 0 }}
	want := []time.Duration{100, 200, 400, 800, 1600, 3200, 6400, 12800, 25600, 51200, 60000, 60000}
	for i, w := range want {
		if got := b.Nominal(i + 1); got != w*time.Millisecond {
			t.Errorf("nominal(%d) = %v, want %v", i+1, got, w*time.Millisecond)
		}
	}
	if got := b.Nominal(1000); got != time.Minute {
		t.Errorf("nominal(1000) = %v: no overflow past the limit", got)
	}
}

func TestBackoffJitterStaysInTheUpperHalf(t *testing.T) {
	for _, r := range []float64{0, 0.25, 0.999999} {
		b := Backoff{Base: 100 * time.Millisecond, Limit: time.Minute, Rand: func() float64 { return r }}
		for attempt := 1; attempt < 15; attempt++ {
			d, n := b.Delay(attempt), b.Nominal(attempt)
			if d < n/2 || d >= n {
				t.Errorf("rand %v attempt %d: delay %v outside [%v, %v)", r, attempt, d, n/2, n)
			}
		}
	}
}

func TestDebouncerQuietAndMaxWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := NewDebouncer(200*time.Millisecond, time.Second)
		if d.C() != nil || d.Pending() {
			t.Fatal("an idle debouncer has a channel")
		}
		start := time.Now()
		d.Touch()
		time.Sleep(150 * time.Millisecond)
		d.Touch() // pushes the end to 350 ms
		<-d.C()
		d.Fired()
		if got := time.Since(start); got != 350*time.Millisecond {
			t.Errorf("fired after %v, want 350ms", got)
		}
		// A stream of touches every 100 ms fires at maxWait.
		start = time.Now()
		d.Touch()
		fired := make(chan time.Duration, 1)
		go func() {
			<-d.C()
			fired <- time.Since(start)
		}()
		for range 20 {
			time.Sleep(100 * time.Millisecond)
			select {
			case got := <-fired:
				if got != time.Second {
					t.Errorf("fired after %v under a stream, want 1s", got)
				}
				return
			default:
				d.Touch()
			}
		}
		t.Error("never fired under a stream of events")
	})
}

// TestDebouncerSettle: the debouncer's own rules, on the fake clock.
func TestDebouncerSettle(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := NewDebouncer(200*time.Millisecond, 2*time.Second).WithSettle(20 * time.Millisecond)
		start := time.Now()
		d.TouchSettled()
		<-d.C()
		d.Fired()
		if got := time.Since(start); got != 20*time.Millisecond {
			t.Errorf("settled burst fired after %v, want 20ms", got)
		}
		start = time.Now()
		d.Touch()
		d.TouchSettled()
		<-d.C()
		d.Fired()
		if got := time.Since(start); got != 200*time.Millisecond {
			t.Errorf("mixed burst fired after %v, want the quiet period 200ms", got)
		}
		start = time.Now()
		for { // a steady stream of renames still ends by maxWait
			d.TouchSettled()
			time.Sleep(10 * time.Millisecond)
			select {
			case <-d.C():
				d.Fired()
			default:
				continue
			}
			break
		}
		if got := time.Since(start); got > 2*time.Second+10*time.Millisecond {
			t.Errorf("steady stream handled after %v, want by maxWait 2s", got)
		}
	})
}
