//go:build !vmtest

package netns_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/netagent/netagent/internal/netnsx"
	"github.com/netagent/netagent/internal/statefile"
	"github.com/netagent/netagent/internal/testbin"
	"github.com/netagent/netagent/internal/testns"
)

// trialSysctls are the sysctls the trial tests touch, compared in every
// snapshot.
var trialSysctls = []string{"net.ipv4.ip_forward", "net.ipv4.conf.all.rp_filter", "net.ipv6.conf.all.forwarding"}

// trialSnapshot is the namespace as the exactness check sees it:
// `ip -j -d link` without ifindexes (a recreated link gets a new one) and
// the bridges' running timers, `ip -j addr`, the routes of every table of
// both families, the rules, the neighbours, iptables-save and
// ip6tables-save without comments and counters, and trialSysctls. Lists
// the kernel orders by creation time (addresses of a link, links,
// neighbours) are sorted.
//
// The kernel finishes some of its own work after the commands that caused it
// return: a carrier change reaches addrconf through the link watch's delayed
// work (up to a second later), which then adds a link's IPv6 link-local
// address and its routes. A snapshot taken in that window differs from one
// taken a moment later with nobody changing anything, so trialSnapshot
// returns only a snapshot that two readings 250 ms apart agree on.
func (e *cliEnv) trialSnapshot() string {
	e.t.Helper()
	prev := e.readSnapshot()
	for try := 0; try < 20; try++ {
		time.Sleep(250 * time.Millisecond)
		cur := e.readSnapshot()
		if cur == prev {
			return cur
		}
		prev = cur
	}
	e.t.Fatalf("the kernel did not settle in 5 s; last snapshot:\n%s", prev)
	return ""
}

func (e *cliEnv) readSnapshot() string {
	e.t.Helper()
	var b strings.Builder
	for _, args := range [][]string{
		{"-d", "link"}, {"addr"}, {"route", "show", "table", "all"}, {"-6", "route", "show", "table", "all"},
		{"rule"}, {"-6", "rule"}, {"neigh"},
	} {
		var list []any
		if err := json.Unmarshal([]byte(e.ip(append([]string{"-j"}, args...)...)), &list); err != nil {
			e.t.Fatalf("ip -j %v: %v", args, err)
		}
		var lines []string
		for _, x := range list {
			if dynamicNeighbour(x) {
				continue
			}
			data, _ := json.Marshal(scrub(x))
			lines = append(lines, string(data))
		}
		slices.Sort(lines)
		fmt.Fprintf(&b, "ip %v\n%s\n", args, strings.Join(lines, "\n"))
	}
	for _, prog := range []string{"iptables-save", "ip6tables-save"} {
		b.WriteString(iptablesTables(e.exec(prog)))
	}
	for _, k := range trialSysctls {
		fmt.Fprintf(&b, "%s = %s\n", k, strings.TrimSpace(e.exec("sysctl", "-n", k)))
	}
	return b.String()
}

// dynamicNeighbour: an entry of the kernel's neighbour cache (resolving,
// reachable, stale, failed: traffic made it) rather than an entry someone
// configured (permanent, noarp).
func dynamicNeighbour(x any) bool {
	m, ok := x.(map[string]any)
	if !ok {
		return false
	}
	states, ok := m["state"].([]any)
	if !ok {
		return false
	}
	for _, st := range states {
		if st == "PERMANENT" || st == "NOARP" {
			return false
		}
	}
	return true
}

