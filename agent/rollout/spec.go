package rollout

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/netagent/netagent/agent/member"
	"github.com/netagent/netagent/agent/probe"
	"github.com/netagent/netagent/fleet"
)

// Bounds of a rollout document.
const (
	MaxSpecBytes   = 1 << 20
	MaxIntentBytes = 1 << 20 // below etcd's default request size (1.5 MiB)
	MaxWaves       = 64
	MaxWaveHosts   = 100000
)

// Spec is a rollout document.
type Spec struct {
	// Rollout is its id: the store directory rollouts/<id>.
	Rollout string `json:"rollout"`
	// Document is the document pushed: "DOC" (the pool is every host
	// with a status) or "groups/GROUP/DOC" (the pool is the hosts that
	// report a document of GROUP). Each host gets it as hosts/<host>/DOC.
	Document string `json:"document"`
	// Intent is the local file the CLI reads the intent from.
	Intent string `json:"intent"`
	// Critical are links whose going down in a host's pre-flight plan
	// flags the host (its wave waits for approve or exclude).
	Critical []string `json:"critical,omitempty"`
	Waves    []Wave   `json:"waves"`
}

// Wave is one step of a rollout.
type Wave struct {
	Name string `json:"name"`
	// One of Hosts, Labels and Percent selects the wave's hosts; none: a
	// gate (ApprovalRequired) that selects nobody.
	Hosts   []string          `json:"hosts,omitempty"`
	Labels  map[string]string `json:"labels,omitempty"`
	Percent float64           `json:"percent,omitempty"`
	// Concurrency is how many hosts are on trial at once (0: all).
	Concurrency      int             `json:"concurrency,omitempty"`
	TrialTimeout     string          `json:"trialTimeout,omitempty"`
	Probes           []string        `json:"probes,omitempty"`
	Bake             string          `json:"bake,omitempty"`
	FailureTolerance json.RawMessage `json:"failureTolerance,omitempty"`
	ApprovalRequired bool            `json:"approvalRequired,omitempty"`
}

// ParseSpec decodes and validates a rollout document; errors name the
// JSON path.
func ParseSpec(raw []byte) (*Spec, error) {
	if len(raw) > MaxSpecBytes {
		return nil, fmt.Errorf("rollout document is %d bytes, more than %d", len(raw), MaxSpecBytes)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	var s Spec
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("rollout document: %w", err)
	}
	if dec.More() {
		return nil, errors.New("rollout document: more than one JSON value")
	}
	return &s, s.Validate()
}

// Validate checks the document; the error names the JSON path.
func (s *Spec) Validate() error {
	if err := fleet.CheckName("rollout", s.Rollout); err != nil {
		return fmt.Errorf("rollout: %w", err)
	}
	if _, _, err := s.Place(); err != nil {
		return fmt.Errorf("document: %w", err)
	}
	if s.Intent == "" {
		return errors.New("intent: missing (the intent file to push)")
	}
	if len(s.Critical) > 64 {
		return fmt.Errorf("critical: %d links, more than 64", len(s.Critical))
	}
	for i, l := range s.Critical {
		if l == "" || len(l) > 15 || strings.ContainsAny(l, "/ \x00") {
			return fmt.Errorf("critical[%d]: %q is not a link name", i, l)
		}
	}
	if len(s.Waves) == 0 || len(s.Waves) > MaxWaves {
		return fmt.Errorf("waves: %d waves, want 1 to %d", len(s.Waves), MaxWaves)
	}
	names := map[string]bool{}
	for i := range s.Waves {
		w := &s.Waves[i]
		if err := w.validate(); err != nil {
			return fmt.Errorf("waves[%d].%w", i, err)
		}
		if names[w.Name] {
			return fmt.Errorf("waves[%d].name: %q names two waves", i, w.Name)
		}
		names[w.Name] = true
	}
	return nil
}

