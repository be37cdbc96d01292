//go:build !vmtest

package netns_test

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/netagent/netagent/agent/snapshot"
	"github.com/netagent/netagent/internal/etcdtest"
	"github.com/netagent/netagent/store"
)

// storedSnapshot reads h1's published snapshot (snapshot.ReadStored, as
// a rollout's pre-flight does).
func (f *fleetEnv) storedSnapshot() (*snapshot.Document, store.Version, error) {
	return snapshot.ReadStored(context.Background(), f.st, fleetLayout, "h1")
}

func hasLink(d *snapshot.Document, name string) bool {
	return d != nil && slices.ContainsFunc(d.Links, func(l snapshot.Link) bool { return l.Name == name })
}

// TestAgentDaemonFleetPublishesSnapshot: a fleet member run with
// --publish-snapshot publishes its host's snapshot to P/snapshots/h1 (no
// lease) and says so in its status; a plan against what it published of
// the documents it applied plans nothing, as on the host; another
// owner's link, which no status shows, is in the next snapshot; a
// snapshot too large for etcd is not published, the stale one is
// deleted and the status says why; once it fits again it is published.
func TestAgentDaemonFleetPublishesSnapshot(t *testing.T) {
	f := newFleetEnv(t, etcdtest.Options{})
	f.push(fleetLayout.HostDoc("h1", "10-uplink.json"), daemonUplinkFile)
	f.push(fleetLayout.GroupDoc("edge", "20-routes.json"), daemonRoutesFile)
	f.startAnyway(append(f.runArgs(), "--publish-snapshot", "1s")...)
	var first store.Version
	f.waitFor("the snapshot of the converged host in etcd, and in the status", func() (bool, string) {
		d, v, err := f.storedSnapshot()
		st, serr := f.fleetStatus()
		first = v
		ok := err == nil && serr == nil && st.Ready && slices.ContainsFunc(d.Addresses, func(a snapshot.Address) bool { return a.Prefix == "192.0.2.2/24" }) &&
			st.Snapshot != nil && st.Snapshot.Error == "" && st.Snapshot.Revision >= int64(v) && st.Snapshot.Bytes > 0
		return ok, fmt.Sprintf("%v %v %+v", err, serr, st.Snapshot)
	})
	d, _, _ := f.storedSnapshot()
	summary, err := exec.Command(f.bin, "fleet", "snapshot", "h1", "--etcd-endpoints", strings.Join(f.etcd.Endpoints(), ","),
		"--etcd-prefix", fleetLayout.Prefix).CombinedOutput()
	if err != nil {
		t.Fatalf("fleet snapshot h1: %v\n%s", err, summary)
	}
	t.Logf("fleet snapshot h1:\n%s", summary)
	checkDocExample(t, "docs/commands/netagent-fleet-snapshot.md", "fleet-snapshot", string(summary))
	dir := t.TempDir()
	snapFile := filepath.Join(dir, "h1.json")
	out, err := os.Create(snapFile)
	if err != nil {
		t.Fatal(err)
	}
	d.Write(out)
	out.Close()
	uplink, routes := filepath.Join(dir, "10-uplink.json"), filepath.Join(dir, "20-routes.json")
	os.WriteFile(uplink, []byte(daemonUplinkFile), 0o600)
	os.WriteFile(routes, []byte(daemonRoutesFile), 0o600)
	plan, perr := exec.Command(f.bin, "--state-dir", t.TempDir(), "plan", "--against", snapFile, uplink, routes).CombinedOutput()
	if perr != nil || !strings.Contains(string(plan), "no changes") {
		t.Errorf("plan --against the published snapshot of what the host applied: %v\n%s", perr, plan)
	}

	f.ip("link", "add", "other0", "type", "veth", "peer", "name", "other1")
	f.waitFor("another owner's link in a later snapshot", func() (bool, string) {
		d, v, err := f.storedSnapshot()
		return err == nil && v > first && hasLink(d, "other0"), fmt.Sprint(err, v)
	})

	big := make([]byte, 2*snapshot.MaxStored)
	rand.Read(big)
	bigFile := filepath.Join(f.stateDir, "big-record")
	if err := os.WriteFile(bigFile, big, 0o600); err != nil {
		t.Fatal(err)
	}
	f.waitFor("the too large snapshot refused, the stale one deleted, the status saying so", func() (bool, string) {
		_, _, err := f.storedSnapshot()
		st, serr := f.fleetStatus()
		return errors.Is(err, store.ErrNotFound) && serr == nil && st.Snapshot != nil && strings.Contains(st.Snapshot.Error, "larger than the store takes"),
			fmt.Sprintf("%v %+v", err, st.Snapshot)
	})
	os.Remove(bigFile)
	f.waitFor("the snapshot published again", func() (bool, string) {
		d, _, err := f.storedSnapshot()
		st, serr := f.fleetStatus()
		return err == nil && hasLink(d, "other0") && serr == nil && st.Snapshot != nil && st.Snapshot.Error == "", fmt.Sprintf("%v %+v", err, st.Snapshot)
	})
	f.stop()
	if _, _, err := f.storedSnapshot(); err != nil {
		t.Errorf("the snapshot went with the daemon: %v", err)
	}
}