// iptablesTables is iptables-save's output without comments and counters,
// and without the tables that hold nothing (built-in chains with policy
// ACCEPT and no rules): a table the kernel instantiated when someone
// looked at it, which no one can remove again, says nothing of the state.
func iptablesTables(save string) string {
	var b, table strings.Builder
	empty := true
	for _, line := range strings.Split(save, "\n") {
		line = iptablesCounters.ReplaceAllString(line, "")
		switch {
		case strings.HasPrefix(line, "#") || line == "":
			continue
		case strings.HasPrefix(line, "*"):
			table.Reset()
			empty = true
		case line == "COMMIT":
			table.WriteString(line + "\n")
			if !empty {
				b.WriteString(table.String())
			}
			continue
		case strings.HasPrefix(line, ":") && strings.HasSuffix(strings.TrimSpace(line), "ACCEPT") && strings.ToUpper(line) == line:
		default:
			empty = false
		}
		table.WriteString(line + "\n")
	}
	return b.String()
}

// scrub drops what says when an object was made rather than what it is:
// ifindexes, the running timers of bridges and their ports, and sorts
// address lists.
func scrub(x any) any {
	switch v := x.(type) {
	case map[string]any:
		for k := range v {
			// operstate is the kernel's to settle, asynchronously (its
			// linkwatch runs up to a second after a carrier change): a
			// snapshot right after an apply may see UNKNOWN where a later
			// one sees UP. The flags (UP, LOWER_UP) stay compared.
			if k == "ifindex" || k == "link_index" || k == "operstate" || strings.HasSuffix(k, "_timer") {
				delete(v, k)
				continue
			}
			v[k] = scrub(v[k])
		}
		if ai, ok := v["addr_info"].([]any); ok {
			slices.SortFunc(ai, func(a, b any) int {
				x, _ := json.Marshal(a)
				y, _ := json.Marshal(b)
				return strings.Compare(string(x), string(y))
			})
		}
	case []any:
		for i := range v {
			v[i] = scrub(v[i])
		}
	}
	return x
}

// trialRun runs `netagent try` with the environment env added.
func (e *cliEnv) trialRun(env []string, args ...string) cliResult {
	e.t.Helper()
	argv := append([]string{"--state-dir", e.stateDir, "try", "--netns", e.tgt.Name}, args...)
	return e.run(env, argv...)
}

// run runs the binary with argv and the environment env added.
func (e *cliEnv) run(env []string, argv ...string) cliResult {
	e.t.Helper()
	r := testbin.Run(e.t, e.bin, env, argv...)
	return cliResult{stdout: r.Stdout, stderr: r.Stderr, code: r.Code}
}

var killPointsRe = regexp.MustCompile(`test kill points (after the apply|passed): (\d+)`)

// killPoints returns the counts the run printed: after the apply, and in all.
func killPoints(t *testing.T, res cliResult) (apply, all int) {
	t.Helper()
	for _, m := range killPointsRe.FindAllStringSubmatch(res.stderr, -1) {
		n, _ := strconv.Atoi(m[2])
		if m[1] == "passed" {
			all = n
		} else {
			apply = n
		}
	}
	if apply == 0 || all <= apply {
		t.Fatalf("kill point counts apply=%d all=%d:\n%s", apply, all, res)
	}
	return apply, all
}

