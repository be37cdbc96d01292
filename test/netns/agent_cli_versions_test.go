//go:build !vmtest

package netns_test

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/netagent/netagent/agent/api"
)

// cliVersion is one line of `history --json`.
type cliVersion struct {
	Number  int    `json:"number"`
	Source  string `json:"source"`
	Digest  string `json:"digest"`
	Current bool   `json:"current"`
}

func (e *cliEnv) history() []cliVersion {
	e.t.Helper()
	return parseHistory(e.t, e.mustRun(0, "history", "--json").stdout)
}

func parseHistory(t *testing.T, out string) []cliVersion {
	t.Helper()
	var list []cliVersion
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatalf("history --json: %v\n%s", err, out)
	}
	return list
}

// Every apply of a new intent is a version; the same intent again is none;
// diff shows what changed and the operations; rollback returns the kernel
// to version 1 and records it as version 3.
func TestAgentCLIVersions(t *testing.T) {
	e := cliNewEnv(t)
	a, b := e.writeFile("a.json", cliLockIntentA), e.writeFile("b.json", cliLockIntentB)
	e.mustRun(0, "apply", a)
	snapA := e.stableSnapshot()
	e.mustRun(0, "apply", b)
	e.mustRun(0, "apply", b)
	h := e.history()
	if len(h) != 2 || h[0].Source != "apply "+a || h[1].Source != "apply "+b || !h[1].Current || h[0].Digest == h[1].Digest {
		t.Fatalf("history after two intents and one again: %+v", h)
	}
	text := e.mustRun(0, "history").stdout
	if !strings.Contains(text, "2 (current)") || !strings.Contains(text, h[0].Digest[len("sha256:"):][:12]) {
		t.Errorf("history:\n%s", text)
	}

	diff := e.mustRun(0, "diff").stdout
	for _, want := range []string{
		"intent: version 1 (apply " + a + ") -> version 2",
		"~ interfaces[lan0].mtu: 1400 -> 1450",
		`~ interfaces[lan0].addresses: ["10.1.0.1/24"] -> ["10.2.0.1/24"]`,
		"+ interfaces[svc0]: {",
		"- routes[10.11.0.0/16]: {",
		"+ routes[10.12.0.0/16]: {",
		`+ sysctls.net.ipv4.conf.all.rp_filter: "2"`,
		"operations from version 1 to version 2:",
		"create interface/svc0",
		"delete route/main 10.11.0.0/16",
	} {
		if !strings.Contains(diff, want) {
			t.Errorf("diff lacks %q:\n%s", want, diff)
		}
	}
	if same := e.mustRun(0, "diff", "2", "2").stdout; !strings.Contains(same, "no differences") || !strings.Contains(same, "no operations") {
		t.Errorf("diff 2 2:\n%s", same)
	}

	e.mustRun(0, "rollback")
	h = e.history()
	if len(h) != 3 || h[2].Source != "rollback 1" || h[2].Digest != h[0].Digest || !h[2].Current {
		t.Fatalf("history after rollback: %+v", h)
	}
	e.mustRun(0, "check", a)
	if snap := e.stableSnapshot(); snap != snapA {
		t.Errorf("after the rollback the namespace is not as version 1 left it:\n%s\nwant:\n%s", snap, snapA)
	}
	if res := e.netagent("rollback", "9"); res.code != 1 || !strings.Contains(res.stderr, "no such version") {
		t.Errorf("rollback to a version never made: %s", res)
	}
}

// Two applies expecting the same version race, round after round: exactly
// one wins, the other is refused with the conflict and exit code 5, and
// the kernel matches the winner.
func TestAgentCLIIfVersionRace(t *testing.T) {
	e := cliNewEnv(t)
	e.mustRun(0, "apply", e.writeFile("a.json", cliLockIntentA))
	for round := range 4 {
		expect := len(e.history())
		files := []string{
			e.writeFile("x.json", strings.Replace(cliLockIntentA, `"mtu": 1400`, fmt.Sprintf(`"mtu": %d`, 1300+round), 1)),
			e.writeFile("y.json", strings.Replace(cliLockIntentB, `"mtu": 1450`, fmt.Sprintf(`"mtu": %d`, 1350+round), 1)),
		}
		var wg sync.WaitGroup
		results := make([]cliResult, 2)
		for i, f := range files {
			wg.Go(func() { results[i] = e.netagent("apply", "--if-version", fmt.Sprint(expect), f) })
		}
		wg.Wait()
		winner := -1
		for i, res := range results {
			switch res.code {
			case 0:
				if winner >= 0 {
					t.Fatalf("round %d: both won:\n%s\n%s", round, results[0], results[1])
				}
				winner = i
			case 5:
				want := fmt.Sprintf("current version is %d, not %d: someone else changed the intent; see netagent history", expect+1, expect)
				if !strings.Contains(res.stderr, want) {
					t.Errorf("round %d: the loser's message: %s", round, res)
				}
			default:
				t.Fatalf("round %d: %s", round, res)
			}
		}
		if winner < 0 {
			t.Fatalf("round %d: neither won:\n%s\n%s", round, results[0], results[1])
		}
		e.mustRun(0, "check", files[winner])
		if h := e.history(); len(h) != expect+1 || h[expect].Source != "apply "+files[winner] {
			t.Fatalf("round %d: history %+v", round, h)
		}
	}
	if res := e.netagent("rollback", "--if-version", "1"); res.code != 5 {
		t.Errorf("rollback with a stale --if-version: %s", res)
	}
}

