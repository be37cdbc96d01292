package rollout

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/netagent/netagent/fleet"
	"github.com/netagent/netagent/store"
)

// Phases of a rollout.
const (
	PhaseRunning   = "running"
	PhaseHalted    = "halted"
	PhaseAborting  = "aborting"
	PhaseAborted   = "aborted"
	PhaseCompleted = "completed"
)

// States of a host in a rollout.
const (
	HostPushing    = "pushing"   // recorded before its key is written
	HostSkipped    = "skipped"   // was about to be pushed when the rollout stopped
	HostPending    = "pending"   // pushed, on trial
	HostConfirmed  = "confirmed" // its trial confirmed
	HostReverted   = "reverted"  // its trial reverted
	HostTimeout    = "timeout"   // no report within the trial timeout and ReportGrace
	HostConflict   = "conflict"  // its key changed under the controller
	HostRolledBack = "rolled-back"
)

// ReportGrace is how long after its trial timeout a host has to report
// before it counts as failed (HostTimeout).
const ReportGrace = 30 * time.Second

// State is a rollout as the store holds it: rollouts/<id>/state, and
// each host's record in rollouts/<id>/hosts/<host> (Hosts).
type State struct {
	Spec Spec `json:"spec"`
	// Intent is the intent pushed (compact JSON), read once by Start.
	Intent json.RawMessage `json:"intent"`
	Phase  string          `json:"phase"`
	Reason string          `json:"reason,omitempty"` // why halted or aborted
	// Wave is the index of the current wave; Waves the waves started.
	Wave  int         `json:"wave"`
	Waves []WaveState `json:"waves"`
	// Hosts are the records of rollouts/<id>/hosts/, which only the
	// controller holding the lease writes: not part of the state key.
	Hosts     map[string]*HostState `json:"-"`
	Approvals map[string]bool       `json:"approvals,omitempty"` // by wave name
	Started   time.Time             `json:"started"`
	Updated   time.Time             `json:"updated"`
}

// WaveState is a started wave.
type WaveState struct {
	Name  string   `json:"name"`
	Hosts []string `json:"hosts"`
	// Accepted is the failures an operator accepted by resuming a halt
	// in this wave: the wave halts again above tolerance + Accepted.
	Accepted  int       `json:"accepted,omitempty"`
	BakeUntil time.Time `json:"bakeUntil,omitzero"` // set when every host reported
	Done      bool      `json:"done,omitempty"`
	// Pre-flight (preflight.go): Preflighted hosts of Hosts (in order)
	// were planned; Flagged of them are held (the first Findings kept),
	// NoSnapshot had none, Unplannable had one that cannot answer.
	// PreflightApproved: an operator let the flagged hosts go. Excluded
	// hosts were taken out of the wave (and the rollout) by Exclude.
	Preflighted       int       `json:"preflighted,omitempty"`
	Flagged           int       `json:"flagged,omitempty"`
	NoSnapshot        int       `json:"noSnapshot,omitempty"`
	Unplannable       int       `json:"unplannable,omitempty"`
	Findings          []Finding `json:"findings,omitempty"`
	PreflightApproved bool      `json:"preflightApproved,omitempty"`
	Excluded          []string  `json:"excluded,omitempty"`
}

// HostState is one host of a rollout, the value of
// rollouts/<id>/hosts/<host>.
type HostState struct {
	Wave  int    `json:"wave"`
	State string `json:"state"`
	// Previous is the host key's value before the push (Had false: the
	// key did not exist), at PrevVersion: what abort writes back.
	Previous    []byte    `json:"previous,omitempty"`
	Had         bool      `json:"had,omitempty"`
	PrevVersion int64     `json:"prevVersion,omitempty"`
	Version     int64     `json:"version,omitempty"` // the pushed version
	Pushed      time.Time `json:"pushed,omitzero"`
	NotReady    bool      `json:"notReady,omitempty"` // confirmed, then not Ready or Degraded
	Reason      string    `json:"reason,omitempty"`
}

