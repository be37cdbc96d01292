package rollout

import (
	"crypto/sha256"
	"encoding/binary"
	"math"
	"slices"
	"strings"
)

// Candidate is a host of the rollout's pool and its labels.
type Candidate struct {
	Host   string
	Labels map[string]string
}

// Order sorts the pool in the rollout's stable order: by a hash of the
// rollout id and the host name, so that every controller, at every
// restart, sees the same order, and two rollouts start on different hosts.
func Order(id string, pool []Candidate) []Candidate {
	out := slices.Clone(pool)
	key := func(h string) uint64 {
		sum := sha256.Sum256([]byte(id + "\x00" + h))
		return binary.BigEndian.Uint64(sum[:8])
	}
	slices.SortFunc(out, func(a, b Candidate) int {
		ka, kb := key(a.Host), key(b.Host)
		switch {
		case ka < kb:
			return -1
		case ka > kb:
			return 1
		}
		return strings.Compare(a.Host, b.Host)
	})
	return out
}

// Select picks wave's hosts from the ordered pool, skipping the hosts
// taken (by earlier waves: a host belongs to one wave). Percent is
// cumulative: the wave takes hosts until ceil(percent × pool) of the
// pool belong to it or to earlier waves.
func Select(w *Wave, ordered []Candidate, taken map[string]bool) []string {
	var out []string
	switch {
	case len(w.Hosts) > 0:
		for _, h := range w.Hosts {
			if !taken[h] && !slices.Contains(out, h) {
				out = append(out, h)
			}
		}
	case len(w.Labels) > 0:
		for _, c := range ordered {
			if !taken[c.Host] && matches(c.Labels, w.Labels) {
				out = append(out, c.Host)
			}
		}
	case w.Percent > 0:
		want := int(math.Ceil(w.Percent * float64(len(ordered)) / 100))
		have := 0
		for _, c := range ordered {
			if taken[c.Host] {
				have++
			}
		}
		for _, c := range ordered {
			if have >= want {
				break
			}
			if !taken[c.Host] {
				out = append(out, c.Host)
				have++
			}
		}
	}
	return out
}

func matches(labels, want map[string]string) bool {
	for k, v := range want {
		if got, ok := labels[k]; !ok || got != v {
			return false
		}
	}
	return true
}

// takenSet is the set of hosts of the waves so far.
func takenSet(waves []WaveState) map[string]bool {
	out := map[string]bool{}
	for _, w := range waves {
		for _, h := range w.Hosts {
			out[h] = true
		}
		for _, h := range w.Excluded {
			out[h] = true
		}
	}
	return out
}
