package oneshot

import (
	"context"
	"fmt"
	"os"

	"github.com/netagent/netagent/agent/snapshot"
)

// Snapshot is `netagent snapshot`: the namespace's whole state with the
// records of its state directory (snapshot.Take). It changes nothing.
func Snapshot(ctx context.Context, o *Options) (*snapshot.Document, error) {
	return snapshot.Take(ctx, o.Netns, o.StateDir)
}

// PlanAgainst is `netagent plan --against SNAPSHOT`: Plan over fakes of
// the namespace the snapshot file holds, its records in a temporary
// state directory (removed before it returns), with o's other options.
// It reaches no kernel.
func PlanAgainst(ctx context.Context, o *Options, snapshotFile string, paths []string) (*Planned, error) {
	d, err := snapshot.ReadFile(snapshotFile)
	if err != nil {
		return nil, err
	}
	in, err := Load(paths, o.Sized)
	if err != nil {
		return nil, err
	}
	if needsFacts(in.Files, o.ResolvConf) {
		return nil, fmt.Errorf("%s: %w: the intent needs DNS (--resolv-conf), DHCP or router advertisements, which run only on the host",
			snapshotFile, snapshot.ErrNotHeld)
	}
	dir, err := os.MkdirTemp("", "netagent-against-")
	if err != nil {
		return nil, fmt.Errorf("making a state directory for the snapshot: %w", err)
	}
	defer os.RemoveAll(dir)
	f, err := d.Load(dir)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", snapshotFile, err)
	}
	offline := *o
	offline.Fake, offline.StateDir, offline.Netns, offline.Write, offline.Sized = f, dir, d.Netns, false, nil
	return Plan(ctx, &offline, paths)
}
