//go:build !vmtest

package netns_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/netagent/netagent/agent/member"
	"github.com/netagent/netagent/internal/etcdtest"
)

// fleetNeverProbe is a probe that never passes and still judges a fleet
// trial: it cannot run before the change either (no link lan9: not a
// failure of the probe, so the pre-check counts it), unlike a ping nobody
// answers, which fails before the change too and so does not count.
const fleetNeverProbe = "arping:192.0.2.200@lan9"

// TestAgentDaemonFleetTrialReverts: a trial pushed to the daemon's group
// with `netagent fleet push --try` whose probe cannot pass
// (fleetNeverProbe) is applied, reverted to the
// group's previous document at the probe's failure or its timeout, and
// reported reverted in etcd with the reason; a plain push then applies.
func TestAgentDaemonFleetTrialReverts(t *testing.T) {
	f := newFleetEnv(t, etcdtest.Options{})
	f.startWithGroupRoutes()

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
	push("--try", "--trial-timeout", "6s", "--probe", fleetNeverProbe)
	f.waitFor("the trial reverted, in etcd", func() (bool, string) {
		st, err := f.fleetStatus()
		return err == nil && st.Trial != nil && st.Trial.State == member.FleetTrialReverted &&
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

// TestAgentDaemonFleetTrialKilled: a daemon killed (SIGKILL) while a
// fleet trial is pending, with etcd: the trial (the host's bridge lan1
// set down) made the kernel drop a route someone else had put through
// it; at the next start the kernel is put back from the trial's
// journal (that route too, which no document declares), the previous
// documents apply, the trial counts as reverted and is not tried again;
// the state directory holds no fleet-trials.json: the trial and its
// revert target are in its store.
func TestAgentDaemonFleetTrialKilled(t *testing.T) {
	host := func(state string) string {
		return `{"version": 1, "interfaces": [{"name": "uplink0", "type": "physical", "addresses": ["192.0.2.2/24"]},
  {"name": "lan1", "type": "bridge", "mac": "02:00:00:00:51:01", "bridge": {"stp": false}` + state + `, "addresses": ["10.51.0.1/24"]}]}`
	}
	f := newFleetEnv(t, etcdtest.Options{})
	f.push(fleetLayout.HostDoc("h1", "10-uplink.json"), host(""))
	f.push(fleetLayout.GroupDoc("edge", "20-routes.json"), daemonRoutesFile)
	f.startAnyway(f.runArgs()...)
	f.waitFor("the group's route and the bridge", func() (bool, string) {
		_, ok := f.route("198.51.100.0/24")
		return ok && f.hasAddressOn("lan1", "10.51.0.1/24"), f.ip("route") + f.ip("addr")
	})
	f.ip("route", "add", "10.70.0.0/16", "via", "10.51.0.9", "dev", "lan1", "proto", "static")

	dir := t.TempDir()
	file, routes := filepath.Join(dir, "10-uplink.json"), filepath.Join(dir, "20-routes.json")
	for path, doc := range map[string]string{file: host(`, "state": "down"`), routes: daemonRoutesFile} {
		if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	argv := []string{"fleet", "push", "--etcd-endpoints", strings.Join(f.etcd.Endpoints(), ","), "--etcd-prefix", fleetLayout.Prefix,
		"--host", "h1", "--with", routes, "--try", "--trial-timeout", "10m", "--probe-timeout", "10m", "--probe", fleetNeverProbe, file}
	if out, err := exec.Command(f.bin, argv...).CombinedOutput(); err != nil {
		t.Fatalf("fleet push --try: %v\n%s", err, out)
	}
	f.waitFor("the trial applied: lan1 down, the foreign route dropped", func() (bool, string) {
		_, ok := f.route("10.70.0.0/16")
		return !ok && !strings.Contains(f.ip("link", "show", "lan1"), "<BROADCAST,MULTICAST,UP"), f.ip("route") + f.ip("link", "show", "lan1")
	})
	f.waitFor("the trial pending, in etcd", func() (bool, string) {
		st, err := f.fleetStatus()
		return err == nil && st.Trial != nil && st.Trial.State == member.FleetTrialPending, fmt.Sprintf("%+v %v", st.Trial, err)
	})
	f.kill()
	if _, err := os.Stat(filepath.Join(f.stateDir, "fleet-trials.json")); !os.IsNotExist(err) {
		t.Errorf("fleet-trials.json: %v", err)
	}

	f.startAnyway(f.runArgs()...)
	f.waitFor("the trial reverted after the restart, in etcd", func() (bool, string) {
		st, err := f.fleetStatus()
		return err == nil && st.Ready && st.Trial != nil && st.Trial.State == member.FleetTrialReverted &&
			strings.Contains(st.Trial.Reason, "restarted"), fmt.Sprintf("%+v %v", st, err)
	})
	if r, ok := f.route("10.70.0.0/16"); !ok || r.Gateway != "10.51.0.9" || r.Protocol != "static" {
		t.Errorf("the foreign route the trial made the kernel drop is not back: %+v %v\n%s\n%s", r, ok, f.ip("route"), f.logs.String())
	}
	if _, ok := f.route("198.51.100.0/24"); !ok {
		t.Errorf("the previous documents' route is gone:\n%s", f.ip("route"))
	}
}

// hasAddressOn reports whether link holds cidr.
func (e *daemonEnv) hasAddressOn(link, cidr string) bool {
	e.t.Helper()
	return strings.Contains(e.ip("-br", "addr", "show", "dev", link), cidr)
}

// startWithGroupRoutes pushes h1's uplink and the group's routes and
// starts the daemon, returning once the group's route is in the kernel.
func (f *fleetEnv) startWithGroupRoutes() {
	f.t.Helper()
	f.push(fleetLayout.HostDoc("h1", "10-uplink.json"), daemonUplinkFile)
	f.push(fleetLayout.GroupDoc("edge", "20-routes.json"), daemonRoutesFile)
	f.startAnyway(f.runArgs()...)
	f.waitFor("the group's route", func() (bool, string) {
		_, ok := f.route("198.51.100.0/24")
		return ok, f.ip("route")
	})
}