// The daemon records a version for each change of its files; an API apply
// with a stale ifVersion is refused; a rollback through the daemon takes
// the place of the files until one changes.
func TestAgentDaemonVersions(t *testing.T) {
	e := daemonNewEnv(t)
	e.converge()
	cli := func(args ...string) cliResult {
		cmd := exec.Command(e.bin, append([]string{"--state-dir", e.stateDir}, args...)...)
		var res cliResult
		out, err := cmd.Output()
		res.stdout = string(out)
		if ee, ok := err.(*exec.ExitError); ok {
			res.code, res.stderr = ee.ExitCode(), string(ee.Stderr)
		}
		return res
	}
	version := func(want int) func() (bool, string) {
		return func() (bool, string) {
			st, err := e.status()
			return err == nil && st.Version == want, fmt.Sprintf("version %d %v override %q", st.Version, err, st.Override)
		}
	}
	e.waitFor("version 1", version(1))
	e.writeIntent("20-routes.json", daemonRoutes2File)
	e.waitFor("version 2", version(2))
	h := parseHistory(t, cli("history", "--netns", e.tgt.Name, "--json").stdout)
	if len(h) != 2 || h[1].Source != "daemon: files 10-uplink.json,20-routes.json" {
		t.Fatalf("history: %+v", h)
	}

	stale := 1
	doc := json.RawMessage(`{"version": 1, "routes": [{"to": "10.20.0.0/16", "via": "192.0.2.1", "dev": "uplink0"}]}`)
	resp := e.call(api.Request{Command: api.CmdApply, Intent: doc, IfVersion: &stale})
	if !resp.Conflict || !strings.Contains(resp.Error, "current version is 2, not 1") {
		t.Fatalf("apply with a stale ifVersion: %+v", resp)
	}
	if _, ok := e.route("10.20.0.0/16"); ok {
		t.Fatal("the refused apply changed the kernel")
	}
	file := versionsTempFile(t, doc)
	if res := cli("apply", "--netns", e.tgt.Name, "--via-daemon", "--if-version", "1", file); res.code != 5 {
		t.Fatalf("apply --via-daemon with a stale --if-version: %+v", res)
	}
	if res := cli("apply", "--netns", e.tgt.Name, "--via-daemon", "--if-version", "2", file); res.code != 0 {
		t.Fatalf("apply --via-daemon --if-version 2: %+v", res)
	}
	st, _ := e.status()
	if st.Version != 3 || len(st.Digest) != len("sha256:")+64 {
		t.Fatalf("status after the API apply: version %d digest %q", st.Version, st.Digest)
	}

	if res := cli("rollback", "--netns", e.tgt.Name, "--via-daemon", "1"); res.code != 0 {
		t.Fatalf("rollback through the daemon: %+v", res)
	}
	st, _ = e.status()
	if st.Version != 4 || st.Override == "" {
		t.Fatalf("status after the rollback: version %d override %q", st.Version, st.Override)
	}
	_, api3 := e.route("10.20.0.0/16")
	_, second := e.route("203.0.113.0/24")
	if _, first := e.route("198.51.100.0/24"); api3 || second || !first {
		t.Fatalf("after the rollback to version 1: routes %v", e.routes())
	}
	e.writeIntent("20-routes.json", daemonRoutesFile)
	e.waitFor("the rollback to end at the next file change", version(5))
	if st, _ = e.status(); st.Override != "" {
		t.Fatalf("override still in force: %q", st.Override)
	}
	e.waitFor("the API's route back", func() (bool, string) {
		_, ok := e.route("10.20.0.0/16")
		return ok, e.ip("route")
	})
}

// versionsTempFile writes content to a temporary file and returns its path.
func versionsTempFile(t *testing.T, content []byte) string {
	t.Helper()
	e := &cliEnv{t: t}
	return e.writeFile("api.json", string(content))
}