// trialIntents are the intent before a trial (a bridge with a vxlan port,
// addresses, 300 routes, a rule, a neighbour, a chain, a sysctl) and the
// trial's, which changes or replaces every one of them, adds a bridge, a
// vxlan, 1000 routes and chains, a sysctl, and takes the MTU of phys1, a
// veth end that plays a NIC netagent does not own.
func trialIntents(e *cliEnv, routes int) (before, trial string) {
	var r1, r2 []string
	for i := range 300 {
		r1 = append(r1, fmt.Sprintf(`{"to": "10.%d.%d.0/24", "via": "10.0.0.254", "table": 100}`, 100+i/256, i%256))
	}
	for i := range routes {
		r2 = append(r2, fmt.Sprintf(`{"to": "10.%d.%d.0/24", "via": "10.0.1.254", "table": 200}`, 150+i/256, i%256))
	}
	before = e.writeFile("before.json", `{"version": 1,
  "interfaces": [
    {"name": "uplink0", "type": "physical", "addresses": ["192.0.2.10/24"]},
    {"name": "br0", "type": "bridge", "mac": "02:00:00:00:01:00", "bridge": {"stp": false}, "addresses": ["10.0.0.1/24", "fd00::1/64"]},
    {"name": "vx0", "type": "vxlan", "mac": "02:00:00:00:01:01", "vxlan": {"vni": 100, "local": "192.0.2.10", "remote": "192.0.2.20", "port": 4789, "parent": "uplink0"}, "master": "br0"}
  ],
  "routes": [`+strings.Join(r1, ",\n")+`],
  "rules": [{"from": "10.0.0.0/24", "table": 100, "priority": 1000}],
  "neighbors": [{"dev": "br0", "ip": "10.0.0.20", "mac": "02:00:00:00:00:20"}],
  "sysctls": {"net.ipv4.ip_forward": "1"},
  "firewall": {"chains": [
    {"table": "filter", "name": "NETAGENT-FWD", "jumpFrom": "FORWARD", "rules": ["-i br0 -o uplink0 -j ACCEPT"]}
  ]}
}`)
	trial = e.writeFile("trial.json", `{"version": 1,
  "interfaces": [
    {"name": "uplink0", "type": "physical", "addresses": ["192.0.2.10/24", "2001:db8::10/64"]},
    {"name": "phys1", "type": "physical", "mtu": 1400},
    {"name": "br0", "type": "bridge", "mtu": 1450, "mac": "02:00:00:00:01:00", "bridge": {"stp": false}, "addresses": ["10.0.1.1/24", "fd00::1/64"]},
    {"name": "vx0", "type": "vxlan", "mac": "02:00:00:00:01:01", "vxlan": {"vni": 200, "local": "192.0.2.10", "remote": "192.0.2.21", "port": 4789, "parent": "uplink0"}, "master": "br0"},
    {"name": "br1", "type": "bridge", "bridge": {"stp": false}, "addresses": ["10.9.0.1/24"]},
    {"name": "vx1", "type": "vxlan", "vxlan": {"vni": 300, "local": "192.0.2.10", "remote": "192.0.2.22", "port": 4789, "parent": "uplink0"}, "master": "br1"}
  ],
  "routes": [`+strings.Join(r2, ",\n")+`],
  "rules": [{"from": "10.0.1.0/24", "table": 200, "priority": 1000}, {"from": "10.9.0.0/24", "table": 200, "priority": 1001}],
  "neighbors": [{"dev": "br0", "ip": "10.0.1.20", "mac": "02:00:00:00:00:21"}, {"dev": "br1", "ip": "10.9.0.20", "mac": "02:00:00:00:00:22"}],
  "sysctls": {"net.ipv4.ip_forward": "0", "net.ipv4.conf.all.rp_filter": "2", "net.ipv6.conf.all.forwarding": "1"},
  "firewall": {"chains": [
    {"table": "filter", "name": "NETAGENT-FWD", "jumpFrom": "FORWARD", "rules": ["-i br0 -o uplink0 -j ACCEPT", "-i br1 -j DROP"]},
    {"table": "nat", "name": "NETAGENT-NAT", "jumpFrom": "POSTROUTING", "rules": ["-s 10.0.1.0/24 -o uplink0 -j MASQUERADE"]}
  ]}
}`)
	return before, trial
}

// trialEnv is a namespace holding the intent before a trial, with phys1
// (a veth end, MTU 1500) beside the uplink.
func trialEnv(t *testing.T) (e *cliEnv, trial string) {
	e, _, trial = trialEnvRoutes(t, 1000)
	return e, trial
}

// trialEnvRoutes is trialEnv with that many routes in the trial, and the
// file of the intent before it.
func trialEnvRoutes(t *testing.T, routes int) (e *cliEnv, before, trial string) {
	e = cliNewEnv(t)
	e.ip("link", "add", "phys1", "type", "veth", "peer", "name", "phys1-peer")
	e.ip("link", "set", "phys1", "up")
	e.ip("link", "set", "phys1-peer", "up")
	before, trial = trialIntents(e, routes)
	e.mustRun(0, "apply", before)
	return e, before, trial
}

