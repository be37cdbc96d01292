package rollout

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/netagent/netagent/agent/host"
	"github.com/netagent/netagent/agent/member"
	"github.com/netagent/netagent/agent/oneshot"
	"github.com/netagent/netagent/agent/snapshot"
	"github.com/netagent/netagent/fleet"
	"github.com/netagent/netagent/store"
)

// Pre-flight: before a wave pushes anything, each of its hosts' offline
// plan (`plan --against`: oneshot.PlanAgainst) of its documents with the
// rollout's in place, against the host's last snapshot. A host whose
// plan is refused (a protected link), does not converge, or takes down a
// link of the spec's critical ones is flagged, and the wave waits until
// an operator approves it (Approve) or excludes the flagged hosts
// (Exclude). A host without a snapshot, or whose snapshot cannot answer
// (snapshot.ErrNotHeld), is counted, not flagged.

// Verdicts of a pre-flight finding.
const (
	VerdictRefused     = "refused"     // the protection refuses the plan
	VerdictFails       = "fails"       // items would fail or stay blocked, or the documents do not merge
	VerdictCritical    = "critical"    // a critical link goes down
	VerdictNoSnapshot  = "no-snapshot" // not flagged
	VerdictUnplannable = "unplannable" // not flagged: the snapshot cannot answer
)

// Finding is a host's pre-flight result ("" Verdict: nothing to say).
type Finding struct {
	Host    string `json:"host"`
	Verdict string `json:"verdict"`
	Detail  string `json:"detail,omitempty"`
}

// Flags reports whether f holds the wave.
func (f Finding) Flags() bool {
	return f.Verdict == VerdictRefused || f.Verdict == VerdictFails || f.Verdict == VerdictCritical
}

// ErrNoSnapshot: the host has published no snapshot.
var ErrNoSnapshot = errors.New("no snapshot")

// SnapshotSource gives a host's last snapshot document (ErrNoSnapshot).
type SnapshotSource interface {
	Snapshot(ctx context.Context, host string) ([]byte, error)
}

// StoreSnapshots reads the snapshots members publish at
// fleet.Layout.Snapshot (snapshot.ReadStored, which bounds and checks
// them as untrusted input): each as the document's JSON.
type StoreSnapshots struct {
	Store  store.Store
	Layout fleet.Layout
}

// Snapshot reads host's snapshot.
func (s StoreSnapshots) Snapshot(ctx context.Context, host string) ([]byte, error) {
	d, _, err := snapshot.ReadStored(ctx, s.Store, s.Layout, host)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return nil, ErrNoSnapshot
	case err != nil:
		return nil, err
	}
	return json.Marshal(d)
}

// Doc is one of a host's documents, by its source name
// ("hosts/h1/base.json", "groups/edge/dns.json").
type Doc struct {
	Source string
	Intent []byte
}

// Planner plans a host's documents against its snapshot.
type Planner interface {
	Plan(ctx context.Context, host string, snap []byte, docs []Doc, critical []string) Finding
}

// Preflight is what a controller needs to pre-flight its waves.
type Preflight struct {
	Snapshots SnapshotSource
	Planner   Planner
}

// OfflinePlanner plans with `plan --against`'s code (oneshot.PlanAgainst)
// in a temporary directory it removes.
type OfflinePlanner struct{}

