//go:build !vmtest

package netns_test

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/netagent/netagent/agent/rollout"
	"github.com/netagent/netagent/internal/etcdtest"
	"github.com/netagent/netagent/store"
)

// TestAgentDaemonFleetRolloutPreflightCritical: a real daemon publishes
// its snapshot (--publish-snapshot); a rollout whose document would take
// its uplink0, a link the rollout marks critical, down is planned against
// that published snapshot by `fleet controller`'s pre-flight: the wave is
// held (awaiting approval (pre-flight), h1 critical: uplink0 goes down)
// and h1's key is not written until an operator acts. Excluded, the
// rollout completes without touching the host; in a second rollout,
// approved, h1 is pushed, its trial fails its probe and reverts, uplink0
// is up again.
func TestAgentDaemonFleetRolloutPreflightCritical(t *testing.T) {
	f := newFleetEnv(t, etcdtest.Options{})
	f.push(fleetLayout.HostDoc("h1", "10-uplink.json"), daemonUplinkFile)
	f.startAnyway(append(f.runArgs(), "--publish-snapshot", "1s")...)
	f.waitFor("h1 converged and its snapshot published", func() (bool, string) {
		_, _, err := f.storedSnapshot()
		st, serr := f.fleetStatus()
		return err == nil && serr == nil && st.Ready && f.hasAddress("192.0.2.2/24"), fmt.Sprint(err, serr)
	})
	key := fleetLayout.HostDoc("h1", "10-uplink.json")
	version := func() store.Version {
		e, err := f.st.Read(context.Background(), key)
		if err != nil {
			t.Fatal(err)
		}
		return e.Version
	}
	before := version()
	write := fileWriter(t)
	write("down.json", `{"version": 1, "interfaces": [{"name": "uplink0", "type": "physical", "state": "down", "addresses": ["192.0.2.2/24"]}]}`)
	endpoints := strings.Join(f.etcd.Endpoints(), ",")
	cli := func(args ...string) (string, error) {
		out, err := exec.Command(f.bin, append([]string{"fleet"}, append(args, "--etcd-endpoints", endpoints, "--etcd-prefix", fleetLayout.Prefix)...)...).CombinedOutput()
		return string(out), err
	}
	ctrl := exec.Command(f.bin, "fleet", "controller", "--poll", "500ms", "--etcd-endpoints", endpoints, "--etcd-prefix", fleetLayout.Prefix)
	ctrl.Stdout, ctrl.Stderr = f.logs, f.logs
	if err := ctrl.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if ctrl.ProcessState == nil {
			ctrl.Process.Kill()
			ctrl.Wait()
		}
	})
	waitRollout := func(id, what string, cond func(*rollout.State) bool) {
		t.Helper()
		f.waitForWithin(time.Minute, what, func() (bool, string) {
			s, _, err := rollout.Load(context.Background(), f.st, fleetLayout, id)
			if err != nil {
				return false, err.Error()
			}
			return cond(s), fmt.Sprintf("%s %s %+v", s.Phase, s.Reason, rollout.Summarize(s, time.Now()).Waves)
		})
	}
	held := func(id string) {
		t.Helper()
		spec := write(id+".rollout.json", fmt.Sprintf(`{"rollout": %q, "document": "10-uplink.json", "intent": "down.json", "critical": ["uplink0"],
			"waves": [{"name": "w", "hosts": ["h1"], "trialTimeout": "4s", "probes": [%q]}]}`, id, fleetNeverProbe))
		if out, err := cli("rollout", "start", spec); err != nil {
			t.Fatalf("start %s: %v\n%s", id, err, out)
		}
		waitRollout(id, "the pre-flight to hold the wave", func(s *rollout.State) bool { return len(s.Waves) == 1 && s.Waves[0].Preflighted == 1 })
		out, err := cli("rollout", "status", id)
		if err != nil || !strings.Contains(out, "awaiting approval (pre-flight)") || !strings.Contains(out, "planned 1/1, flagged 1") ||
			!strings.Contains(out, "pre-flight w: h1 critical: uplink0 goes down") {
			t.Fatalf("status %s: %v\n%s", id, err, out)
		}
		t.Logf("status:\n%s", out)
		time.Sleep(2 * time.Second) // a few of the controller's looks: it pushes nothing
		if v := version(); v != before {
			t.Fatalf("the held wave wrote h1's key (version %d, was %d)", v, before)
		}
	}

	held("crit-x")
	if out, err := cli("rollout", "exclude", "crit-x", "h1"); err != nil {
		t.Fatalf("exclude: %v\n%s", err, out)
	}
	waitRollout("crit-x", "the rollout to complete without h1", func(s *rollout.State) bool { return s.Phase == rollout.PhaseCompleted })
	if s, _, _ := rollout.Load(context.Background(), f.st, fleetLayout, "crit-x"); s.Hosts["h1"] != nil || version() != before {
		t.Errorf("h1 excluded was pushed: %+v", s.Hosts["h1"])
	}

	held("crit-a")
	if out, err := cli("rollout", "approve", "crit-a"); err != nil {
		t.Fatalf("approve: %v\n%s", err, out)
	}
	waitRollout("crit-a", "h1 pushed, its trial reverted, the rollout halted", func(s *rollout.State) bool {
		return s.Phase == rollout.PhaseHalted && s.Hosts["h1"] != nil && s.Hosts["h1"].State == rollout.HostReverted
	})
	if version() == before {
		t.Error("the approved wave did not push h1")
	}
	f.waitFor("uplink0 up again after the revert", func() (bool, string) {
		out := f.ip("-br", "link", "show", "uplink0")
		return strings.Contains(out, "UP") && !strings.Contains(out, "DOWN"), out
	})
	ctrl.Process.Signal(syscall.SIGTERM)
	if err := waitExit(ctrl, 20*time.Second); err != nil {
		t.Errorf("the controller on SIGTERM: %v", err)
	}
}
