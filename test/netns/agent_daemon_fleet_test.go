//go:build !vmtest

package netns_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/netagent/netagent/agent/status"
	"github.com/netagent/netagent/fleet"
	"github.com/netagent/netagent/internal/etcdtest"
	"github.com/netagent/netagent/store"
	"github.com/netagent/netagent/store/etcd"
)

// The daemon as a fleet member, against a real etcd (internal/etcdtest)
// and a real namespace.

var fleetLayout = fleet.Layout{Prefix: "/fleet-test"}

// fleetEnv is a daemon env with an etcd and a client of it (the pusher).
type fleetEnv struct {
	*daemonEnv
	etcd *etcdtest.Server
	st   *etcd.Store
}

func newFleetEnv(t *testing.T, opts etcdtest.Options) *fleetEnv {
	t.Helper()
	srv := etcdtest.Start(t, opts)
	cfg := etcd.Config{Endpoints: srv.Endpoints(), RequestTimeout: 2 * time.Second}
	if srv.TLS != nil {
		cfg.CAFile, cfg.CertFile, cfg.KeyFile = srv.TLS.CAFile, srv.TLS.CertFile, srv.TLS.KeyFile
	}
	st, err := etcd.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return &fleetEnv{daemonEnv: daemonNewEnv(t), etcd: srv, st: st}
}

// runArgs are the daemon's fleet flags: host h1 in group edge.
func (f *fleetEnv) runArgs() []string {
	args := []string{"--etcd-endpoints", strings.Join(f.etcd.Endpoints(), ","), "--etcd-prefix", fleetLayout.Prefix,
		"--hostname", "h1", "--group", "edge", "--status-ttl", "3s"}
	if tls := f.etcd.TLS; tls != nil {
		args = append(args, "--etcd-ca", tls.CAFile, "--etcd-cert", tls.CertFile, "--etcd-key", tls.KeyFile)
	}
	return args
}