// Errors of the controller and the commands.
var (
	ErrExists    = errors.New("a different rollout with this id exists")
	ErrNoRollout = errors.New("no such rollout")
	ErrFinished  = errors.New("the rollout has ended")
	ErrLeaseHeld = errors.New("another controller holds the rollout's lease")
	ErrNoGate    = errors.New("no wave left waits for approval")
	ErrNotInWave = errors.New("not a host of the current wave")
)

// Keys of a rollout under the fleet's prefix.
func Dir(l fleet.Layout, id string) string      { return l.Rollouts() + "/" + id }
func stateKey(l fleet.Layout, id string) string { return Dir(l, id) + "/state" }
func leaseKey(l fleet.Layout, id string) string { return Dir(l, id) + "/lease" }
func hostsDir(l fleet.Layout, id string) string { return Dir(l, id) + "/hosts" }

// HostRecordKey is the key of host's record in rollout id.
func HostRecordKey(l fleet.Layout, id, host string) string { return hostsDir(l, id) + "/" + host }

// Bounds of what is read back: the state (the spec, the intent, the
// waves' host names) and a host record (its key's previous value).
const (
	maxStateBytes      = 16 << 20
	maxHostRecordBytes = 4 << 20
)

// Load reads a rollout's state, its version and its hosts' records.
func Load(ctx context.Context, st store.Store, l fleet.Layout, id string) (*State, store.Version, error) {
	s, ver, err := loadState(ctx, st, l, id)
	if err != nil {
		return nil, 0, err
	}
	if s.Hosts, _, err = loadHosts(ctx, st, l, s); err != nil {
		return nil, 0, err
	}
	return s, ver, nil
}

// hostVersions are the stored host records' versions and values, by host.
type hostVersions map[string]store.Entry

// loadHosts reads the records of s's hosts: each must name a valid host
// and a wave of the spec.
func loadHosts(ctx context.Context, st store.Store, l fleet.Layout, s *State) (map[string]*HostState, hostVersions, error) {
	id := s.Spec.Rollout
	dir := hostsDir(l, id) + "/"
	entries, _, err := st.List(ctx, hostsDir(l, id))
	if err != nil {
		return nil, nil, fmt.Errorf("reading the host records of rollout %s: %w", id, err)
	}
	hosts, vers := map[string]*HostState{}, hostVersions{}
	for _, e := range entries {
		host := strings.TrimPrefix(e.Key, dir)
		if err := fleet.CheckName("host", host); err != nil {
			return nil, nil, fmt.Errorf("rollout %s: %s: %w", id, e.Key, err)
		}
		if len(e.Value) > maxHostRecordBytes {
			return nil, nil, fmt.Errorf("rollout %s: %s is %d bytes, more than %d", id, e.Key, len(e.Value), maxHostRecordBytes)
		}
		var hs HostState
		if err := json.Unmarshal(e.Value, &hs); err != nil {
			return nil, nil, fmt.Errorf("rollout %s: %s: %w", id, e.Key, err)
		}
		if hs.Wave < 0 || hs.Wave >= len(s.Spec.Waves) || !knownHostState[hs.State] {
			return nil, nil, fmt.Errorf("rollout %s: %s: wave %d, state %q: not a record the controller writes", id, e.Key, hs.Wave, hs.State)
		}
		hosts[host], vers[host] = &hs, e
	}
	return hosts, vers, nil
}

var knownHostState = map[string]bool{HostPushing: true, HostSkipped: true, HostPending: true, HostConfirmed: true,
	HostReverted: true, HostTimeout: true, HostConflict: true, HostRolledBack: true}

// saveHosts writes the records of hosts that differ from vers (CAS on
// each one's version; writeWorkers at once) and updates vers; wrote
// counts them. On an error, some may have been written.
func saveHosts(ctx context.Context, st store.Store, l fleet.Layout, id string, hosts map[string]*HostState, vers hostVersions) (wrote int, err error) {
	type change struct {
		host string
		raw  []byte
		old  store.Entry
	}
	var changes []change
	for _, h := range slices.Sorted(maps.Keys(hosts)) {
		raw, err := json.Marshal(hosts[h])
		if err != nil {
			return 0, err
		}
		if old, had := vers[h]; !had || !bytes.Equal(old.Value, raw) {
			changes = append(changes, change{h, raw, old})
		}
	}
	var mu sync.Mutex
	err = forEach(len(changes), func(i int) error {
		c := changes[i]
		key := HostRecordKey(l, id, c.host)
		v, err := st.WriteCAS(ctx, key, c.raw, c.old.Version)
		if err != nil {
			return fmt.Errorf("writing %s: %w", key, err)
		}
		mu.Lock()
		vers[c.host] = store.Entry{Key: key, Value: c.raw, Version: v}
		wrote++
		mu.Unlock()
		return nil
	})
	return wrote, err
}

