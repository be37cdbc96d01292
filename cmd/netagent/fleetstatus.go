package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/netagent/netagent/agent/versions"
	"github.com/netagent/netagent/fleet"
	"github.com/netagent/netagent/internal/termsafe"
	"github.com/netagent/netagent/store"
)

// fleetDefaultStale: a status without a lease (fleet.Status.Lease: a
// daemon from before leased statuses were written only on change, or a
// store without leases) not rewritten for this long is stale. Those
// daemons rewrote their status at every renewal (5 s by default), so a
// minute is twelve missed renewals, or a clock off by as much. A leased
// status is never stale: it exists while its host renews the lease.
const fleetDefaultStale = time.Minute

// fleetHostRow is one host of `fleet status`: its status, or none (a host
// with documents whose agent has no status: never started, or stopped
// and its lease expired).
type fleetHostRow struct {
	host   string
	status *fleet.Status
	// behind lists the documents the host has not converged to yet (see
	// fleetBehind); nil when it has them all, or its status does not say.
	behind []string
	// bad says why the host counts as not done ("" when it is Ready, its
	// status fresh and its documents current).
	bad string
}

// runFleetStatus prints the hosts' statuses. Exit 0 when every host is
// Ready with a fresh status and converged to the current documents; 1
// when one is not Ready, its status is older than --stale or unreadable,
// it is behind its documents, or a host with documents has none.
func runFleetStatus(g *globals, args []string) int {
	fs, c := fleetFlagSet(g, "status")
	asJSON := fs.Bool("json", false, "print the statuses as JSON: the list of fleet.Status as the hosts wrote them")
	stale := fs.Duration("stale", fleetDefaultStale, "a status without a lease not rewritten for this long counts as not Ready (a leased status is live while it exists)")
	if code, ok := c.parse(g, fs, args, false); !ok {
		return code
	}
	rows, code := fleetReadStatus(g, fs, c, time.Now(), *stale)
	if rows == nil {
		return code
	}
	if *asJSON {
		list := []fleet.Status{}
		for _, r := range rows {
			if r.status != nil {
				list = append(list, *r.status)
			}
		}
		if writeJSON(g, list) != nil {
			return exitInternal
		}
	} else {
		fleetStatusPrint(g.stdout, rows, time.Now())
	}
	for _, r := range rows {
		if r.bad != "" {
			return exitFailed
		}
	}
	return exitOK
}

// fleetReadStatus reads every status and the hosts that have documents,
// one row per host in name order; nil and the exit code on failure.
func fleetReadStatus(g *globals, fs *flag.FlagSet, c *fleetConn, now time.Time, stale time.Duration) ([]fleetHostRow, int) {
	st, ctx, done, code, ok := c.open(g, fs)
	if !ok {
		return nil, code
	}
	defer done()
	l := c.layout()
	statuses, _, err := st.List(ctx, l.StatusDir())
	if err != nil {
		return nil, c.fail(g, "status", err)
	}
	// The documents' versions are all status compares them to: their
	// keys, not their (possibly large) intents.
	docs, _, err := st.ListKeys(ctx, l.Hosts())
	if err != nil {
		return nil, c.fail(g, "status", err)
	}
	groupDocs, _, err := st.ListKeys(ctx, l.Groups())
	if err != nil {
		return nil, c.fail(g, "status", err)
	}
	current := map[string]int64{} // every document's version, by source
	for _, e := range append(docs, groupDocs...) {
		if src := l.Source(e.Key); src != "" {
			current[src] = int64(e.Version)
		}
	}
	byHost := map[string]*fleetHostRow{}
	for _, e := range statuses {
		host := strings.TrimPrefix(e.Key, l.StatusDir()+"/")
		byHost[host] = fleetStatusRow(host, e, current, now, stale)
	}
	for _, e := range docs {
		host, _, _ := strings.Cut(strings.TrimPrefix(e.Key, l.Hosts()+"/"), "/")
		if _, ok := byHost[host]; !ok {
			byHost[host] = &fleetHostRow{host: host, bad: "no status: its agent is not running, or not reaching etcd"}
		}
	}
	rows := make([]fleetHostRow, 0, len(byHost))
	for _, r := range byHost {
		rows = append(rows, *r)
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].host < rows[j].host })
	return rows, exitOK
}

// fleetStatusRow judges one stored status against the current documents'
// versions, by source.
func fleetStatusRow(host string, e store.Entry, current map[string]int64, now time.Time, stale time.Duration) *fleetHostRow {
	r := &fleetHostRow{host: host}
	var s fleet.Status
	if err := json.Unmarshal(e.Value, &s); err != nil {
		r.bad = fmt.Sprintf("unreadable status (version %s): %v", e.Version, err)
		return r
	}
	r.status = &s
	r.behind = fleetBehind(host, s.Revisions, current)
	switch {
	case !s.Ready:
		r.bad = "not Ready"
	case stale > 0 && s.Lease == "" && now.Sub(s.Updated) > stale:
		r.bad = fmt.Sprintf("stale: last written %s ago", statusAgo(now, s.Updated))
	case len(r.behind) > 0:
		r.bad = "behind: " + strings.Join(r.behind, ", ")
	}
	return r
}