// Plan implements Planner.
func (OfflinePlanner) Plan(ctx context.Context, hostName string, snap []byte, docs []Doc, critical []string) Finding {
	f := Finding{Host: hostName}
	dir, err := os.MkdirTemp("", "netagent-preflight-")
	if err != nil {
		return Finding{Host: hostName, Verdict: VerdictFails, Detail: err.Error()}
	}
	defer os.RemoveAll(dir)
	snapFile := filepath.Join(dir, "snapshot.json")
	var paths []string
	err = os.WriteFile(snapFile, snap, 0o600)
	for _, d := range docs {
		if err != nil {
			break
		}
		p := filepath.Join(dir, "docs", filepath.FromSlash(d.Source))
		if err = os.MkdirAll(filepath.Dir(p), 0o700); err == nil {
			err = os.WriteFile(p, d.Intent, 0o600)
		}
		paths = append(paths, p)
	}
	if err != nil {
		return Finding{Host: hostName, Verdict: VerdictFails, Detail: err.Error()}
	}
	log := logrus.New()
	log.SetOutput(io.Discard)
	res, err := oneshot.PlanAgainst(ctx, &oneshot.Options{Command: "plan", Log: log}, snapFile, paths)
	switch {
	case errors.Is(err, snapshot.ErrNotHeld):
		f.Verdict, f.Detail = VerdictUnplannable, trimDir(err.Error(), dir)
		return f
	case err != nil:
		f.Verdict, f.Detail = VerdictFails, trimDir(err.Error(), dir)
		return f
	}
	switch res.Outcome() {
	case oneshot.Refused:
		var why []string
		for _, r := range res.Guarded.Refused {
			why = append(why, r.Why)
		}
		f.Verdict, f.Detail = VerdictRefused, strings.Join(why, "; ")
		return f
	case oneshot.NotConverged:
		var why []string
		for _, p := range res.Problems {
			why = append(why, p.String())
		}
		if res.Err != nil {
			why = append(why, res.Err.Error())
		}
		f.Verdict, f.Detail = VerdictFails, strings.Join(why, "; ")
		return f
	}
	d := host.SummarizeDisruption(res.Ops, res.Disruptions, res.SideEffects)
	for _, l := range d.LinksDown {
		if slices.Contains(critical, l.Link) {
			f.Verdict, f.Detail = VerdictCritical, fmt.Sprintf("%s goes down (%s)", l.Link, strings.Join(l.Operations, ", "))
			return f
		}
	}
	return f
}

func trimDir(msg, dir string) string {
	return strings.ReplaceAll(msg, filepath.Join(dir, "docs")+"/", "")
}

// Bounds of a pre-flight.
const (
	maxHostDocs      = 256
	maxFindings      = 100             // kept in the state; the rest are counted
	preflightBudget  = 2 * time.Second // per step: the lease is renewed between steps
	preflightPerStep = 200
)

// hostDocs are host's documents as its member merges them, with the
// rollout's document (doc) as the rollout pushes it: its own documents,
// and those of the groups its status shows documents of. A trial
// envelope stands for its intent.
func (p *step) hostDocs(ctx context.Context, hostName string, st *fleet.Status) ([]Doc, error) {
	l := p.c.Layout
	dirs := []string{l.Host(hostName)}
	groups := map[string]bool{}
	for src := range st.Revisions {
		if rest, ok := strings.CutPrefix(src, "groups/"); ok {
			if g, _, ok := strings.Cut(rest, "/"); ok && !groups[g] && fleet.CheckName("group", g) == nil {
				groups[g] = true
				dirs = append(dirs, l.Group(g))
			}
		}
	}
	slices.Sort(dirs[1:])
	_, doc, _ := p.s.Spec.Place()
	ours := "hosts/" + hostName + "/" + doc
	out := []Doc{{Source: ours, Intent: p.s.Intent}}
	for _, dir := range dirs {
		entries, _, err := p.c.Store.List(ctx, dir)
		if err != nil {
			return nil, fmt.Errorf("listing %s: %w", dir, err)
		}
		for _, e := range entries {
			src := l.Source(e.Key)
			if src == "" || src == ours {
				continue
			}
			if len(out) == maxHostDocs || len(e.Value) > MaxIntentBytes*2 {
				return nil, fmt.Errorf("%s: more than %d documents, or one larger than %d bytes", dir, maxHostDocs, MaxIntentBytes*2)
			}
			raw := e.Value
			if env, _, err := member.ParseTrialEnvelope(raw); err == nil {
				raw = env.Intent
			}
			out = append(out, Doc{Source: src, Intent: raw})
		}
	}
	return out, nil
}

