//go:build !vmtest

package netns_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/netagent/netagent/agent/rollout"
	"github.com/netagent/netagent/agent/snapshot"
	"github.com/netagent/netagent/internal/etcdtest"
	"github.com/netagent/netagent/internal/netnsx"
	"github.com/netagent/netagent/internal/testns"
	"github.com/netagent/netagent/store"
	"github.com/netagent/netagent/store/etcd"
)

// bigFleetHosts is how many daemons TestAgentDaemonFleetRolloutTwenty runs.
const bigFleetHosts = 20

// bigFleet is bigFleetHosts daemons, each in a namespace of its own whose
// uplink0 is a veth to a port of bridge br0 in a shared upstream namespace
// (192.0.2.1 and 192.0.2.254 on br0, 198.51.100.1 on its lo), members of
// group edge of a real etcd, h1 and h2 labelled ring=canary, the others
// ring=main.
type bigFleet struct {
	*fleetEnv
	up        *netnsx.Target
	hosts     []*daemonEnv
	names     []string
	endpoints string
	write     func(name, data string) string
}

func newBigFleet(t *testing.T) *bigFleet {
	t.Helper()
	srv := etcdtest.Start(t, etcdtest.Options{})
	st, err := etcd.New(etcd.Config{Endpoints: srv.Endpoints(), RequestTimeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	b := &bigFleet{up: testns.New(t), endpoints: strings.Join(srv.Endpoints(), ",")}
	upx := func(args ...string) { testns.Exec(t, b.up, "ip", args...) }
	upx("link", "add", "br0", "type", "bridge")
	upx("link", "set", "br0", "up")
	upx("addr", "add", "192.0.2.1/24", "dev", "br0")
	upx("addr", "add", "192.0.2.254/24", "dev", "br0")
	upx("addr", "add", "198.51.100.1/32", "dev", "lo")
	for i := 1; i <= bigFleetHosts; i++ {
		e := daemonBareEnv(t)
		e.exec("sysctl", "-qw", "net.ipv6.conf.all.accept_dad=0", "net.ipv6.conf.default.accept_dad=0")
		port := fmt.Sprintf("up%d", i)
		e.ip("link", "add", "uplink0", "type", "veth", "peer", "name", port, "netns", b.up.Name)
		e.ip("link", "set", "uplink0", "up")
		upx("link", "set", port, "master", "br0")
		upx("link", "set", port, "up")
		b.hosts, b.names = append(b.hosts, e), append(b.names, fmt.Sprintf("h%d", i))
	}
	b.fleetEnv = &fleetEnv{daemonEnv: b.hosts[0], etcd: srv, st: st}
	b.push(fleetLayout.GroupDoc("edge", "20-routes.json"), daemonRoutesFile)
	for i, e := range b.hosts {
		b.push(fleetLayout.HostDoc(b.names[i], "10-uplink.json"), fmt.Sprintf(`{"version": 1,
		  "interfaces": [{"name": "uplink0", "type": "physical", "addresses": ["192.0.2.%d/24"]}]}`, 10+i))
		ring := "main"
		if i < 2 {
			ring = "canary"
		}
		e.startAnyway("--etcd-endpoints", b.endpoints, "--etcd-prefix", fleetLayout.Prefix, "--hostname", b.names[i],
			"--group", "edge", "--label", "ring="+ring, "--status-ttl", "3s")
	}
	for _, e := range b.hosts {
		e.waitFor("the group's route", func() (bool, string) {
			_, ok := e.route("198.51.100.0/24")
			return ok, e.ip("route")
		})
	}
	b.write = fileWriter(t)
	b.write("good.json", `{"version": 1, "routes": [{"to": "203.0.113.0/24", "via": "192.0.2.1", "dev": "uplink0", "metric": 10}]}`)
	// Through 192.0.2.254: the probe's path, which a host with a wrong
	// neighbour entry for .254 loses.
	b.write("bad.json", `{"version": 1, "routes": [{"to": "198.51.100.0/25", "via": "192.0.2.254", "dev": "uplink0", "metric": 10}]}`)
	b.write("more.json", `{"version": 1, "routes": [{"to": "203.0.113.128/25", "via": "192.0.2.1", "dev": "uplink0", "metric": 10}]}`)
	b.write("etcd.json", `{"version": 1, "routes": [{"to": "203.0.113.64/26", "via": "192.0.2.1", "dev": "uplink0", "metric": 10}]}`)
	return b
}

// bigFleetTrial is the waves' trial timeout. A trial with probes is
// confirmed at its deadline only (its probes watched until then), so it
// sets the pace: with 20 s the test took 565 s (good 166, bad 53, kill
// 164, etcd 166); with 4 s 150 s (38, 14, 41, 40). 4 s leaves a host over
// 3 s to converge and pass its first probe round (milliseconds here).
const bigFleetTrial = "4s"

// spec writes a rollout document of three waves: the canaries by label,
// half the pool, the rest.
func (b *bigFleet) spec(id, intent, halfTolerance string) string {
	probes := `["ping:198.51.100.1"]`
	return b.write(id+".rollout.json", fmt.Sprintf(`{"rollout": %q, "document": "groups/edge/30-%s.json", "intent": %q, "waves": [
		{"name": "canary", "labels": {"ring": "canary"}, "trialTimeout": %[4]q, "probes": %[5]s, "bake": "1s"},
		{"name": "half", "percent": 50, "concurrency": 2, "trialTimeout": %[4]q, "probes": %[5]s, "failureTolerance": %[6]s, "bake": "1s"},
		{"name": "rest", "percent": 100, "concurrency": 4, "trialTimeout": %[4]q, "probes": %[5]s, "failureTolerance": 1}]}`,
		id, id, intent, bigFleetTrial, probes, halfTolerance))
}

func (b *bigFleet) cli(args ...string) *exec.Cmd {
	return exec.Command(b.bin, append([]string{"fleet"}, append(args, "--etcd-endpoints", b.endpoints, "--etcd-prefix", fleetLayout.Prefix)...)...)
}

// revision is the cluster's revision now.
func (b *bigFleet) revision(t *testing.T) store.Version {
	t.Helper()
	_, rev, err := b.st.ListKeys(context.Background(), fleetLayout.Hosts())
	if err != nil {
		t.Fatal(err)
	}
	return rev
}

// writesSince reads etcd's history after from: the writes (puts and
// deletes) of each host's key of document doc.
func (b *bigFleet) writesSince(t *testing.T, from store.Version, doc string) map[string]int {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w, err := b.st.Watch(ctx, fleetLayout.Hosts(), from)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for {
		select {
		case ev := <-w.C:
			if strings.HasSuffix(ev.Entry.Key, "/"+doc) {
				out[ev.Entry.Key]++
			}
		case <-time.After(2 * time.Second):
			return out
		}
	}
}

func (b *bigFleet) load(t *testing.T, id string) *rollout.State {
	t.Helper()
	s, _, err := rollout.Load(context.Background(), b.st, fleetLayout, id)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// waitRollout waits until cond holds of rollout id's state.
func (b *bigFleet) waitRollout(id, what string, cond func(*rollout.State) bool) {
	b.t.Helper()
	b.waitForWithin(3*time.Minute, what, func() (bool, string) {
		s, _, err := rollout.Load(context.Background(), b.st, fleetLayout, id)
		if err != nil {
			return false, err.Error()
		}
		return cond(s), fmt.Sprintf("%s %s %+v", s.Phase, s.Reason, rollout.Summarize(s, time.Now()).Waves)
	})
}

// pendingIn reports whether a host of wave i is on trial.
func pendingIn(s *rollout.State, i int) bool {
	if len(s.Waves) <= i {
		return false
	}
	for _, h := range s.Waves[i].Hosts {
		if hs := s.Hosts[h]; hs != nil && hs.State == rollout.HostPending {
			return true
		}
	}
	return false
}

// TestAgentDaemonFleetRolloutTwenty: 20 real daemons, each in its own
// namespace with its own uplink veth to a shared upstream namespace, and
// real probes through it. One fleet, four rollouts in turn:
//
//   - good: three waves (canaries by label, half, the rest) converge on
//     every kernel;
//   - bad: a route through a gateway three hosts of the second wave cannot
//     reach (a wrong neighbour entry): their trials revert on the probe,
//     the rollout halts in that wave with at most the wave's concurrency
//     pushed beyond the failure that broke the tolerance, the last wave
//     never pushed;
//   - kill: `fleet controller` (metrics on loopback) SIGKILLed mid-wave;
//     a second one takes over once the lease expires, completes it, serves
//     the metrics and exits 0 on SIGTERM, giving its lease up; etcd's
//     history shows one write per host key;
//   - etcd: etcd SIGKILLed mid-wave under `start --follow` and restarted:
//     the rollout completes, one write per host key, every kernel has it;
//   - preflight: two hosts publish a snapshot; a document that conflicts
//     with their own is flagged by the pre-flight and holds the wave (the
//     third, without a snapshot, counted) until they are excluded; the
//     third is then pushed and fails as predicted.
func TestAgentDaemonFleetRolloutTwenty(t *testing.T) {
	began := time.Now()
	b := newBigFleet(t)
	t.Logf("%d daemons converged in %s", bigFleetHosts, time.Since(began).Round(time.Second))

	t.Run("good", func(t *testing.T) {
		from := b.revision(t)
		out, err := b.cli("rollout", "start", "--follow", b.spec("good", "good.json", "0")).CombinedOutput()
		if err != nil || !strings.Contains(string(out), "good: completed") {
			t.Fatalf("%v\n%s", err, out)
		}
		s := b.load(t, "good")
		if got := slices.Sorted(slices.Values(s.Waves[0].Hosts)); !slices.Equal(got, []string{"h1", "h2"}) {
			t.Errorf("canary wave %v, want the ring=canary hosts", got)
		}
		if sizes := []int{len(s.Waves[0].Hosts), len(s.Waves[1].Hosts), len(s.Waves[2].Hosts)}; !slices.Equal(sizes, []int{2, 8, 10}) {
			t.Errorf("wave sizes %v", sizes)
		}
		for i, e := range b.hosts {
			if _, ok := e.route("203.0.113.0/24"); !ok {
				t.Errorf("%s lacks the rolled-out route:\n%s", b.names[i], e.ip("route"))
			}
		}
		b.oneWriteEach(t, from, "30-good.json", bigFleetHosts)
	})

	t.Run("bad", func(t *testing.T) {
		// The half wave's hosts in the rollout's order; its 2nd, 4th and
		// 7th cannot reach 192.0.2.254.
		var pool []rollout.Candidate
		for _, h := range b.names[2:] {
			pool = append(pool, rollout.Candidate{Host: h})
		}
		order := rollout.Order("bad", pool)
		half := order[:8]
		bad := map[string]bool{half[1].Host: true, half[3].Host: true, half[6].Host: true}
		for i, e := range b.hosts {
			if bad[b.names[i]] {
				e.ip("neigh", "replace", "192.0.2.254", "lladdr", "02:00:00:00:00:99", "dev", "uplink0", "nud", "permanent")
			}
		}
		out, err := b.cli("rollout", "start", "--follow", b.spec("bad", "bad.json", "1")).CombinedOutput()
		if exitCode(err) != 1 || !strings.Contains(string(out), "bad: halted") || !strings.Contains(string(out), "wave half: 2 hosts failed") {
			t.Fatalf("exit %d\n%s", exitCode(err), out)
		}
		s := b.load(t, "bad")
		pushed, badPushed, reverted := 0, 0, 0
		for _, c := range half {
			hs := s.Hosts[c.Host]
			if hs == nil || hs.State == rollout.HostSkipped {
				continue
			}
			pushed++
			if hs.State == rollout.HostReverted {
				reverted++
			}
			if bad[c.Host] {
				badPushed++
				if hs.State != rollout.HostReverted && hs.State != rollout.HostPending {
					t.Errorf("%s (bad): %s %s", c.Host, hs.State, hs.Reason)
				}
			}
		}
		// Tolerance 1: the halt comes with the 2nd failure; the concurrency
		// (2) lets at most one more host be on trial meanwhile.
		if reverted != 2 || badPushed > 1+2 {
			t.Errorf("%d reverted, %d bad hosts pushed: want 2 reverted (tolerance 1, + 1) and at most 3 bad pushed", reverted, badPushed)
		}
		t.Logf("halt: %d of the half wave's 8 hosts pushed, %d of its 3 bad ones (tolerance 1, concurrency 2), %d reverted; %s",
			pushed, badPushed, reverted, s.Reason)
		for _, h := range s.Waves[0].Hosts {
			if s.Hosts[h].State != rollout.HostConfirmed {
				t.Errorf("canary %s: %s", h, s.Hosts[h].State)
			}
		}
		if len(s.Waves) != 2 {
			t.Errorf("%d waves started, want 2", len(s.Waves))
		}
		keys := b.keysUnder(t, fleetLayout.Hosts())
		for _, c := range order[8:] {
			if keys[fleetLayout.HostDoc(c.Host, "30-bad.json")] {
				t.Errorf("%s of the last wave was pushed", c.Host)
			}
		}
		for i, e := range b.hosts { // a bad host still on trial reverts by itself
			if bad[b.names[i]] {
				e.waitFor(b.names[i]+" without the route that broke its uplink", func() (bool, string) {
					_, has := e.route("198.51.100.0/25")
					return !has, e.ip("route")
				})
			}
		}
	})

	t.Run("kill", func(t *testing.T) {
		from := b.revision(t)
		spec := b.spec("kill", "more.json", "0")
		if out, err := b.cli("rollout", "start", spec).CombinedOutput(); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		addr := loopbackAddr(t)
		first := b.controller(addr)
		b.waitRollout("kill", "the last wave under way", func(s *rollout.State) bool { return pendingIn(s, 2) })
		first.Process.Signal(syscall.SIGKILL)
		first.Wait()
		s := b.load(t, "kill")
		t.Logf("controller killed in wave %d: %s", s.Wave, rollout.Summarize(s, time.Now()).Waves[s.Wave].CountsText())
		second := b.controller(addr)
		b.waitRollout("kill", "completed by the second controller", func(s *rollout.State) bool { return s.Phase == rollout.PhaseCompleted })
		metrics := scrape(t, "http://"+addr+"/metrics")
		for _, want := range []string{`netagent_rollout_hosts{rollout="kill",state="confirmed",wave="rest"} 10`,
			`netagent_rollout_halted_total{rollout="kill"} 0`} {
			if !strings.Contains(metrics, want) {
				t.Errorf("metrics lack %s:\n%s", want, metrics)
			}
		}
		second.Process.Signal(syscall.SIGTERM)
		if err := waitExit(second, 20*time.Second); err != nil {
			t.Errorf("the controller on SIGTERM: %v", err)
		}
		if b.keysUnder(t, fleetLayout.Rollouts())[fleetLayout.Rollouts()+"/kill/lease"] {
			t.Error("the controller stopped by SIGTERM left its lease")
		}
		b.oneWriteEach(t, from, "30-kill.json", bigFleetHosts)
		for i, e := range b.hosts {
			if _, ok := e.route("203.0.113.128/25"); !ok {
				t.Errorf("%s lacks the rolled-out route", b.names[i])
			}
		}
	})

	t.Run("etcd", func(t *testing.T) {
		from := b.revision(t)
		follow := b.cli("rollout", "start", "--follow", b.spec("etcd", "etcd.json", "0"))
		var out strings.Builder
		follow.Stdout, follow.Stderr = &out, &out
		if err := follow.Start(); err != nil {
			t.Fatal(err)
		}
		b.waitRollout("etcd", "the half wave under way", func(s *rollout.State) bool { return pendingIn(s, 1) })
		b.etcd.Kill()
		time.Sleep(3 * time.Second)
		b.etcd.Restart()
		if err := waitExit(follow, 4*time.Minute); err != nil || !strings.Contains(out.String(), "etcd: completed") {
			t.Fatalf("start --follow across etcd's restart: %v\n%s", err, out.String())
		}
		s := b.load(t, "etcd")
		for h, hs := range s.Hosts {
			if hs.State != rollout.HostConfirmed {
				t.Errorf("%s: %s %s", h, hs.State, hs.Reason)
			}
		}
		b.oneWriteEach(t, from, "30-etcd.json", bigFleetHosts)
		for i, e := range b.hosts {
			if _, ok := e.route("203.0.113.64/26"); !ok {
				t.Errorf("%s lacks the rolled-out route", b.names[i])
			}
		}
	})
	t.Run("preflight", func(t *testing.T) {
		// h3 and h4 publish a snapshot (`netagent snapshot` of their
		// namespace, as a member would); h5 does not.
		for _, i := range []int{2, 3} {
			e := b.hosts[i]
			out, err := exec.Command(e.bin, "--netns", e.tgt.Name, "--state-dir", e.stateDir, "snapshot").Output()
			if err != nil {
				t.Fatalf("snapshot of %s: %v", b.names[i], err)
			}
			doc, err := snapshot.Read(bytes.NewReader(out))
			if err != nil {
				t.Fatalf("snapshot of %s: %v", b.names[i], err)
			}
			stored, err := doc.EncodeStored() // as a member publishes it
			if err != nil {
				t.Fatal(err)
			}
			if _, err := b.st.WriteCAS(context.Background(), fleetLayout.Snapshot(b.names[i]), stored, store.NoVersion); err != nil {
				t.Fatal(err)
			}
		}
		// uplink0 is each host's own document's: a merge conflict.
		b.write("conflict.json", `{"version": 1, "interfaces": [{"name": "uplink0", "type": "physical", "mtu": 1400}]}`)
		spec := b.write("pre.rollout.json", `{"rollout": "pre", "document": "groups/edge/30-pre.json", "intent": "conflict.json",
			"waves": [{"name": "w", "hosts": ["h3", "h4", "h5"], "trialTimeout": "10s"}]}`)
		if out, err := b.cli("rollout", "start", spec).CombinedOutput(); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		ctrl := b.controller(loopbackAddr(t))
		b.waitRollout("pre", "the pre-flight to hold the wave", func(s *rollout.State) bool {
			return len(s.Waves) == 1 && s.Waves[0].Preflighted == 3
		})
		out, err := b.cli("rollout", "status", "pre").CombinedOutput()
		if err != nil || !strings.Contains(string(out), "awaiting approval (pre-flight)") || !strings.Contains(string(out), "planned 3/3, flagged 2, no snapshot 1") ||
			!strings.Contains(string(out), "pre-flight w: h3 fails:") || !strings.Contains(string(out), "pre-flight w: h4 fails:") {
			t.Fatalf("status: %v\n%s", err, out)
		}
		t.Logf("status:\n%s", out)
		checkDocExample(t, "docs/fleet.md", "rollout-status-preflight", string(out))
		time.Sleep(2 * time.Second) // a few of the controller's looks: it pushes nothing
		if keys := b.keysUnder(t, fleetLayout.Hosts()); keys[fleetLayout.HostDoc("h5", "30-pre.json")] || keys[fleetLayout.HostDoc("h3", "30-pre.json")] {
			t.Fatal("the held wave pushed")
		}
		for _, h := range []string{"h3", "h4"} {
			if out, err := b.cli("rollout", "exclude", "pre", h).CombinedOutput(); err != nil {
				t.Fatalf("exclude %s: %v\n%s", h, err, out)
			}
		}
		// h5 had no snapshot: pushed, its trial fails as the plans said.
		b.waitRollout("pre", "h5 to fail and the rollout to halt", func(s *rollout.State) bool { return s.Phase == rollout.PhaseHalted })
		s := b.load(t, "pre")
		if hs := s.Hosts["h5"]; hs == nil || hs.State != rollout.HostReverted || s.Hosts["h3"] != nil || s.Hosts["h4"] != nil {
			t.Errorf("hosts %+v", s.Hosts)
		}
		out, err = b.cli("rollout", "status", "pre").CombinedOutput()
		if err != nil {
			t.Fatalf("status: %v\n%s", err, out)
		}
		t.Logf("status:\n%s", out)
		checkDocExample(t, "docs/fleet.md", "rollout-status-halted", string(out))
		ctrl.Process.Signal(syscall.SIGTERM)
		if err := waitExit(ctrl, 20*time.Second); err != nil {
			t.Errorf("the controller on SIGTERM: %v", err)
		}
	})
	t.Logf("the whole test: %s", time.Since(began).Round(time.Second))
}

// oneWriteEach checks etcd's history since from: n host keys of doc, each
// written once.
func (b *bigFleet) oneWriteEach(t *testing.T, from store.Version, doc string, n int) {
	t.Helper()
	writes := b.writesSince(t, from, doc)
	if len(writes) != n {
		t.Errorf("%d host keys of %s written, want %d", len(writes), doc, n)
	}
	for k, c := range writes {
		if c != 1 {
			t.Errorf("%s written %d times", k, c)
		}
	}
}

// controller starts `fleet controller` serving its metrics on addr.
func (b *bigFleet) controller(addr string) *exec.Cmd {
	b.t.Helper()
	cmd := b.cli("controller", "--metrics-listen", addr, "--poll", "500ms")
	cmd.Stdout, cmd.Stderr = b.logs, b.logs
	if err := cmd.Start(); err != nil {
		b.t.Fatal(err)
	}
	b.t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	return cmd
}

// waitExit waits for cmd to exit within d (killing it after).
func waitExit(cmd *exec.Cmd, d time.Duration) error {
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return err
	case <-time.After(d):
		cmd.Process.Kill()
		<-done
		return fmt.Errorf("still running after %s", d)
	}
}

// loopbackAddr is a free loopback TCP address.
func loopbackAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// scrape GETs url (retrying while the server starts).
func scrape(t *testing.T, url string) string {
	t.Helper()
	var last error
	for range 50 {
		resp, err := http.Get(url)
		if err == nil {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			return string(body)
		}
		last = err
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("scraping %s: %v", url, last)
	return ""
}

// pingOut is the output of one ping from namespace ns.
func pingOut(ns, addr string) string {
	out, err := exec.Command("ip", "netns", "exec", ns, "ping", "-c1", "-W1", addr).CombinedOutput()
	return fmt.Sprintf("%s (%v)", out, err)
}
