package member

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/netagent/netagent/fleet"
	"github.com/netagent/netagent/store"
)

// DefaultStale: a status without a lease (fleet.Status.Lease: a daemon
// from before leased statuses were written only on change, or a store
// without leases) not rewritten for this long is stale. Those daemons
// rewrote their status at every renewal (5 s by default), so a minute is
// twelve missed renewals, or a clock off by as much. A leased status is
// never stale: it exists while its host renews the lease.
const DefaultStale = time.Minute

// HostRow is one host of `fleet status`: its status, or none (a host with
// documents whose agent has no status: never started, or stopped and its
// lease expired).
type HostRow struct {
	Host   string
	Status *fleet.Status
	// Behind lists the documents the host has not converged to yet (see
	// behind); nil when it has them all, or its status does not say.
	Behind []string
	// Bad says why the host counts as not done ("" when it is Ready, its
	// status fresh and its documents current).
	Bad string
}

// Statuses reads every status and the hosts that have documents, one row
// per host in name order, judged at now: a status without a lease older
// than stale (0: never) is stale.
func (c *Client) Statuses(ctx context.Context, now time.Time, stale time.Duration) ([]HostRow, error) {
	l := c.layout
	statuses, _, err := c.st.List(ctx, l.StatusDir())
	if err != nil {
		return nil, err
	}
	// The documents' versions are all status compares them to: their
	// keys, not their (possibly large) intents.
	docs, _, err := c.st.ListKeys(ctx, l.Hosts())
	if err != nil {
		return nil, err
	}
	groupDocs, _, err := c.st.ListKeys(ctx, l.Groups())
	if err != nil {
		return nil, err
	}
	current := map[string]int64{} // every document's version, by source
	for _, e := range append(docs, groupDocs...) {
		if src := l.Source(e.Key); src != "" {
			current[src] = int64(e.Version)
		}
	}
	return c.rows(statuses, docs, current, now, stale), nil
}

// rows makes the rows of the statuses and of the hosts with documents.
func (c *Client) rows(statuses, docs []store.Entry, current map[string]int64, now time.Time, stale time.Duration) []HostRow {
	l := c.layout
	byHost := map[string]*HostRow{}
	for _, e := range statuses {
		host := strings.TrimPrefix(e.Key, l.StatusDir()+"/")
		byHost[host] = statusRow(host, e, current, now, stale)
	}
	for _, e := range docs {
		host, _, _ := strings.Cut(strings.TrimPrefix(e.Key, l.Hosts()+"/"), "/")
		if _, ok := byHost[host]; !ok {
			byHost[host] = &HostRow{Host: host, Bad: "no status: its agent is not running, or not reaching etcd"}
		}
	}
	rows := make([]HostRow, 0, len(byHost))
	for _, r := range byHost {
		rows = append(rows, *r)
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].Host < rows[j].Host })
	return rows
}

// statusRow judges one stored status against the current documents'
// versions, by source.
func statusRow(host string, e store.Entry, current map[string]int64, now time.Time, stale time.Duration) *HostRow {
	r := &HostRow{Host: host}
	var s fleet.Status
	if err := json.Unmarshal(e.Value, &s); err != nil {
		r.Bad = fmt.Sprintf("unreadable status (version %s): %v", e.Version, err)
		return r
	}
	r.Status = &s
	r.Behind = behind(host, s.Revisions, current)
	switch {
	case !s.Ready:
		r.Bad = "not Ready"
	case stale > 0 && s.Lease == "" && now.Sub(s.Updated) > stale:
		r.Bad = fmt.Sprintf("stale: last written %s ago", ago(now, s.Updated))
	case len(r.Behind) > 0:
		r.Bad = "behind: " + strings.Join(r.Behind, ", ")
	}
	return r
}

// ago renders now-t rounded to the second ("12s", "3m4s").
func ago(now, t time.Time) string { return max(now.Sub(t), 0).Round(time.Second).String() }

// behind compares the documents a host converged to (its status's
// Revisions, by source) with the current ones: a document changed since
// ("groups/g/x.json 42 < 57"), deleted since, or new in the host's own
// directory or in a group it took a document from. A host's groups are
// its daemon's flags, which the store does not hold: a document new in a
// group the host had no document from is not seen. A status without
// Revisions says nothing (nil).
func behind(host string, converged, current map[string]int64) []string {
	if converged == nil {
		return nil
	}
	var out []string
	dirs := map[string]bool{"hosts/" + host + "/": true}
	for src, rev := range converged {
		dir, _, _ := strings.Cut(src, "/")
		if dir == "groups" {
			g, _, _ := strings.Cut(strings.TrimPrefix(src, "groups/"), "/")
			dirs["groups/"+g+"/"] = true
		}
		switch cur, ok := current[src]; {
		case !ok:
			out = append(out, src+" deleted")
		case cur > rev:
			out = append(out, fmt.Sprintf("%s %d < %d", src, rev, cur))
		}
	}
	for src := range current {
		dir := src[:strings.LastIndex(src, "/")+1]
		if _, ok := converged[src]; !ok && dirs[dir] {
			out = append(out, src+" new")
		}
	}
	sort.Strings(out)
	return out
}

// Stale reports whether the row counts as not done for its age alone.
func (r HostRow) Stale() bool { return strings.HasPrefix(r.Bad, "stale") }

// LastSeen is the LAST SEEN cell: a leased status is live, its host seen
// within the lease's TTL ("< 15s ago"); another was seen when it was
// written.
func (r HostRow) LastSeen(now time.Time) string {
	if r.Status.Lease != "" {
		return "< " + r.Status.Lease + " ago"
	}
	if r.Status.Updated.IsZero() {
		return "- ago"
	}
	return ago(now, r.Status.Updated) + " ago"
}

// Documents says whether the host converged to its current documents:
// "current", "N behind", or "-" when its status does not say.
func (r HostRow) Documents() string {
	switch {
	case r.Status.Revisions == nil:
		return "-"
	case len(r.Behind) > 0:
		return fmt.Sprintf("%d behind", len(r.Behind))
	}
	return "current"
}

// Message is what the MESSAGE column says: why a stale or behind host is
// counted so, else the first condition that has a message.
func (r HostRow) Message() string {
	if r.Stale() || strings.HasPrefix(r.Bad, "behind") {
		return r.Bad
	}
	for _, c := range r.Status.Conditions {
		if c.Message != "" {
			return c.Type + ": " + c.Message
		}
	}
	return ""
}

// Trial is the TRIAL cell: the host's trial, or "-".
func (r HostRow) Trial() string {
	t := r.Status.Trial
	if t == nil {
		return "-"
	}
	s := fmt.Sprintf("%s %s@%d", t.State, t.Source, t.Revision)
	if t.Reason != "" {
		s += " (" + t.Reason + ")"
	}
	if n := len(t.FailingBefore); n > 0 {
		s += fmt.Sprintf(" [%d probes failing before, not counted]", n)
	}
	return s
}

// Written are the statuses of the rows, as the hosts wrote them (the
// rows without one left out; none: an empty list).
func Written(rows []HostRow) []fleet.Status {
	list := []fleet.Status{}
	for _, r := range rows {
		if r.Status != nil {
			list = append(list, *r.Status)
		}
	}
	return list
}

// AllGood reports whether every host of rows is done: Ready, its status
// fresh and its documents current (no Bad).
func AllGood(rows []HostRow) bool {
	return !slices.ContainsFunc(rows, func(r HostRow) bool { return r.Bad != "" })
}
