//go:build !vmtest

package netns_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/netagent/netagent/agent/rollout"
	"github.com/netagent/netagent/internal/etcdtest"
)

// TestAgentDaemonFleetRollout: three daemons, each in its own namespace,
// members of group edge of a real etcd. A rollout of two waves (canary
// h1, then the rest one at a time) run by `netagent fleet rollout start
// --follow` reaches every kernel and exits 0; a second rollout whose
// probe cannot pass (fleetNeverProbe) reverts on the canary,
// halts there and exits 1, and the other hosts are never pushed.
func TestAgentDaemonFleetRollout(t *testing.T) {
	f, envs, endpoints, write := rolloutFleet(t)
	rollout := func(id, probes string) (int, string) {
		spec := write(id+".json", fmt.Sprintf(`{"rollout": %q, "document": "groups/edge/30-%s.json", "intent": "extra.json", "waves": [
			{"name": "canary", "hosts": ["h1"], "trialTimeout": "6s", "probes": [%s], "bake": "1s"},
			{"name": "rest", "percent": 100, "concurrency": 1, "trialTimeout": "6s", "probes": [%s]}]}`, id, id, probes, probes))
		cmd := exec.Command(f.bin, "fleet", "rollout", "start", "--follow", "--etcd-endpoints", endpoints, "--etcd-prefix", fleetLayout.Prefix, spec)
		out, _ := cmd.CombinedOutput()
		return cmd.ProcessState.ExitCode(), string(out)
	}
	if code, out := rollout("good", ""); code != 0 || !strings.Contains(out, "good: completed") {
		t.Fatalf("rollout good: exit %d\n%s", code, out)
	}
	for _, e := range envs {
		if _, ok := e.route("203.0.113.0/24"); !ok {
			t.Errorf("the rolled-out route is missing:\n%s", e.ip("route"))
		}
	}
	if code, out := rollout("bad", `"`+fleetNeverProbe+`"`); code != 1 || !strings.Contains(out, "bad: halted") ||
		!strings.Contains(out, "wave canary: 1 host failed") {
		t.Fatalf("rollout bad: exit %d\n%s", code, out)
	}
	keys := f.keysUnder(t, fleetLayout.Hosts())
	for _, h := range []string{"h2", "h3"} {
		if _, ok := keys[fleetLayout.HostDoc(h, "30-bad.json")]; ok {
			t.Errorf("%s was pushed the halted rollout", h)
		}
	}
	if _, ok := keys[fleetLayout.HostDoc("h1", "30-bad.json")]; !ok {
		t.Errorf("the canary was not pushed: %v", keys)
	}
}

// rolloutFleet is three daemons (h1, h2, h3) in namespaces of their own,
// members of group edge of a real etcd, converged to their uplink and the
// group's route; and write, which writes a file of the test's directory.
func rolloutFleet(t *testing.T) (*fleetEnv, []*daemonEnv, string, func(name, data string) string) {
	t.Helper()
	f := newFleetEnv(t, etcdtest.Options{})
	envs := []*daemonEnv{f.daemonEnv, daemonNewEnv(t), daemonNewEnv(t)}
	endpoints := strings.Join(f.etcd.Endpoints(), ",")
	for i, e := range envs {
		host := fmt.Sprintf("h%d", i+1)
		f.push(fleetLayout.HostDoc(host, "10-uplink.json"), daemonUplinkFile)
		e.startAnyway("--etcd-endpoints", endpoints, "--etcd-prefix", fleetLayout.Prefix, "--hostname", host, "--group", "edge", "--status-ttl", "3s")
	}
	f.push(fleetLayout.GroupDoc("edge", "20-routes.json"), daemonRoutesFile)
	for _, e := range envs {
		e.waitFor("the group's route", func() (bool, string) {
			_, ok := e.route("198.51.100.0/24")
			return ok, e.ip("route")
		})
	}
	write := fileWriter(t)
	write("extra.json", `{"version": 1, "routes": [{"to": "203.0.113.0/24", "via": "192.0.2.1", "dev": "uplink0", "metric": 10}]}`)
	return f, envs, endpoints, write
}

