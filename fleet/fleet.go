// Package fleet is netagent's layout in a shared store (package store): where
// an agent finds its intent documents, where it writes its status, and what
// the status says. The daemon (a fleet member) and `netagent fleet` (the
// operator's side) both use it, so they agree on every key.
//
// Under a prefix P (`--etcd-prefix`, default /netagent):
//
//	P/hosts/<host>/<doc>    intent documents of one host
//	P/groups/<group>/<doc>  intent documents of every member of a group
//	P/status/<host>         the host's Status (JSON), written under a lease
//	P/rollouts/<id>/        a rollout's state, host records and lease (package agent/rollout)
//	P/snapshots/<host>      the host's snapshot (agent/snapshot's document,
//	                        gzip), published when asked (run --publish-snapshot)
//
// A host reads its own documents and those of the groups it is given, and
// merges them as it merges files: a document is named by where it came from
// (hosts/<host>/<doc>, groups/<group>/<doc>), and an object defined by two
// documents is an error naming both. Names are store path segments: no
// "/", not empty, not "." or "..".
package fleet

import (
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
	"time"
)

// DefaultPrefix is the prefix when none is given.
const DefaultPrefix = "/netagent"

// Layout maps netagent's objects to store keys under Prefix.
type Layout struct {
	Prefix string
}

// ErrInvalidName is wrapped by the errors of CheckName.
var ErrInvalidName = errors.New("invalid name")

// CheckName checks a host, group or document name: one store path segment.
func CheckName(kind, name string) error {
	switch {
	case name == "":
		return fmt.Errorf("%s name is empty: %w", kind, ErrInvalidName)
	case name == "." || name == "..":
		return fmt.Errorf("%s name %q: %w", kind, name, ErrInvalidName)
	case strings.ContainsAny(name, "/\x00"):
		return fmt.Errorf("%s name %q contains a slash or NUL: %w", kind, name, ErrInvalidName)
	}
	return nil
}

// Bounds of a host's labels (fleet.Status.Labels, `run --label`).
const (
	MaxLabels          = 32
	MaxLabelKeyBytes   = 63
	MaxLabelValueBytes = 253
)

// CheckLabel checks one label: a key of letters, digits and "-_./"
// (starting with a letter or digit), a value of the same characters or
// empty, both bounded.
func CheckLabel(key, value string) error {
	switch {
	case key == "" || len(key) > MaxLabelKeyBytes || !labelChars(key) || !isAlnum(key[0]):
		return fmt.Errorf("label key %q: want 1 to %d letters, digits or -_./, starting with a letter or digit: %w", key, MaxLabelKeyBytes, ErrInvalidName)
	case len(value) > MaxLabelValueBytes || !labelChars(value):
		return fmt.Errorf("label %s: value %q: want at most %d letters, digits or -_./: %w", key, value, MaxLabelValueBytes, ErrInvalidName)
	}
	return nil
}

// CheckLabels checks a set of labels (at most MaxLabels).
func CheckLabels(labels map[string]string) error {
	if len(labels) > MaxLabels {
		return fmt.Errorf("%d labels, more than %d: %w", len(labels), MaxLabels, ErrInvalidName)
	}
	for k, v := range labels {
		if err := CheckLabel(k, v); err != nil {
			return err
		}
	}
	return nil
}

// ParseLabel parses "key=value" (`run --label`).
func ParseLabel(s string) (key, value string, err error) {
	key, value, ok := strings.Cut(s, "=")
	if !ok {
		return "", "", fmt.Errorf("label %q: want KEY=VALUE", s)
	}
	return key, value, CheckLabel(key, value)
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

func labelChars(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; !isAlnum(c) && c != '-' && c != '_' && c != '.' && c != '/' {
			return false
		}
	}
	return true
}

func (l Layout) root() string {
	if l.Prefix == "" {
		return DefaultPrefix
	}
	return path.Clean("/" + l.Prefix)
}

// Hosts is the directory of every host's documents.
func (l Layout) Hosts() string { return l.root() + "/hosts" }

// Host is the directory of host's documents.
func (l Layout) Host(host string) string { return l.Hosts() + "/" + host }

// HostDoc is the key of one document of host.
func (l Layout) HostDoc(host, doc string) string { return l.Host(host) + "/" + doc }

// Groups is the directory of every group's documents.
func (l Layout) Groups() string { return l.root() + "/groups" }

// Group is the directory of group's documents.
func (l Layout) Group(group string) string { return l.Groups() + "/" + group }

// GroupDoc is the key of one document of group.
func (l Layout) GroupDoc(group, doc string) string { return l.Group(group) + "/" + doc }

// StatusDir is the directory of every host's status.
func (l Layout) StatusDir() string { return l.root() + "/status" }

// Status is the key of host's status.
func (l Layout) Status(host string) string { return l.StatusDir() + "/" + host }

// Rollouts is the directory of the rollouts (package agent/rollout):
// rollouts/<id>/state, rollouts/<id>/hosts/<host> and rollouts/<id>/lease.
func (l Layout) Rollouts() string { return l.root() + "/rollouts" }

// Snapshots is the directory of the hosts' published snapshots.
func (l Layout) Snapshots() string { return l.root() + "/snapshots" }

