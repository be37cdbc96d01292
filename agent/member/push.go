package member

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/netagent/netagent/agent/intent"
	"github.com/netagent/netagent/agent/probe"
	"github.com/netagent/netagent/agent/trial"
	"github.com/netagent/netagent/store"
)

// Push is a document to write to a place (Client.Push).
type Push struct {
	Place Place
	Doc   string
	// Data is what is written: the validated file, or its trial envelope
	// (Envelope).
	Data []byte
	// File and Parsed are the validated file and its name in the errors
	// of the merge with the place's other documents.
	File   string
	Parsed *intent.Intent
	// IfVersion, if set, is the version to replace (0: the document must
	// not exist); else the version read just before the write.
	IfVersion *int64
	// BeforeWrite, if set (tests), runs between the read and the write.
	BeforeWrite func()
}

// Pushed is what a push did (`fleet push --json` prints it).
type Pushed struct {
	Source string `json:"source"` // the document, named as the daemon names it
	// Version is the new version, or the current one when Unchanged.
	Version store.Version `json:"version"`
	// Replaced is the version replaced (store.NoVersion: a new document).
	Replaced  store.Version `json:"replaced"`
	Unchanged bool          `json:"unchanged"` // the document held Data already: nothing written
	// Warnings name the place's stored documents that are invalid
	// themselves (their hosts reject them; not held against the push).
	Warnings []string `json:"warnings,omitempty"`
}

// MergeError is a push refused because the pushed document conflicts
// with another of its place (intent.Merge's error in Err): every member
// would fail on it, so nothing is written.
type MergeError struct {
	Err error
	// Docs are the documents of the place (by name, sorted) that define
	// what the pushed one defines too: a document pushed under their name
	// (--name) replaces one instead.
	Docs []string
}

func (e *MergeError) Error() string {
	return "merging with the documents of its place: " + e.Err.Error()
}
func (e *MergeError) Unwrap() error { return e.Err }

// Push merges p's document with the other documents of its place, as
// every member of the host or group will, and writes it with a
// compare-and-swap (p.IfVersion, or the version it read just before).
func (c *Client) Push(ctx context.Context, p Push) (Pushed, error) {
	dir, key := c.Dir(p.Place), c.DocKey(p.Place, p.Doc)
	cur, others, err := c.readDir(ctx, dir, key)
	if err != nil {
		return Pushed{}, err
	}
	out := Pushed{Source: c.Source(key)}
	if out.Warnings, err = c.checkMerge(p.File, p.Parsed, others); err != nil {
		return out, err
	}
	expect := cur.Version
	if p.IfVersion != nil {
		expect = store.Version(*p.IfVersion)
	}
	if expect == cur.Version && cur.Version != store.NoVersion && bytes.Equal(cur.Value, p.Data) {
		out.Version, out.Unchanged = cur.Version, true
		return out, nil
	}
	if p.BeforeWrite != nil {
		p.BeforeWrite()
	}
	out.Replaced = expect
	out.Version, err = c.st.WriteCAS(ctx, key, p.Data, expect)
	return out, err
}

// readDir lists dir at one revision and returns key's entry (Version
// NoVersion when it does not exist) and the other documents of dir.
func (c *Client) readDir(ctx context.Context, dir, key string) (cur store.Entry, others []store.Entry, err error) {
	entries, _, err := c.st.List(ctx, dir)
	if err != nil {
		return cur, nil, err
	}
	for _, e := range entries {
		switch {
		case e.Key == key:
			cur = e
		case !strings.Contains(strings.TrimPrefix(e.Key, dir+"/"), "/"): // a document, not below one
			others = append(others, e)
		}
	}
	return cur, others, nil
}

