//go:build !vmtest

package netns_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/netagent/netagent/agent"
	"github.com/netagent/netagent/internal/etcdtest"
)

// TestAgentDaemonFleetTrialReverts: a trial pushed to the daemon's group
// with `netagent fleet push --try` whose ping probe cannot pass (an
// address on the uplink nobody answers) is applied, reverted to the
// group's previous document at the probe's failure or its timeout, and
// reported reverted in etcd with the reason; a plain push then applies.
func TestAgentDaemonFleetTrialReverts(t *testing.T) {
	f := newFleetEnv(t, etcdtest.Options{})
	f.push(fleetLayout.HostDoc("h1", "10-uplink.json"), daemonUplinkFile)
	f.push(fleetLayout.GroupDoc("edge", "20-routes.json"), daemonRoutesFile)
	f.startAnyway(f.runArgs()...)
	f.waitFor("the group's route", func() (bool, string) {
		_, ok := f.route("198.51.100.0/24")
		return ok, f.ip("route")
	})

	dir := t.TempDir()
	file, uplink := filepath.Join(dir, "20-routes.json"), filepath.Join(dir, "10-uplink.json")
	for path, doc := range map[string]string{file: daemonRoutes2File, uplink: daemonUplinkFile} {
		if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	push := func(args ...string) string {
		t.Helper()
		argv := append([]string{"fleet", "push", "--etcd-endpoints", strings.Join(f.etcd.Endpoints(), ","),
			"--etcd-prefix", fleetLayout.Prefix, "--group", "edge", "--with", uplink}, args...)
		out, err := exec.Command(f.bin, append(argv, file)...).CombinedOutput()
		if err != nil {
			t.Fatalf("fleet push %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	push("--try", "--trial-timeout", "6s", "--probe", "ping:192.0.2.200")
	f.waitFor("the trial reverted, in etcd", func() (bool, string) {
		st, err := f.fleetStatus()
		return err == nil && st.Trial != nil && st.Trial.State == agent.FleetTrialReverted &&
			st.Trial.Source == "groups/edge/20-routes.json" && st.Trial.Reason != "", fmt.Sprintf("%+v %v", st.Trial, err)
	})
	f.waitFor("the trial's route withdrawn", func() (bool, string) {
		_, ok := f.route("203.0.113.0/24")
		return !ok, f.ip("route")
	})
	if _, ok := f.route("198.51.100.0/24"); !ok {
		t.Fatalf("the previous document's route is gone:\n%s", f.ip("route"))
	}
	f.waitFor("Ready on the previous document", func() (bool, string) {
		st, err := f.fleetStatus()
		return err == nil && st.Ready, fmt.Sprintf("%+v %v", st, err)
	})

	push() // the plain document: applied
	f.waitFor("the plain push applied", func() (bool, string) {
		_, ok := f.route("203.0.113.0/24")
		return ok, f.ip("route")
	})
	f.waitFor("no trial in the status", func() (bool, string) {
		st, err := f.fleetStatus()
		return err == nil && st.Ready && st.Trial == nil, fmt.Sprintf("%+v %v", st, err)
	})
}