// Snapshot is the key of host's published snapshot: the document
// `netagent snapshot` writes, compact and gzipped (agent/snapshot's
// EncodeStored, ReadStored), with no lease: a controller plans a host
// from it without reaching the host.
func (l Layout) Snapshot(host string) string { return l.Snapshots() + "/" + host }

// Source names a document by where it came from, relative to the prefix
// ("hosts/h1/base.json", "groups/edge-eu/dns.json"): the name merge errors
// and status use. It returns "" for a key outside the layout.
func (l Layout) Source(key string) string {
	rel, ok := strings.CutPrefix(key, l.root()+"/")
	if !ok {
		return ""
	}
	parts := strings.Split(rel, "/")
	if len(parts) != 3 || (parts[0] != "hosts" && parts[0] != "groups") {
		return ""
	}
	return rel
}

// Status is what a host writes to Layout.Status: what it converged to and
// how it is. `netagent fleet status` reads these.
type Status struct {
	Host string `json:"host"`
	// Labels are the host's labels, which rollouts select hosts by.
	Labels map[string]string `json:"labels,omitempty"`
	// Version is the number of the agent's intent version (the commit
	// model's history) it last converged to, Digest that version's digest.
	Version uint64 `json:"version"`
	Digest  string `json:"digest,omitempty"`
	// Revisions are the store revisions of the documents that version was
	// made of, by Source name: a pusher sees whether its write arrived.
	Revisions map[string]int64 `json:"revisions,omitempty"`
	// Ready: the last reconcile converged every item. Degraded: something
	// needs attention (Conditions say what), e.g. "intent source
	// unreachable" while the store is down.
	Ready      bool        `json:"ready"`
	Degraded   bool        `json:"degraded"`
	Conditions []Condition `json:"conditions,omitempty"`
	// Converged is when the last converged reconcile ended (zero: never).
	Converged time.Time `json:"converged,omitzero"`
	// Updated is when this status was written. A daemon writes it when
	// it changes, under a lease it renews without writing: the key
	// exists while the host lives, so Lease (the lease's TTL, "15s") is
	// how long ago it was last seen at most. A status without Lease (an
	// agent from before, or a store without leases) was rewritten at
	// every renewal: Updated is its "last seen".
	Updated time.Time `json:"updated"`
	Lease   string    `json:"lease,omitempty"`
	// Trial is the state of a trial pushed to this host, if any.
	Trial *Trial `json:"trial,omitempty"`
	// Snapshot is the state of the host's published snapshot
	// (Layout.Snapshot), when it publishes one.
	Snapshot *SnapshotState `json:"snapshot,omitempty"`
}

// SnapshotState is a host's account of its published snapshot: when it
// last wrote it, at which store revision and how large (gzip bytes), and
// why the last attempt published nothing (Error: too large for the
// store, the namespace unreadable, the store down).
type SnapshotState struct {
	Published time.Time `json:"published,omitzero"`
	Revision  int64     `json:"revision,omitempty"`
	Bytes     int       `json:"bytes,omitempty"`
	Error     string    `json:"error,omitempty"`
}

// Condition is one of the host's conditions, as `netagent status` shows it.
type Condition struct {
	Type    string `json:"type"`
	Status  bool   `json:"status"`
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
}

// Trial is a host's account of a trial pushed to it.
type Trial struct {
	// Source and Revision name the pushed document the trial applied.
	Source   string `json:"source"`
	Revision int64  `json:"revision"`
	// State is "pending", "confirmed" or "reverted"; Reason says why a
	// trial reverted (timeout, probe, items failed, verification).
	State  string `json:"state"`
	Reason string `json:"reason,omitempty"`
	// FailingBefore are the trial's probes that failed before it changed
	// anything (its pre-check): they did not judge it.
	FailingBefore []string `json:"failingBefore,omitempty"`
	// Probe is the counted probe whose failure reverted the trial, and
	// ProbeFailedAt when its last run ended.
	Probe         string    `json:"probe,omitempty"`
	ProbeFailedAt time.Time `json:"probeFailedAt,omitzero"`
	// Started is when the trial's intent was delivered (after its
	// pre-check), Deadline when it reverts unless confirmed, Ended when it
	// was confirmed or reverted (the host's own clock).
	Started  time.Time `json:"started,omitzero"`
	Deadline time.Time `json:"deadline,omitzero"`
	Ended    time.Time `json:"ended,omitzero"`
	// BakeUntil is when the bake of a confirmed trial ends: until then
	// the host keeps running its probes. BakeProbe is the probe that
	// failed during the bake (BakeFailure says how): the host is
	// Degraded from then on, until the document is pushed again.
	BakeUntil   time.Time `json:"bakeUntil,omitzero"`
	BakeProbe   string    `json:"bakeProbe,omitempty"`
	BakeFailure string    `json:"bakeFailure,omitempty"`
}

// Equal reports whether t and u say the same.
func (t Trial) Equal(u Trial) bool {
	return t.Source == u.Source && t.Revision == u.Revision && t.State == u.State && t.Reason == u.Reason &&
		slices.Equal(t.FailingBefore, u.FailingBefore) && t.Probe == u.Probe && t.ProbeFailedAt.Equal(u.ProbeFailedAt) &&
		t.Started.Equal(u.Started) && t.Deadline.Equal(u.Deadline) && t.Ended.Equal(u.Ended) &&
		t.BakeUntil.Equal(u.BakeUntil) && t.BakeProbe == u.BakeProbe && t.BakeFailure == u.BakeFailure
}
