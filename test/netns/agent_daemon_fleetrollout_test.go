//go:build !vmtest

package netns_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/netagent/netagent/internal/etcdtest"
)

// TestAgentDaemonFleetRollout: three daemons, each in its own namespace,
// members of group edge of a real etcd. A rollout of two waves (canary
// h1, then the rest one at a time) run by `netagent fleet rollout start
// --follow` reaches every kernel and exits 0; a second rollout whose
// probe cannot pass (nobody answers 192.0.2.200) reverts on the canary,
// halts there and exits 1, and the other hosts are never pushed.
func TestAgentDaemonFleetRollout(t *testing.T) {
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
	dir := t.TempDir()
	write := func(name, data string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write("extra.json", `{"version": 1, "routes": [{"to": "203.0.113.0/24", "via": "192.0.2.1", "dev": "uplink0", "metric": 10}]}`)
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
	if code, out := rollout("bad", `"ping:192.0.2.200"`); code != 1 || !strings.Contains(out, "bad: halted") ||
		!strings.Contains(out, "wave canary: 1 hosts failed") {
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