// A trial that is not confirmed reverts exactly: the namespace is again
// what it was, the NIC's MTU and the sysctls included.
func TestTrialTimeoutRevertsExactly(t *testing.T) {
	e, trial := trialEnv(t)
	want := e.stableSnapshot()
	wantT := e.trialSnapshot()
	res := e.trialRun(nil, "--timeout", "0s", trial)
	if res.code != 6 {
		t.Fatalf("want exit 6 (not confirmed), got %s", res)
	}
	if !strings.Contains(res.stderr, "reverted: not confirmed") {
		t.Errorf("no reason on stderr:\n%s", res)
	}
	_ = want
	if got := e.trialSnapshot(); got != wantT {
		t.Fatalf("the revert is not exact:\n%s", lineDiff(wantT, got))
	}
	if _, err := os.Stat(filepath.Join(e.stateDir, "trial", "trial.json")); err == nil {
		t.Fatal("the trial is still pending")
	}
}

// TestTrialKillPoints kills `netagent try` (SIGKILL, at kill points the
// binary passes after each fsynced journal record and each kernel
// operation: NETAGENT_TEST_KILL_AFTER) at points spread over the trial's
// apply and over its revert, and `netagent recover` at points of its own
// revert; after the next `netagent recover` the namespace equals the
// snapshot taken before the trial.
func TestTrialKillPoints(t *testing.T) {
	e, trial := trialEnv(t)
	want := e.trialSnapshot()
	full := e.trialRun([]string{"NETAGENT_TEST_KILL_AFTER=100000000"}, "--timeout", "0s", trial)
	if full.code != 6 {
		t.Fatalf("the whole trial: want exit 6, got %s", full)
	}
	apply, all := killPoints(t, full)
	t.Logf("kill points: %d in the apply, %d in the revert", apply, all-apply)
	// Every kill point is a distinct state (a batch of operations counts
	// as one): 14 spread over the apply, 8 over the revert, the first and
	// last of each included.
	points := append(spread(1, apply, 14), spread(apply+1, all, 8)...)
	exact := 0
	for _, k := range points {
		res := e.trialRun([]string{fmt.Sprintf("NETAGENT_TEST_KILL_AFTER=%d", k)}, "--timeout", "0s", trial)
		if res.code != -1 {
			t.Fatalf("kill point %d: the trial was not killed: %s", k, res)
		}
		rec := e.run(nil, "--state-dir", e.stateDir, "recover", "--netns", e.tgt.Name)
		if rec.code != 0 || !strings.Contains(rec.stderr, "reverted the pending trial") {
			t.Fatalf("recover after kill point %d: %s", k, rec)
		}
		if got := e.trialSnapshot(); got != want {
			t.Errorf("after kill point %d of %d (apply %d), recover is not exact:\n%s", k, all, apply, lineDiff(want, got))
			continue
		}
		exact++
	}
	// Kill the recover itself, then recover again.
	var recPoints int
	for _, frac := range []int{1, 3} {
		res := e.trialRun([]string{fmt.Sprintf("NETAGENT_TEST_KILL_AFTER=%d", apply)}, "--timeout", "0s", trial)
		if res.code != -1 {
			t.Fatalf("the trial was not killed: %s", res)
		}
		k := max(1, (all-apply)*frac/4)
		rec := e.run([]string{fmt.Sprintf("NETAGENT_TEST_KILL_AFTER=%d", k)}, "--state-dir", e.stateDir, "recover", "--netns", e.tgt.Name)
		if rec.code != -1 {
			t.Fatalf("recover was not killed at %d: %s", k, rec)
		}
		recPoints++
		if rec := e.run(nil, "--state-dir", e.stateDir, "recover", "--netns", e.tgt.Name); rec.code != 0 {
			t.Fatalf("recover after a killed recover: %s", rec)
		}
		if got := e.trialSnapshot(); got != want {
			t.Errorf("after a recover killed at %d, recover is not exact:\n%s", k, lineDiff(want, got))
			continue
		}
		exact++
	}
	t.Logf("%d kill points (%d in try, %d in recover): %d exact", len(points)+recPoints, len(points), recPoints, exact)
}

