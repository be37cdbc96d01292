//go:build !vmtest

package netns_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/netagent/netagent/agent/api"
	"github.com/netagent/netagent/agent/status"
	"github.com/netagent/netagent/internal/netnsx"
	"github.com/netagent/netagent/internal/testns"
)

// daemonWait bounds every wait for the daemon to react.
const daemonWait = 30 * time.Second

// daemonBinary is the netagent binary the CLI tests use (cliBinary).
func daemonBinary(t *testing.T) string {
	t.Helper()
	return cliBinary(t)
}

// daemonEnv is a throwaway namespace with a veth pair uplink0/uplink0-peer
// (uplink0 plays the physical uplink), an intent directory, a state
// directory and a socket path for one daemon.
type daemonEnv struct {
	t         *testing.T
	tgt       *netnsx.Target
	bin       string
	intentDir string
	stateDir  string
	socket    string
	logs      *daemonLog
	wrap      []string // a command the daemon runs under (setpriv ...)
	cmd       *exec.Cmd
	exited    chan struct{}
}

func daemonNewEnv(t *testing.T) *daemonEnv {
	t.Helper()
	e := daemonBareEnv(t)
	e.exec("sysctl", "-qw", "net.ipv6.conf.all.accept_dad=0", "net.ipv6.conf.default.accept_dad=0")
	e.addUplink()
	return e
}

// daemonBareEnv is a daemon's namespace, directories and binary, with no
// uplink yet.
func daemonBareEnv(t *testing.T) *daemonEnv {
	t.Helper()
	dir := t.TempDir()
	e := &daemonEnv{
		t: t, tgt: testns.New(t), bin: daemonBinary(t),
		intentDir: filepath.Join(dir, "intents"), stateDir: filepath.Join(dir, "state"),
		socket: filepath.Join(dir, "run", "netagent.sock"), logs: &daemonLog{},
	}
	for _, d := range []string{e.intentDir, filepath.Dir(e.socket)} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	return e
}

// addUplink creates the veth pair, both ends up.
func (e *daemonEnv) addUplink() {
	e.ip("link", "add", "uplink0", "type", "veth", "peer", "name", "uplink0-peer")
	e.ip("link", "set", "uplink0", "up")
	e.ip("link", "set", "uplink0-peer", "up")
}

func (e *daemonEnv) exec(name string, args ...string) string {
	e.t.Helper()
	return testns.Exec(e.t, e.tgt, name, args...)
}

func (e *daemonEnv) ip(args ...string) string {
	e.t.Helper()
	return e.exec("ip", args...)
}

// command is the daemon's command line, under e.wrap.
func (e *daemonEnv) command(runArgs ...string) *exec.Cmd {
	args := append([]string{e.bin, "--netns", e.tgt.Name, "--state-dir", e.stateDir, "--log-format", "json",
		"--log-level", "debug", "run", "--intent-dir", e.intentDir, "--socket", e.socket}, runArgs...)
	args = append(append([]string(nil), e.wrap...), args...)
	return exec.Command(args[0], args[1:]...)
}

// startAnyway starts the daemon without waiting for it to be ready.
func (e *daemonEnv) startAnyway(runArgs ...string) {
	e.t.Helper()
	e.cmd = e.command(runArgs...)
	e.cmd.Stdout, e.cmd.Stderr = e.logs, e.logs
	if err := e.cmd.Start(); err != nil {
		e.t.Fatal(err)
	}
	e.exited = make(chan struct{})
	go func() {
		e.cmd.Wait()
		close(e.exited)
	}()
	e.t.Cleanup(e.stop)
}

// start runs `netagent run` against the namespace; t.Cleanup stops it
// (SIGTERM, then SIGKILL) and checks that a SIGTERM ends it cleanly.
func (e *daemonEnv) start(runArgs ...string) {
	e.t.Helper()
	e.startAnyway(runArgs...)
	e.waitFor("the daemon to be ready", func() (bool, string) {
		st, err := e.status()
		if err != nil {
			return false, err.Error()
		}
		return st.Ready, fmt.Sprintf("%+v", st)
	})
}

// stop ends the daemon: SIGTERM, and SIGKILL if it lingers.
func (e *daemonEnv) stop() {
	if e.cmd == nil || e.cmd.Process == nil {
		return
	}
	stopDaemon(e.t, e.cmd, e.exited, e.logs, 10*time.Second)
	if _, err := os.Stat(e.socket); err == nil {
		e.t.Errorf("the socket %s is left behind", e.socket)
	}
	e.cmd = nil
}

// status asks the daemon through `netagent status --json`.
func (e *daemonEnv) status() (status.Status, error) {
	var st status.Status
	out, err := exec.Command(e.bin, "status", "--socket", e.socket, "--json", "--timeout", "5s").Output()
	if len(out) == 0 {
		return st, fmt.Errorf("netagent status: %v", err)
	}
	if err := json.Unmarshal(out, &st); err != nil {
		return st, fmt.Errorf("netagent status --json: %v\n%s", err, out)
	}
	return st, nil
}