// checkMerge merges the pushed file with the other documents of its
// directory: an object two of them define (intent.Merge's conflicts) fails
// on every member (a *MergeError). The other documents are named by their
// source (hosts/h1/other.json). References between documents are not
// checked here (members merge more documents than one directory); a stored
// document that does not parse is a warning, not held against the push.
func (c *Client) checkMerge(file string, pushed *intent.Intent, others []store.Entry) (warnings []string, err error) {
	if len(others) == 0 {
		return nil, nil
	}
	files := map[string]*intent.Intent{file: pushed}
	names := map[string]string{} // source: the document's name
	for _, e := range others {
		src := c.Source(e.Key)
		names[src] = path.Base(e.Key)
		raw := e.Value
		if env, _, err := ParseTrialEnvelope(raw); err == nil {
			raw = env.Intent // a trial: its members merge its intent
		}
		in, err := intent.Parse(raw)
		if err != nil {
			warnings = append(warnings, fmt.Sprintf("%s in etcd is invalid itself (its hosts reject it): %v", src, err))
			continue
		}
		files[src] = in
	}
	if _, err := intent.Merge(files); err != nil {
		return warnings, &MergeError{Err: err, Docs: conflicting(err, names)}
	}
	return warnings, nil
}

// TrialOptions are `fleet push --try`'s options: the trial's timeout
// and probe timeout (0: trial.DefaultProbeTimeout), its probes, and
// whether they must pass before the change.
type TrialOptions struct {
	Timeout, ProbeTimeout time.Duration
	Probes                []string
	ProbesMustPassBefore  bool
	// Bake: how long a confirmed trial's probes keep running (a
	// rollout's wave's bake; TrialSpec.Bake); 0: none.
	Bake time.Duration
}

// Envelope wraps the intent data in a trial envelope (`fleet push
// --try`) of timeout and probes: EnvelopeWith.
func Envelope(data []byte, timeout time.Duration, probes []string) ([]byte, error) {
	return EnvelopeWith(data, TrialOptions{Timeout: timeout, Probes: probes})
}

// EnvelopeWith wraps the intent data in a trial envelope: each member
// runs the probes once before the change (one failing already does not
// count, unless ProbesMustPassBefore), applies it on trial, confirms it
// when its probes pass within the probe timeout once it converged, and
// reverts otherwise (storetrial.go). The options are checked as the
// members check them (their errors name push's options --trial-timeout,
// --probe-timeout and --probe).
func EnvelopeWith(data []byte, o TrialOptions) ([]byte, error) {
	if o.Timeout <= 0 || o.Timeout > MaxTrialTimeout {
		return nil, fmt.Errorf("--trial-timeout must be positive and at most %v", MaxTrialTimeout)
	}
	if o.ProbeTimeout < 0 || o.ProbeTimeout > o.Timeout {
		return nil, fmt.Errorf("--probe-timeout must be positive and at most --trial-timeout (%v)", o.Timeout)
	}
	if len(o.Probes) > trial.MaxProbes {
		return nil, fmt.Errorf("--probe: %d given, at most %d", len(o.Probes), trial.MaxProbes)
	}
	for _, spec := range o.Probes {
		if _, err := probe.Parse(spec); err != nil {
			return nil, fmt.Errorf("--probe %s: %w", spec, err)
		}
	}
	compact := &bytes.Buffer{}
	if err := json.Compact(compact, data); err != nil {
		return nil, err
	}
	spec := TrialSpec{Timeout: o.Timeout.String(), Probes: o.Probes, ProbesMustPassBefore: o.ProbesMustPassBefore}
	if o.ProbeTimeout > 0 {
		spec.ProbeTimeout = o.ProbeTimeout.String()
	}
	if o.Bake > 0 && len(o.Probes) > 0 {
		spec.Bake = o.Bake.String()
	}
	return json.Marshal(TrialEnvelope{Trial: spec, Intent: compact.Bytes()})
}

// conflicting names the documents (names: by source) that the conflicts
// of err are reported on.
func conflicting(err error, names map[string]string) []string {
	var docs []string
	for _, fe := range intent.FieldErrors(err) {
		if n, ok := names[fe.File]; ok && !slices.Contains(docs, n) {
			docs = append(docs, n)
		}
	}
	slices.Sort(docs)
	return docs
}
