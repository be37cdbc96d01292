package agent

import "time"

// backoff computes retry delays: base, 2·base, 4·base, ... up to limit,
// each with "equal jitter": a delay d becomes a random value in [d/2, d),
// so that agents on many hosts that failed together do not retry in step,
// while a retry never comes sooner than half the nominal delay.
type backoff struct {
	base, limit time.Duration
	rand        func() float64 // in [0, 1); math/rand/v2.Float64 outside tests
}

// delay returns the wait before retry number attempt (1 for the first).
func (b backoff) delay(attempt int) time.Duration {
	return b.jitter(b.nominal(attempt))
}

// nominal is the delay without jitter: base·2^(attempt-1), at most limit.
func (b backoff) nominal(attempt int) time.Duration {
	d := b.base
	for i := 1; i < attempt && d < b.limit; i++ {
		d *= 2
	}
	return min(d, b.limit)
}

func (b backoff) jitter(d time.Duration) time.Duration {
	half := d / 2
	return half + time.Duration(b.rand()*float64(d-half))
}
