//go:build !nofleet

package main

import (
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/netagent/netagent/agent/member"
	"github.com/netagent/netagent/agent/versions"
	"github.com/netagent/netagent/internal/termsafe"
)

// runFleetStatus prints the hosts' statuses (member's Client.Statuses).
// Exit 0 when every host is Ready with a fresh status and converged to the
// current documents; 1 when one is not Ready, its status is older than
// --stale or unreadable, it is behind its documents, or a host with
// documents has none.
func runFleetStatus(g *globals, args []string) int {
	fs, c := fleetFlagSet(g, "status")
	asJSON := fs.Bool("json", false, "print the statuses as JSON: the list of fleet.Status as the hosts wrote them")
	stale := fs.Duration("stale", member.DefaultStale, "a status without a lease not rewritten for this long counts as not Ready (a leased status is live while it exists)")
	if code, ok := c.parse(g, fs, args, false); !ok {
		return code
	}
	ctx, done, code, ok := c.open(g, fs)
	if !ok {
		return code
	}
	defer done()
	rows, err := c.client.Statuses(ctx, time.Now(), *stale)
	if err != nil {
		return c.fail(g, "status", err)
	}
	if *asJSON {
		if writeJSON(g, member.Written(rows)) != nil {
			return exitInternal
		}
	} else {
		fleetStatusPrint(g.stdout, rows, time.Now())
	}
	if !member.AllGood(rows) {
		return exitFailed
	}
	return exitOK
}

// fleetStatusPrint writes the table: one line per host, then a summary.
func fleetStatusPrint(w io.Writer, rows []member.HostRow, now time.Time) {
	if len(rows) == 0 {
		fmt.Fprintln(w, "no hosts: no status and no host documents under the prefix")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "HOST\tVERSION\tREADY\tDEGRADED\tDOCUMENTS\tTRIAL\tLAST SEEN\tMESSAGE")
	ready := 0
	for _, r := range rows {
		fleetSanitize(&r)
		if r.Bad == "" {
			ready++
		}
		s := r.Status
		if s == nil {
			fmt.Fprintf(tw, "%s\t-\t-\t-\t-\t-\t-\t%s\n", r.Host, r.Bad)
			continue
		}
		version := "-"
		if s.Version > 0 {
			version = fmt.Sprintf("%d (%s)", s.Version, versions.Short(s.Digest))
		}
		readyCol := statusYesNo(s.Ready)
		if s.Ready && r.Stale() {
			readyCol = "stale"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Host, version, readyCol, statusYesNo(s.Degraded),
			r.Documents(), r.Trial(), r.LastSeen(now), r.Message())
	}
	tw.Flush()
	fmt.Fprintf(w, "%d of %d hosts ready and current\n", ready, len(rows))
}

// fleetSanitize escapes what the hosts wrote (and the keys they wrote it
// under) for a terminal, for the table only (the JSON is another branch).
func fleetSanitize(r *member.HostRow) {
	r.Host, r.Bad = termsafe.String(r.Host), termsafe.String(r.Bad)
	termsafe.Sanitize(&r.Behind)
	termsafe.Sanitize(r.Status)
}
