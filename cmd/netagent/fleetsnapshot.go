//go:build !nofleet

package main

import (
	"errors"
	"fmt"

	"github.com/netagent/netagent/agent/snapshot"
	"github.com/netagent/netagent/fleet"
)

func init() {
	fleetSubs["snapshot"] = fleetSub{
		"print a host's published snapshot (PREFIX/snapshots/HOST), checked as plan --against checks it (docs/fleet.md, Snapshots)",
		"[--json] HOST", runFleetSnapshot}
}

// runFleetSnapshot prints HOST's published snapshot (snapshot.ReadStored):
// a summary, or with --json the document as `netagent snapshot` writes
// it (what `plan --against` takes). Exit 1 when the host has published
// none or what it published is refused (too large, not gzip, not a
// valid document: the error names the JSON path).
func runFleetSnapshot(g *globals, args []string) int {
	fs, c := fleetFlagSet(g, "snapshot")
	asJSON := fs.Bool("json", false, "print the document as JSON, as `netagent snapshot` writes it (for plan --against)")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() != 1 {
		return usageError(g, fs, "which host? fleet snapshot HOST")
	}
	host := fs.Arg(0)
	if err := fleet.CheckName("host", host); err != nil {
		return usageError(g, fs, err.Error())
	}
	if err := c.check(false, false); err != nil {
		return usageError(g, fs, err.Error())
	}
	ctx, done, code, ok := c.open(g, fs)
	if !ok {
		return code
	}
	defer done()
	d, v, err := snapshot.ReadStored(ctx, c.client.Store(), c.client.Layout(), host)
	if errors.Is(err, snapshot.ErrInvalidStored) {
		fmt.Fprintf(g.stderr, "netagent: fleet snapshot: %v\n", err)
		return exitFailed
	}
	if err != nil {
		return c.fail(g, "snapshot", err)
	}
	if *asJSON {
		if d.Write(g.stdout) != nil {
			return exitInternal
		}
		return exitOK
	}
	fmt.Fprintf(g.stdout, "host %s: snapshot at store version %d\n", host, v)
	d.Summary(g.stdout)
	return exitOK
}
