package pace

import "time"

// Backoff computes retry delays: base, 2·base, 4·base, ... up to limit,
// each with "equal jitter": a delay d becomes a random value in [d/2, d),
// so that agents on many hosts that failed together do not retry in step,
// while a retry never comes sooner than half the nominal delay.
type Backoff struct {
	Base, Limit time.Duration
	Rand        func() float64 // in [0, 1); math/rand/v2.Float64 outside tests
}

// Delay returns the wait before retry number attempt (1 for the first).
func (b Backoff) Delay(attempt int) time.Duration {
	return b.jitter(b.Nominal(attempt))
}

// Nominal is the delay without jitter: base·2^(attempt-1), at most limit.
func (b Backoff) Nominal(attempt int) time.Duration {
	d := b.Base
	for i := 1; i < attempt && d < b.Limit; i++ {
		d *= 2
	}
	return min(d, b.Limit)
}

func (b Backoff) jitter(d time.Duration) time.Duration {
	half := d / 2
	return half + time.Duration(b.Rand()*float64(d-half))
}