// spread returns n points from lo to hi (both included), evenly spread,
// or every point when there are fewer.
func spread(lo, hi, n int) []int {
	var out []int
	for i := range n {
		out = append(out, lo+(hi-lo)*i/(n-1))
	}
	return slices.Compact(out)
}

// startTrial starts `netagent try` in the background (stdin not a
// terminal: it waits for confirm, the probes or the timeout) and returns
// once it waits for a confirmation; wait returns its outcome.
func (e *cliEnv) startTrial(args ...string) (wait func() cliResult) {
	_, wait = e.startTrialCmd(args...)
	return wait
}

// startTrialCmd is startTrial, with the process.
func (e *cliEnv) startTrialCmd(args ...string) (proc *os.Process, wait func() cliResult) {
	e.t.Helper()
	proc, waiting, wait := e.startSeeing("trial applied: confirm", "try", args...)
	<-waiting
	return proc, wait
}

// Confirm from another shell: the trial stays, after the process ended
// and after a recover; the outcome is recorded.
func TestTrialConfirm(t *testing.T) {
	e, trial := trialEnv(t)
	before := e.trialSnapshot()
	wait := e.startTrial("--timeout", "5m", trial)
	during := e.trialSnapshot()
	if during == before {
		t.Fatal("the trial changed nothing")
	}
	res := e.mustRun(0, "confirm")
	if !strings.Contains(res.stdout, "confirmed") {
		t.Errorf("confirm says: %s", res)
	}
	if r := wait(); r.code != 0 || !strings.Contains(r.stdout, "confirmed: confirmed by `netagent confirm`") {
		t.Fatalf("try after confirm: %s", r)
	}
	e.mustRun(0, "recover")
	if got := e.trialSnapshot(); got != during {
		t.Fatalf("the confirmed trial changed after recover:\n%s", lineDiff(during, got))
	}
	if res := e.netagent("confirm"); res.code != 1 || !strings.Contains(res.stderr, "no trial is pending") {
		t.Errorf("a second confirm: %s", res)
	}
	if h := e.mustRun(0, "history"); !strings.Contains(h.stdout, "try ") {
		t.Errorf("history does not show the confirmed trial:\n%s", h)
	}
	e.mustRun(0, "rollback")
	if got := e.trialSnapshot(); got != before {
		t.Fatalf("rollback after the confirmed trial is not the state before it:\n%s", lineDiff(before, got))
	}
}

// `netagent rollback` while a trial runs reverts it at once.
func TestTrialRevertRequest(t *testing.T) {
	e, trial := trialEnv(t)
	before := e.trialSnapshot()
	wait := e.startTrial("--timeout", "5m", trial)
	if res := e.mustRun(0, "rollback"); !strings.Contains(res.stdout, "reverted") {
		t.Errorf("rollback says: %s", res)
	}
	if r := wait(); r.code != 6 || !strings.Contains(r.stderr, "reverted on request") {
		t.Fatalf("try after a revert request: %s", r)
	}
	if got := e.trialSnapshot(); got != before {
		t.Fatalf("not exact:\n%s", lineDiff(before, got))
	}
}