// push writes a document, whatever version it has (retrying while etcd
// is coming back), and returns its revision.
func (f *fleetEnv) push(key, doc string) store.Version {
	f.t.Helper()
	deadline := time.Now().Add(daemonWait)
	for {
		v, err := f.tryPush(key, doc)
		if err == nil {
			return v
		}
		if time.Now().After(deadline) {
			f.t.Fatalf("pushing %s: %v", key, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func (f *fleetEnv) tryPush(key, doc string) (store.Version, error) {
	ctx := context.Background()
	expect := store.NoVersion
	e, err := f.st.Read(ctx, key)
	switch {
	case err == nil:
		expect = e.Version
	case !errors.Is(err, store.ErrNotFound):
		return 0, err
	}
	return f.st.WriteCAS(ctx, key, []byte(doc), expect)
}

// fleetStatus reads h1's status from etcd.
func (f *fleetEnv) fleetStatus() (fleet.Status, error) {
	var st fleet.Status
	e, err := f.st.Read(context.Background(), fleetLayout.Status("h1"))
	if err != nil {
		return st, err
	}
	return st, json.Unmarshal(e.Value, &st)
}

func degradedOf(st status.Status) status.Condition {
	for _, c := range st.Conditions {
		if c.Type == status.CondDegraded {
			return c
		}
	}
	return status.Condition{}
}

// kill ends the daemon with SIGKILL: no goodbye, no revoked lease.
func (e *daemonEnv) kill() {
	e.t.Helper()
	e.cmd.Process.Signal(syscall.SIGKILL)
	<-e.exited
	e.cmd, e.exited = nil, nil // waitFor: no daemon to exit
	// The socket of a killed daemon stays; the next start replaces it.
}

// TestAgentDaemonFleetMember: documents pushed to the host's key and to
// its group's reach the namespace's kernel and the status in etcd says
// so; etcd killed while the daemon watches withdraws nothing and shows
// Degraded (intent source unreachable), and after its restart a change
// another client wrote is applied and the daemon is Ready again, in etcd
// too; the status expires when the daemon is killed; a daemon started
// while etcd is down applies its last documents from the state directory.
func TestAgentDaemonFleetMember(t *testing.T) {
	f := newFleetEnv(t, etcdtest.Options{})
	f.push(fleetLayout.HostDoc("h1", "10-uplink.json"), daemonUplinkFile)
	f.push(fleetLayout.HostDoc("h2", "10-uplink.json"), `{"version": 1, "routes": [{"to": "10.2.0.0/16", "via": "192.0.2.1", "dev": "uplink0"}]}`)
	f.startAnyway(f.runArgs()...)
	f.waitFor("the host's document", func() (bool, string) { return f.hasAddress("192.0.2.2/24"), f.ip("addr") })

	// A push to the group.
	rev := f.push(fleetLayout.GroupDoc("edge", "20-routes.json"), daemonRoutesFile)
	f.waitFor("the group's route", func() (bool, string) {
		_, ok := f.route("198.51.100.0/24")
		return ok, f.ip("route")
	})
	f.waitFor("the status in etcd", func() (bool, string) {
		st, err := f.fleetStatus()
		return err == nil && st.Ready && !st.Degraded && st.Revisions["groups/edge/20-routes.json"] == int64(rev) && st.Version > 0,
			fmt.Sprintf("%+v %v", st, err)
	})
	if _, ok := f.route("10.2.0.0/16"); ok {
		t.Error("another host's document was applied")
	}

	// etcd goes away: nothing withdrawn, Degraded.
	f.etcd.Kill()
	f.waitFor("Degraded: intent source unreachable", func() (bool, string) {
		st, err := f.status()
		d := degradedOf(st)
		return err == nil && d.Status && d.Reason == status.ReasonSourceUnreachable && !st.Ready, fmt.Sprintf("%+v %v", d, err)
	})
	if _, ok := f.route("198.51.100.0/24"); !ok || !f.hasAddress("192.0.2.2/24") {
		t.Fatalf("configuration withdrawn while etcd is down:\n%s", f.ip("route"))
	}

	// etcd back; another client changes the group's document at once.
	f.etcd.Restart()
	rev = f.push(fleetLayout.GroupDoc("edge", "20-routes.json"), daemonRoutes2File)
	f.waitFor("the change made after the restart", func() (bool, string) {
		_, ok := f.route("203.0.113.0/24")
		return ok, f.ip("route")
	})
	f.waitFor("Ready again, in etcd", func() (bool, string) {
		st, err := f.fleetStatus()
		return err == nil && st.Ready && !st.Degraded && st.Revisions["groups/edge/20-routes.json"] == int64(rev), fmt.Sprintf("%+v %v", st, err)
	})
	if st, _ := f.status(); !st.Ready || degradedOf(st).Status {
		t.Errorf("local status after etcd came back: %+v", st.Conditions)
	}
	if n := len(f.logs.entries(map[string]string{"msg": "kernel operation", "op": "delete"})); n != 0 {
		t.Errorf("%d deletes during the outage\n%s", n, f.logs.String())
	}

	// Killed: the status expires with its lease.
	f.kill()
	f.waitFor("the status to expire", func() (bool, string) {
		st, err := f.fleetStatus()
		return errors.Is(err, store.ErrNotFound), fmt.Sprintf("%+v %v", st, err)
	})

	// Restarted while etcd is down: the last documents, from disk.
	f.etcd.Kill()
	f.ip("route", "del", "203.0.113.0/24")
	f.startAnyway(f.runArgs()...)
	f.waitFor("the last documents applied from the state directory", func() (bool, string) {
		_, ok := f.route("203.0.113.0/24")
		return ok, f.ip("route")
	})
	f.waitFor("Degraded", func() (bool, string) {
		st, err := f.status()
		d := degradedOf(st)
		return err == nil && d.Status && d.Reason == status.ReasonSourceUnreachable, fmt.Sprintf("%+v %v", d, err)
	})
	f.etcd.Restart()
	f.waitFor("Ready once etcd is back", func() (bool, string) {
		st, err := f.fleetStatus()
		return err == nil && st.Ready, fmt.Sprintf("%+v %v", st, err)
	})
}

// TestAgentDaemonFleetTLS: the daemon reaches an etcd that requires a
// client certificate through --etcd-ca, --etcd-cert and --etcd-key, and
// revokes its status when it stops.
func TestAgentDaemonFleetTLS(t *testing.T) {
	f := newFleetEnv(t, etcdtest.Options{TLS: true})
	f.push(fleetLayout.HostDoc("h1", "10-uplink.json"), daemonUplinkFile)
	rev := f.push(fleetLayout.GroupDoc("edge", "20-routes.json"), daemonRoutesFile)
	f.start(f.runArgs()...) // ready: listed and converged
	if _, ok := f.route("198.51.100.0/24"); !ok || !f.hasAddress("192.0.2.2/24") {
		t.Fatalf("not applied:\n%s", f.ip("route"))
	}
	f.waitFor("the status in etcd", func() (bool, string) {
		st, err := f.fleetStatus()
		return err == nil && st.Ready && st.Revisions["groups/edge/20-routes.json"] == int64(rev), fmt.Sprintf("%+v %v", st, err)
	})
	// SIGTERM revokes the status's lease: it goes at once, not after the TTL.
	f.stop()
	f.exited = nil // stopped on purpose
	f.waitFor("the status revoked at SIGTERM", func() (bool, string) {
		_, err := f.fleetStatus()
		return errors.Is(err, store.ErrNotFound), fmt.Sprint(err)
	})
}

// TestAgentDaemonFleetFlags: the fleet flags are checked before anything
// starts.
func TestAgentDaemonFleetFlags(t *testing.T) {
	bin := daemonBinary(t)
	for _, args := range [][]string{
		{"run", "--group", "edge"},
		{"run", "--etcd-endpoints", "http://127.0.0.1:1", "--hostname", "a/b"},
		{"run", "--etcd-endpoints", "http://127.0.0.1:1", "--group", ".."},
		{"run", "--intent-dir", ""},
	} {
		out, err := exec.Command(bin, args...).CombinedOutput()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 2 {
			t.Errorf("%q: %v (want exit 2)\n%s", args, err, out)
		}
	}
}

// TestAgentDaemonFleetCompactionRelists: a daemon whose watch fell behind
// a compaction of etcd's history (stopped with SIGSTOP while 24 MB of
// changes went by and etcd compacted them) is told so by etcd, lists
// again and applies the change it missed.
func TestAgentDaemonFleetCompactionRelists(t *testing.T) {
	f := newFleetEnv(t, etcdtest.Options{})
	f.push(fleetLayout.HostDoc("h1", "10-uplink.json"), daemonUplinkFile)
	f.push(fleetLayout.GroupDoc("edge", "20-routes.json"), daemonRoutesFile)
	f.start(f.runArgs()...)
	if err := f.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	// Keys deeper than a document: the watch delivers them, the daemon
	// ignores them. Enough of them to fill every buffer on the way.
	junk := strings.Repeat("x", 32<<10)
	for i := range 768 {
		f.push(fleetLayout.GroupDoc("edge", fmt.Sprintf("junk/%d", i)), junk)
	}
	rev := f.push(fleetLayout.GroupDoc("edge", "20-routes.json"), daemonRoutes2File)
	if err := f.st.Compact(context.Background(), rev); err != nil {
		t.Fatal(err)
	}
	if err := f.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	f.waitFor("the change made before the compaction", func() (bool, string) {
		_, ok := f.route("203.0.113.0/24")
		return ok, f.ip("route")
	})
	if len(f.logs.entries(map[string]string{"msg": "the store ended the watch; listing again"})) == 0 {
		t.Errorf("no re-list logged\n%s", f.logs.String())
	}
}