// fleetBehind compares the documents a host converged to (its status's
// Revisions, by source) with the current ones: a document changed since
// ("groups/g/x.json 42 < 57"), deleted since, or new in the host's own
// directory or in a group it took a document from. A host's groups are
// its daemon's flags, which etcd does not hold: a document new in a
// group the host had no document from is not seen. A status without
// Revisions says nothing (nil).
func fleetBehind(host string, converged, current map[string]int64) []string {
	if converged == nil {
		return nil
	}
	var behind []string
	dirs := map[string]bool{"hosts/" + host + "/": true}
	for src, rev := range converged {
		dir, _, _ := strings.Cut(src, "/")
		if dir == "groups" {
			g, _, _ := strings.Cut(strings.TrimPrefix(src, "groups/"), "/")
			dirs["groups/"+g+"/"] = true
		}
		switch cur, ok := current[src]; {
		case !ok:
			behind = append(behind, src+" deleted")
		case cur > rev:
			behind = append(behind, fmt.Sprintf("%s %d < %d", src, rev, cur))
		}
	}
	for src := range current {
		dir := src[:strings.LastIndex(src, "/")+1]
		if _, ok := converged[src]; !ok && dirs[dir] {
			behind = append(behind, src+" new")
		}
	}
	sort.Strings(behind)
	return behind
}

// fleetStatusPrint writes the table: one line per host, then a summary.
func fleetStatusPrint(w io.Writer, rows []fleetHostRow, now time.Time) {
	if len(rows) == 0 {
		fmt.Fprintln(w, "no hosts: no status and no host documents under the prefix")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "HOST\tVERSION\tREADY\tDEGRADED\tDOCUMENTS\tTRIAL\tLAST SEEN\tMESSAGE")
	ready := 0
	for _, r := range rows {
		r.sanitize()
		if r.bad == "" {
			ready++
		}
		s := r.status
		if s == nil {
			fmt.Fprintf(tw, "%s\t-\t-\t-\t-\t-\t-\t%s\n", r.host, r.bad)
			continue
		}
		version := "-"
		if s.Version > 0 {
			version = fmt.Sprintf("%d (%s)", s.Version, versions.Short(s.Digest))
		}
		readyCol := statusYesNo(s.Ready)
		if s.Ready && strings.HasPrefix(r.bad, "stale") {
			readyCol = "stale"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.host, version, readyCol, statusYesNo(s.Degraded),
			fleetDocsCell(r), fleetTrialCell(s.Trial), fleetLastSeen(s, now), fleetMessage(r))
	}
	tw.Flush()
	fmt.Fprintf(w, "%d of %d hosts ready and current\n", ready, len(rows))
}

// sanitize escapes what the hosts wrote (and the keys they wrote it
// under) for a terminal, for the table only (the JSON is another branch).
func (r *fleetHostRow) sanitize() {
	r.host, r.bad = termsafe.String(r.host), termsafe.String(r.bad)
	termsafe.Sanitize(&r.behind)
	termsafe.Sanitize(r.status)
}

// fleetLastSeen is the LAST SEEN cell: a leased status is live, its
// host seen within the lease's TTL ("< 15s ago"); another was seen when
// it was written.
func fleetLastSeen(s *fleet.Status, now time.Time) string {
	if s.Lease != "" {
		return "< " + s.Lease + " ago"
	}
	return statusAgo(now, s.Updated) + " ago"
}

// fleetDocsCell says whether the host converged to its current
// documents: "current", "N behind", or "-" when its status does not say.
func fleetDocsCell(r fleetHostRow) string {
	switch {
	case r.status.Revisions == nil:
		return "-"
	case len(r.behind) > 0:
		return fmt.Sprintf("%d behind", len(r.behind))
	}
	return "current"
}

// fleetMessage is what the MESSAGE column says: why a stale or behind
// host is counted so, else the first condition that has a message.
func fleetMessage(r fleetHostRow) string {
	if strings.HasPrefix(r.bad, "stale") || strings.HasPrefix(r.bad, "behind") {
		return r.bad
	}
	for _, c := range r.status.Conditions {
		if c.Message != "" {
			return c.Type + ": " + c.Message
		}
	}
	return ""
}

func fleetTrialCell(t *fleet.Trial) string {
	if t == nil {
		return "-"
	}
	s := fmt.Sprintf("%s %s@%d", t.State, t.Source, t.Revision)
	if t.Reason != "" {
		s += " (" + t.Reason + ")"
	}
	return s
}