// waitFor polls cond until it holds or daemonWait passes; cond returns
// what it saw, for the failure message.
func (e *daemonEnv) waitFor(what string, cond func() (bool, string)) {
	e.t.Helper()
	e.waitForWithin(daemonWait, what, cond)
}

// waitForWithin is waitFor for at most d.
func (e *daemonEnv) waitForWithin(d time.Duration, what string, cond func() (bool, string)) {
	e.t.Helper()
	pollDaemon(e.t, d, 100*time.Millisecond, e.exited, e.logs, what, cond)
}

// writeIntent writes an intent file the way editors and config management
// do: a temporary file renamed over the old one.
func (e *daemonEnv) writeIntent(name, content string) {
	e.t.Helper()
	tmp := filepath.Join(e.intentDir, "."+name+".tmp")
	if err := os.WriteFile(tmp, []byte(content), 0o600); err != nil {
		e.t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(e.intentDir, name)); err != nil {
		e.t.Fatal(err)
	}
}

// daemonRoute is a route as `ip -j route` shows it.
type daemonRoute struct {
	Dst      string `json:"dst"`
	Gateway  string `json:"gateway"`
	Dev      string `json:"dev"`
	Protocol string `json:"protocol"`
	Table    string `json:"table"`
}

// routes lists the namespace's IPv4 routes in every table.
func (e *daemonEnv) routes() []daemonRoute {
	e.t.Helper()
	var out []daemonRoute
	if err := json.Unmarshal([]byte(e.ip("-j", "-4", "route", "show", "table", "all")), &out); err != nil {
		e.t.Fatal(err)
	}
	return out
}

// route finds the route to dst in the main table.
func (e *daemonEnv) route(dst string) (daemonRoute, bool) {
	for _, r := range e.routes() {
		if r.Dst == dst && (r.Table == "" || r.Table == "main") {
			return r, true
		}
	}
	return daemonRoute{}, false
}

// hasAddress reports whether uplink0 holds addr (CIDR).
func (e *daemonEnv) hasAddress(cidr string) bool {
	e.t.Helper()
	var links []struct {
		AddrInfo []struct {
			Local     string `json:"local"`
			PrefixLen int    `json:"prefixlen"`
		} `json:"addr_info"`
	}
	out, err := exec.Command("ip", "netns", "exec", e.tgt.Name, "ip", "-j", "addr", "show", "dev", "uplink0").Output()
	if err != nil {
		return false // the link is gone
	}
	if err := json.Unmarshal(out, &links); err != nil {
		e.t.Fatal(err)
	}
	for _, l := range links {
		for _, a := range l.AddrInfo {
			if fmt.Sprintf("%s/%d", a.Local, a.PrefixLen) == cidr {
				return true
			}
		}
	}
	return false
}

// call talks to the daemon's socket API directly.
func (e *daemonEnv) call(req api.Request) *api.Response {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), daemonWait)
	defer cancel()
	resp, err := api.Call(ctx, e.socket, req)
	if err != nil {
		e.t.Fatal(err)
	}
	return resp
}

// The intent files of the daemon tests.
const (
	daemonUplinkFile = `{"version": 1,
	  "interfaces": [{"name": "uplink0", "type": "physical", "addresses": ["192.0.2.2/24"]}]}`
	daemonRoutesFile = `{"version": 1,
	  "routes": [{"to": "198.51.100.0/24", "via": "192.0.2.1", "dev": "uplink0", "metric": 10}]}`
	daemonRoutes2File = `{"version": 1,
	  "routes": [{"to": "198.51.100.0/24", "via": "192.0.2.1", "dev": "uplink0", "metric": 10},
	             {"to": "203.0.113.0/24", "via": "192.0.2.1", "dev": "uplink0", "metric": 10}]}`
	daemonRouteRef = "route/main 198.51.100.0/24 metric 10"
)

// converge writes the uplink and routes files and starts the daemon with
// extra run arguments; it returns once the daemon is ready.
func (e *daemonEnv) converge(runArgs ...string) {
	e.t.Helper()
	e.writeIntent("10-uplink.json", daemonUplinkFile)
	e.writeIntent("20-routes.json", daemonRoutesFile)
	e.start(runArgs...)
	if r, ok := e.route("198.51.100.0/24"); !ok || r.Gateway != "192.0.2.1" || r.Dev != "uplink0" {
		e.t.Fatalf("route after start: %+v %v\n%s", r, ok, e.ip("route"))
	}
}

// placeForeign adds a route and an address netagent does not own, and
// returns a check that they are untouched.
func (e *daemonEnv) placeForeign() func() {
	e.t.Helper()
	e.ip("addr", "add", "192.0.2.99/24", "dev", "uplink0")
	e.ip("route", "add", "10.99.0.0/16", "via", "192.0.2.254", "dev", "uplink0", "proto", "static")
	return func() {
		e.t.Helper()
		if r, ok := e.route("10.99.0.0/16"); !ok || r.Protocol != "static" || r.Gateway != "192.0.2.254" {
			e.t.Errorf("the foreign route was touched: %+v %v", r, ok)
		}
		if !e.hasAddress("192.0.2.99/24") {
			e.t.Error("the foreign address was touched")
		}
	}
}