// preflight plans the next hosts of the current wave (a budget per
// step); it reports whether it did any.
func (p *step) preflight(ctx context.Context) (bool, error) {
	ws := &p.s.Waves[p.s.Wave]
	if p.c.Preflight == nil || ws.Preflighted >= len(ws.Hosts) {
		return false, nil
	}
	sts, err := p.statuses(ctx)
	if err != nil {
		return false, err
	}
	began := time.Now()
	for n := 0; ws.Preflighted < len(ws.Hosts) && n < preflightPerStep && time.Since(began) < preflightBudget; n++ {
		h := ws.Hosts[ws.Preflighted]
		f, err := p.preflightOne(ctx, h, sts[h])
		if err != nil {
			return false, err
		}
		ws.record(f)
		ws.Preflighted++
	}
	return true, nil
}

func (p *step) preflightOne(ctx context.Context, h string, st *fleet.Status) (Finding, error) {
	snap, err := p.c.Preflight.Snapshots.Snapshot(ctx, h)
	switch {
	case errors.Is(err, ErrNoSnapshot):
		return Finding{Host: h, Verdict: VerdictNoSnapshot}, nil
	case err != nil:
		return Finding{}, err
	}
	if st == nil {
		st = &fleet.Status{}
	}
	docs, err := p.hostDocs(ctx, h, st)
	if err != nil {
		return Finding{}, err
	}
	return p.c.Preflight.Planner.Plan(ctx, h, snap, docs, p.s.Spec.Critical), nil
}

// record counts f in the wave.
func (ws *WaveState) record(f Finding) {
	switch {
	case f.Verdict == VerdictNoSnapshot:
		ws.NoSnapshot++
	case f.Verdict == VerdictUnplannable:
		ws.Unplannable++
	case f.Flags():
		ws.Flagged++
		if len(ws.Findings) < maxFindings {
			ws.Findings = append(ws.Findings, f)
		}
	}
}

// preflightHolds reports whether the wave waits for its pre-flight: not
// done, or hosts flagged and not approved.
func (ws *WaveState) preflightHolds(c *Controller) bool {
	if c.Preflight != nil && ws.Preflighted < len(ws.Hosts) {
		return true
	}
	return ws.Flagged > 0 && !ws.PreflightApproved
}

// Exclude takes host out of the current wave (and the rollout: no later
// wave selects it) if it was not pushed yet; its pre-flight finding goes.
func Exclude(ctx context.Context, st store.Store, l fleet.Layout, id, hostName string) (*State, error) {
	return update(ctx, st, l, id, func(s *State) error {
		if ended(s) {
			return ErrFinished
		}
		if s.Wave >= len(s.Waves) {
			return fmt.Errorf("rollout %s: host %s: %w", id, hostName, ErrNotInWave)
		}
		ws := &s.Waves[s.Wave]
		i := slices.Index(ws.Hosts, hostName)
		if i < 0 {
			return fmt.Errorf("rollout %s: host %s: %w (wave %s)", id, hostName, ErrNotInWave, ws.Name)
		}
		if s.Hosts[hostName] != nil {
			return fmt.Errorf("rollout %s: host %s was pushed already (%s): abort the rollout to roll it back", id, hostName, s.Hosts[hostName].State)
		}
		ws.Hosts = slices.Delete(ws.Hosts, i, i+1)
		if i < ws.Preflighted {
			ws.Preflighted--
		}
		ws.Excluded = append(ws.Excluded, hostName)
		if j := slices.IndexFunc(ws.Findings, func(f Finding) bool { return f.Host == hostName }); j >= 0 {
			ws.Findings = slices.Delete(ws.Findings, j, j+1)
			ws.Flagged--
		}
		return nil
	})
}