// fileWriter is write(name, data), which writes a file of a directory of
// t's (mode 0600) and returns its path.
func fileWriter(t *testing.T) func(name, data string) string {
	dir := t.TempDir()
	return func(name, data string) string {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
}

// keysUnder lists the keys under prefix.
func (f *fleetEnv) keysUnder(t *testing.T, prefix string) map[string]bool {
	t.Helper()
	entries, _, err := f.st.ListKeys(context.Background(), prefix)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, e := range entries {
		out[e.Key] = true
	}
	return out
}

// TestAgentDaemonFleetRolloutKilled: the controller (`fleet rollout start
// --follow`) killed with SIGKILL in the middle of the second wave; a
// controller started again at once is refused (exit 5: the dead one's
// lease), one started after the lease's TTL completes the rollout, and
// etcd's history shows each host's key written exactly once.
func TestAgentDaemonFleetRolloutKilled(t *testing.T) {
	f, envs, endpoints, write := rolloutFleet(t)
	spec := write("r.json", `{"rollout": "r", "document": "groups/edge/30-r.json", "intent": "extra.json", "waves": [
		{"name": "canary", "hosts": ["h1"], "trialTimeout": "20s", "bake": "1s"},
		{"name": "rest", "percent": 100, "concurrency": 1, "trialTimeout": "20s"}]}`)
	_, from, err := f.st.ListKeys(context.Background(), fleetLayout.Hosts())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w, err := f.st.Watch(ctx, fleetLayout.Hosts(), from)
	if err != nil {
		t.Fatal(err)
	}
	controller := func() *exec.Cmd {
		return exec.Command(f.bin, "fleet", "rollout", "start", "--follow", "--etcd-endpoints", endpoints, "--etcd-prefix", fleetLayout.Prefix, spec)
	}
	first := controller()
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	f.waitFor("the second wave under way", func() (bool, string) {
		s, _, err := rollout.Load(context.Background(), f.st, fleetLayout, "r")
		if err != nil || len(s.Waves) < 2 {
			return false, fmt.Sprint(err)
		}
		for _, h := range s.Waves[1].Hosts {
			if hs := s.Hosts[h]; hs != nil && hs.State != rollout.HostPushing {
				return true, ""
			}
		}
		return false, fmt.Sprintf("%+v", s.Hosts)
	})
	first.Process.Signal(syscall.SIGKILL)
	first.Wait()
	if s, _, err := rollout.Load(context.Background(), f.st, fleetLayout, "r"); err == nil {
		t.Logf("killed in wave %d (%s): %s", s.Wave, s.Phase, rollout.Summarize(s, time.Now()).Waves[1].CountsText())
	}
	if out, err := controller().CombinedOutput(); exitCode(err) != 5 || !strings.Contains(string(out), "lease") {
		t.Fatalf("a controller within the dead one's lease: %v\n%s", err, out)
	}
	time.Sleep(rollout.LeaseTTL + time.Second)
	if out, err := controller().CombinedOutput(); err != nil || !strings.Contains(string(out), "r: completed") {
		t.Fatalf("the controller started again: %v\n%s", err, out)
	}
	puts := map[string]int{}
	for len(puts) < 3 {
		select {
		case ev := <-w.C:
			if strings.HasSuffix(ev.Entry.Key, "/30-r.json") {
				puts[ev.Entry.Key]++
			}
		case <-time.After(2 * time.Second):
			t.Fatalf("the watch saw %v", puts)
		}
	}
	drain := time.After(time.Second)
	for done := false; !done; {
		select {
		case ev := <-w.C:
			if strings.HasSuffix(ev.Entry.Key, "/30-r.json") {
				puts[ev.Entry.Key]++
			}
		case <-drain:
			done = true
		}
	}
	for k, n := range puts {
		if n != 1 {
			t.Errorf("%s written %d times", k, n)
		}
	}
	for _, e := range envs {
		if _, ok := e.route("203.0.113.0/24"); !ok {
			t.Errorf("the rolled-out route is missing:\n%s", e.ip("route"))
		}
	}
}

func exitCode(err error) int {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}