// writeWorkers is how many host keys a step writes at once.
const writeWorkers = 32

// forEach runs fn(0..n-1), writeWorkers at once, and returns the first
// error (after every started call returned).
func forEach(n int, fn func(i int) error) error {
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
		next  atomic.Int64
	)
	for range min(n, writeWorkers) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				if err := fn(i); err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
					return
				}
			}
		}()
	}
	wg.Wait()
	return first
}

// loadState reads a rollout's state key alone.
func loadState(ctx context.Context, st store.Store, l fleet.Layout, id string) (*State, store.Version, error) {
	e, err := st.Read(ctx, stateKey(l, id))
	if errors.Is(err, store.ErrNotFound) {
		return nil, 0, fmt.Errorf("rollout %s: %w", id, ErrNoRollout)
	}
	if err != nil {
		return nil, 0, fmt.Errorf("reading rollout %s: %w", id, err)
	}
	if len(e.Value) > maxStateBytes {
		return nil, 0, fmt.Errorf("rollout %s: state is %d bytes, more than %d", id, len(e.Value), maxStateBytes)
	}
	var s State
	if err := json.Unmarshal(e.Value, &s); err != nil {
		return nil, 0, fmt.Errorf("rollout %s: state: %w", id, err)
	}
	var legacy struct {
		Hosts json.RawMessage `json:"hosts"`
	}
	if json.Unmarshal(e.Value, &legacy) == nil && len(legacy.Hosts) > 0 && string(legacy.Hosts) != "null" {
		return nil, 0, fmt.Errorf("rollout %s: its state holds the host records (an older netagent's format); finish or abort it with that version", id)
	}
	if err := s.Spec.Validate(); err != nil || len(s.Waves) > len(s.Spec.Waves) || s.Wave > len(s.Spec.Waves) {
		return nil, 0, fmt.Errorf("rollout %s: state is inconsistent (%v)", id, err)
	}
	if s.Hosts == nil {
		s.Hosts = map[string]*HostState{}
	}
	return &s, e.Version, nil
}

// save writes s with a compare-and-swap on ver.
func save(ctx context.Context, st store.Store, l fleet.Layout, s *State, ver store.Version) (store.Version, error) {
	raw, err := json.Marshal(s)
	if err != nil {
		return 0, err
	}
	v, err := st.WriteCAS(ctx, stateKey(l, s.Spec.Rollout), raw, ver)
	if err != nil {
		return 0, fmt.Errorf("writing rollout %s: %w", s.Spec.Rollout, err)
	}
	return v, nil
}

// Start creates the rollout's state, or, when it exists with the same
// document and intent, leaves it (a controller started again resumes).
func Start(ctx context.Context, st store.Store, l fleet.Layout, spec *Spec, intentJSON []byte, now time.Time) (*State, error) {
	cur, _, err := Load(ctx, st, l, spec.Rollout)
	switch {
	case err == nil:
		a, _ := json.Marshal(cur.Spec)
		b, _ := json.Marshal(spec)
		if string(a) != string(b) || string(cur.Intent) != string(intentJSON) {
			return nil, fmt.Errorf("rollout %s: %w (its document or intent differ)", spec.Rollout, ErrExists)
		}
		return cur, nil
	case !errors.Is(err, ErrNoRollout):
		return nil, err
	}
	s := &State{Spec: *spec, Intent: intentJSON, Phase: PhaseRunning, Hosts: map[string]*HostState{}, Started: now, Updated: now}
	if _, err := save(ctx, st, l, s, store.NoVersion); err != nil {
		if errors.Is(err, store.ErrCASFailed) { // a second starter won: same checks
			return Start(ctx, st, l, spec, intentJSON, now)
		}
		return nil, err
	}
	return s, nil
}