// Place splits Document into its group ("" for none) and document name.
func (s *Spec) Place() (group, doc string, err error) {
	doc = s.Document
	if rest, ok := strings.CutPrefix(s.Document, "groups/"); ok {
		var found bool
		if group, doc, found = strings.Cut(rest, "/"); !found {
			return "", "", fmt.Errorf("%q: want DOC or groups/GROUP/DOC", s.Document)
		}
		if err := fleet.CheckName("group", group); err != nil {
			return "", "", err
		}
	}
	return group, doc, fleet.CheckName("document", doc)
}

func (w *Wave) validate() error {
	if err := fleet.CheckName("wave", w.Name); err != nil {
		return fmt.Errorf("name: %w", err)
	}
	selectors := 0
	for _, set := range []bool{len(w.Hosts) > 0, len(w.Labels) > 0, w.Percent != 0} {
		if set {
			selectors++
		}
	}
	switch {
	case selectors > 1:
		return errors.New("hosts: give one of hosts, labels and percent")
	case selectors == 0 && !w.ApprovalRequired:
		return errors.New("hosts: the wave selects no host (give hosts, labels or percent, or approvalRequired for a gate)")
	case len(w.Hosts) > MaxWaveHosts:
		return fmt.Errorf("hosts: %d hosts, more than %d", len(w.Hosts), MaxWaveHosts)
	case math.IsNaN(w.Percent) || w.Percent < 0 || w.Percent > 100:
		return fmt.Errorf("percent: %v is not in (0, 100]", w.Percent)
	case w.Concurrency < 0:
		return fmt.Errorf("concurrency: %d is negative", w.Concurrency)
	}
	for i, h := range w.Hosts {
		if err := fleet.CheckName("host", h); err != nil {
			return fmt.Errorf("hosts[%d]: %w", i, err)
		}
	}
	if len(w.Labels) > fleet.MaxLabels {
		return fmt.Errorf("labels: %d labels, more than %d", len(w.Labels), fleet.MaxLabels)
	}
	for k, v := range w.Labels {
		if err := fleet.CheckLabel(k, v); err != nil {
			return fmt.Errorf("labels.%s: %w", k, err)
		}
	}
	for _, d := range []struct{ name, v string }{{"trialTimeout", w.TrialTimeout}, {"bake", w.Bake}} {
		if _, err := duration(d.v); err != nil {
			return fmt.Errorf("%s: %w", d.name, err)
		}
	}
	for i, p := range w.Probes {
		if _, err := probe.Parse(p); err != nil {
			return fmt.Errorf("probes[%d]: %w", i, err)
		}
	}
	if _, err := w.Tolerance(1); err != nil {
		return fmt.Errorf("failureTolerance: %w", err)
	}
	return nil
}

// duration parses a Go duration, "" being 0; negative is an error.
func duration(s string) (time.Duration, error) {
	if s == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("%q is not a duration (such as \"90s\", \"10m\")", s)
	}
	return d, nil
}

// trialTimeout is the wave's trial timeout (the members' default if unset).
func (w *Wave) trialTimeout() time.Duration {
	if d, _ := duration(w.TrialTimeout); d > 0 {
		return d
	}
	return member.DefaultTrialTimeout
}

func (w *Wave) bake() time.Duration { d, _ := duration(w.Bake); return d }

// Tolerance is how many of the wave's n hosts may fail (revert, time out,
// or not be Ready during the bake) before the rollout halts: a count
// (0 when unset) or "P%" of n, rounded down.
func (w *Wave) Tolerance(n int) (int, error) {
	raw := bytes.TrimSpace(w.FailureTolerance)
	if len(raw) == 0 {
		return 0, nil
	}
	var count int
	if json.Unmarshal(raw, &count) == nil {
		if count < 0 {
			return 0, fmt.Errorf("%d is negative", count)
		}
		return count, nil
	}
	var s string
	if json.Unmarshal(raw, &s) != nil || !strings.HasSuffix(s, "%") {
		return 0, fmt.Errorf("%s: want a count (2) or a percentage (\"2%%\")", raw)
	}
	p, err := strconv.ParseFloat(strings.TrimSuffix(s, "%"), 64)
	if err != nil || p < 0 || p > 100 {
		return 0, fmt.Errorf("%q: not a percentage from 0%% to 100%%", s)
	}
	return int(math.Floor(p * float64(n) / 100)), nil
}