// Reboot and a fresh process: a trial left pending (its process killed
// once its apply was done, then the record made to look as if from
// another boot) is reverted by the next netagent command, which says so.
func TestTrialPendingRecoveredByNextCommand(t *testing.T) {
	for _, reboot := range []bool{false, true} {
		t.Run(fmt.Sprintf("reboot=%v", reboot), func(t *testing.T) {
			e, beforeFile, trial := trialEnvRoutes(t, 1000)
			before := e.trialSnapshot()
			full := e.trialRun([]string{"NETAGENT_TEST_KILL_AFTER=100000000"}, "--timeout", "0s", trial)
			apply, _ := killPoints(t, full)
			res := e.trialRun([]string{fmt.Sprintf("NETAGENT_TEST_KILL_AFTER=%d", apply)}, "--timeout", "0s", trial)
			if res.code != -1 {
				t.Fatalf("not killed: %s", res)
			}
			if e.trialSnapshot() == before {
				t.Fatal("the killed trial changed nothing")
			}
			if reboot {
				path := filepath.Join(e.stateDir, "trial", "trial.json")
				data, err := statefile.LoadRecord(path)
				if err != nil {
					t.Fatal(err)
				}
				var rec map[string]any
				json.Unmarshal(data, &rec)
				rec["identity"].(map[string]any)["boot_id"] = "00000000-0000-0000-0000-000000000000"
				data, _ = json.Marshal(rec)
				if err := statefile.SaveRecord(path, data, true); err != nil {
					t.Fatal(err)
				}
			}
			// apply is a writer: it reverts the trial before its own
			// change (here none: the intent from before the trial). plan
			// and check write nothing (TestTrialPendingDryRunsWriteNothing).
			res = e.netagent("apply", beforeFile)
			want := "the process that ran it died"
			if reboot {
				want = "reboot"
			}
			if !strings.Contains(res.stderr, "reverted the pending trial") || !strings.Contains(res.stderr, want) {
				t.Fatalf("apply did not say it reverted the trial (%q): %s", want, res)
			}
			if got := e.trialSnapshot(); got != before {
				t.Fatalf("not exact:\n%s", lineDiff(before, got))
			}
		})
	}
}

// A trial whose items do not all converge reverts at once (exit 7), unless
// --keep-partial.
func TestTrialFailedItemReverts(t *testing.T) {
	e, _ := trialEnv(t)
	before := e.trialSnapshot()
	bad := e.writeFile("bad.json", `{"version": 1,
  "interfaces": [{"name": "br9", "type": "bridge", "addresses": ["10.99.0.1/24"]},
    {"name": "nosuch0", "type": "physical", "addresses": ["10.98.0.1/24"]}],
  "sysctls": {"net.ipv4.conf.all.rp_filter": "2"}}`)
	res := e.trialRun(nil, "--timeout", "5m", "--wait", "0s", bad)
	if res.code != 7 || !strings.Contains(res.stderr, "reverted: 2 items failed or stayed blocked") {
		t.Fatalf("want exit 7: %s", res)
	}
	if got := e.trialSnapshot(); got != before {
		t.Fatalf("not exact:\n%s", lineDiff(before, got))
	}
}

// uplinkEnv is a namespace whose uplink0 leads to a peer namespace, the
// upstream router: 192.0.2.1 on the link, 198.51.100.1 behind it. The
// intent before the trial routes the default through it.
func uplinkEnv(t *testing.T) *cliEnv {
	e, _ := uplinkEnvWithPeer(t)
	return e
}

// uplinkEnvWithPeer is uplinkEnv, with the upstream's namespace.
func uplinkEnvWithPeer(t *testing.T) (*cliEnv, *netnsx.Target) {
	e := cliNewEnv(t)
	up := testns.New(t)
	e.ip("link", "set", "uplink0-peer", "netns", up.Name)
	testns.Exec(t, up, "ip", "addr", "add", "192.0.2.1/24", "dev", "uplink0-peer")
	testns.Exec(t, up, "ip", "link", "set", "uplink0-peer", "up")
	testns.Exec(t, up, "ip", "link", "set", "lo", "up")
	testns.Exec(t, up, "ip", "addr", "add", "198.51.100.1/32", "dev", "lo")
	good := e.writeFile("good.json", `{"version": 1,
  "interfaces": [{"name": "uplink0", "type": "physical", "addresses": ["192.0.2.10/24"]}],
  "routes": [{"to": "default", "via": "192.0.2.1", "dev": "uplink0"}]}`)
	e.mustRun(0, "apply", good)
	e.exec("ping", "-c", "1", "-W", "2", "198.51.100.1")
	return e, up
}