// update applies fn to the stored state and writes it (CAS), reading
// again when another writer came in between.
func update(ctx context.Context, st store.Store, l fleet.Layout, id string, fn func(*State) error) (*State, error) {
	for range 10 {
		s, ver, err := Load(ctx, st, l, id)
		if err != nil {
			return nil, err
		}
		if err := fn(s); err != nil {
			return s, err
		}
		if _, err = save(ctx, st, l, s, ver); err == nil || !errors.Is(err, store.ErrCASFailed) {
			return s, err
		}
	}
	return nil, fmt.Errorf("rollout %s: the state kept changing; try again", id)
}

func ended(s *State) bool {
	return s.Phase == PhaseAborted || s.Phase == PhaseCompleted
}

// Approve lets the current wave's hosts flagged by its pre-flight go, if
// it waits for that; else it opens the next approval gate: the first wave
// from the current one on that requires approval and has none.
func Approve(ctx context.Context, st store.Store, l fleet.Layout, id string) (*State, error) {
	return update(ctx, st, l, id, func(s *State) error {
		if ended(s) {
			return ErrFinished
		}
		if s.Wave < len(s.Waves) {
			if ws := &s.Waves[s.Wave]; ws.Flagged > 0 && !ws.PreflightApproved {
				ws.PreflightApproved = true // the flagged hosts go too
				return nil
			}
		}
		for i := s.Wave; i < len(s.Spec.Waves); i++ {
			if w := s.Spec.Waves[i]; w.ApprovalRequired && !s.Approvals[w.Name] && i >= len(s.Waves) {
				if s.Approvals == nil {
					s.Approvals = map[string]bool{}
				}
				s.Approvals[w.Name] = true
				return nil
			}
		}
		return fmt.Errorf("rollout %s: %w", id, ErrNoGate)
	})
}

// Halt stops the rollout: no host is pushed until Resume.
func Halt(ctx context.Context, st store.Store, l fleet.Layout, id string) (*State, error) {
	return update(ctx, st, l, id, func(s *State) error {
		if ended(s) || s.Phase == PhaseAborting {
			return ErrFinished
		}
		s.Phase, s.Reason = PhaseHalted, "halted by the operator"
		return nil
	})
}

// Resume continues a halted rollout; the failures of the current wave so
// far are accepted (it halts again on more than its tolerance beyond them).
func Resume(ctx context.Context, st store.Store, l fleet.Layout, id string) (*State, error) {
	return update(ctx, st, l, id, func(s *State) error {
		if s.Phase != PhaseHalted {
			return fmt.Errorf("rollout %s is %s, not halted", id, s.Phase)
		}
		if s.Wave < len(s.Waves) {
			w := &s.Waves[s.Wave]
			w.Accepted = max(0, failures(s, s.Wave)-tolerance(s, s.Wave))
		}
		s.Phase, s.Reason = PhaseRunning, ""
		return nil
	})
}

// Abort ends the rollout: the controller writes every pushed host's
// previous document back (CAS on the version it pushed).
func Abort(ctx context.Context, st store.Store, l fleet.Layout, id string) (*State, error) {
	return update(ctx, st, l, id, func(s *State) error {
		if ended(s) {
			return ErrFinished
		}
		s.Phase, s.Reason = PhaseAborting, "aborted by the operator"
		return nil
	})
}

// failures are the wave's hosts that reverted, timed out, changed under
// the controller, or are not Ready after confirming.
func failures(s *State, wave int) int {
	n := 0
	for _, h := range s.Waves[wave].Hosts {
		hs := s.Hosts[h]
		if hs == nil {
			continue
		}
		switch {
		case hs.State == HostReverted, hs.State == HostTimeout, hs.State == HostConflict:
			n++
		case hs.State == HostConfirmed && hs.NotReady:
			n++
		}
	}
	return n
}

func tolerance(s *State, wave int) int {
	t, _ := s.Spec.Waves[wave].Tolerance(len(s.Waves[wave].Hosts))
	return t
}