// A trial that breaks the uplink (a wrong default gateway) fails its
// probe to the upstream and reverts (exit 9): the ping works again.
func TestTrialProbeRevertsBrokenUplink(t *testing.T) {
	e := uplinkEnv(t)
	before := e.trialSnapshot()
	bad := e.writeFile("bad.json", `{"version": 1,
  "interfaces": [{"name": "uplink0", "type": "physical", "addresses": ["192.0.2.10/24"]}],
  "routes": [{"to": "default", "via": "192.0.2.99", "dev": "uplink0"}]}`)
	res := e.trialRun(nil, "--timeout", "60s", "--probe-timeout", "3s", "--probe", "ping:198.51.100.1", bad)
	if res.code != 9 || !strings.Contains(res.stderr, "reverted: probe ping:198.51.100.1 did not pass") {
		t.Fatalf("want exit 9 (probe failed): %s", res)
	}
	e.exec("ping", "-c", "1", "-W", "2", "198.51.100.1")
	if got := e.trialSnapshot(); got != before {
		t.Fatalf("not exact:\n%s", lineDiff(before, got))
	}
}

// Unattended: --confirm-when-probes-pass confirms a trial whose probe
// passes.
func TestTrialConfirmWhenProbesPass(t *testing.T) {
	e := uplinkEnv(t)
	next := e.writeFile("next.json", `{"version": 1,
  "interfaces": [{"name": "uplink0", "type": "physical", "addresses": ["192.0.2.10/24", "192.0.2.11/24"]}],
  "routes": [{"to": "default", "via": "192.0.2.1", "dev": "uplink0"}]}`)
	res := e.trialRun(nil, "--timeout", "60s", "--confirm-when-probes-pass", "--probe", "ping:198.51.100.1", next)
	if res.code != 0 || !strings.Contains(res.stdout, "confirmed") {
		t.Fatalf("want the trial confirmed: %s", res)
	}
	e.mustRun(0, "check", next)
}

// SIGTERM (or SIGINT) to the trial's process reverts it (exit 6).
func TestTrialSignalReverts(t *testing.T) {
	e, trial := trialEnv(t)
	before := e.trialSnapshot()
	proc, wait := e.startTrialCmd("--timeout", "5m", trial)
	if err := proc.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if r := wait(); r.code != 6 || !strings.Contains(r.stderr, "reverted: interrupted by terminated") {
		t.Fatalf("try after SIGTERM: %s", r)
	}
	if got := e.trialSnapshot(); got != before {
		t.Fatalf("not exact:\n%s", lineDiff(before, got))
	}
}

// --keep-partial keeps a trial whose items did not all converge: it waits
// for confirm or the timeout (exit 6 here), and the timeout reverts it.
func TestTrialKeepPartial(t *testing.T) {
	e, _ := trialEnv(t)
	before := e.trialSnapshot()
	bad := e.writeFile("bad.json", `{"version": 1,
  "interfaces": [{"name": "br9", "type": "bridge", "addresses": ["10.99.0.1/24"]},
    {"name": "nosuch0", "type": "physical", "addresses": ["10.98.0.1/24"]}]}`)
	res := e.trialRun(nil, "--timeout", "0s", "--wait", "0s", "--keep-partial", bad)
	if res.code != 6 || !strings.Contains(res.stderr, "reverted: not confirmed") {
		t.Fatalf("want exit 6 (kept, then not confirmed): %s", res)
	}
	if got := e.trialSnapshot(); got != before {
		t.Fatalf("not exact:\n%s", lineDiff(before, got))
	}
}
