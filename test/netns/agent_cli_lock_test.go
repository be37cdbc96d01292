//go:build !vmtest

package netns_test

import (
	"bufio"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// Two intents that claim the same link with different settings, and the
// same sysctl, as two operators (or an operator and a script) would.
const (
	cliLockIntentA = `{
  "version": 1,
  "interfaces": [{"name": "lan0", "type": "veth", "veth": {"peer": "lan0-p"}, "mtu": 1400, "addresses": ["10.1.0.1/24"]}],
  "routes": [{"to": "10.11.0.0/16", "via": "10.1.0.254", "dev": "lan0"}],
  "sysctls": {"net.ipv4.ip_forward": "1"}
}`
	cliLockIntentB = `{
  "version": 1,
  "interfaces": [{"name": "lan0", "type": "veth", "veth": {"peer": "lan0-p"}, "mtu": 1450, "addresses": ["10.2.0.1/24"]},
                 {"name": "svc0", "type": "bridge", "addresses": ["10.3.0.1/24"]}],
  "routes": [{"to": "10.12.0.0/16", "via": "10.2.0.254", "dev": "lan0"}],
  "sysctls": {"net.ipv4.ip_forward": "1", "net.ipv4.conf.all.rp_filter": "2"}
}`
	cliLockEmpty = `{"version": 1}`
)

// TestAgentCLIConcurrentApplies: two applies of different intents at once
// on one namespace, round after round. The second waits for the first:
// neither fails half way, every round ends in exactly one of the two
// intents, and the sysctl originals survive (the empty intent restores
// them).
func TestAgentCLIConcurrentApplies(t *testing.T) {
	e := cliNewEnv(t)
	a, b := e.writeFile("a.json", cliLockIntentA), e.writeFile("b.json", cliLockIntentB)
	empty := e.writeFile("empty.json", cliLockEmpty)
	sysctls := []string{"net.ipv4.ip_forward", "net.ipv4.conf.all.rp_filter"}
	original := map[string]string{}
	for _, k := range sysctls {
		original[k] = strings.TrimSpace(e.exec("sysctl", "-n", k))
	}
	for round := range 12 {
		var wg sync.WaitGroup
		results := make([]cliResult, 2)
		for i, f := range []string{a, b} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				results[i] = e.netagent("apply", f)
			}()
		}
		wg.Wait()
		for i, res := range results {
			if res.code != 0 {
				t.Fatalf("round %d: apply %s: %s", round, []string{"a", "b"}[i], res)
			}
		}
		matchA, matchB := e.netagent("check", a), e.netagent("check", b)
		if (matchA.code == 0) == (matchB.code == 0) {
			t.Fatalf("round %d: the namespace matches %s of the intents\ncheck a: %s\ncheck b: %s", round,
				map[bool]string{true: "both", false: "neither"}[matchA.code == 0], matchA, matchB)
		}
		e.mustRun(0, "apply", empty)
		for _, k := range sysctls {
			if got := strings.TrimSpace(e.exec("sysctl", "-n", k)); got != original[k] {
				t.Fatalf("round %d: %s is %s after the sysctl left the intent, want the original %s", round, k, got, original[k])
			}
		}
	}
}

// TestAgentCLIApplyKilledHolder: an apply killed with SIGKILL while it
// holds the target's lock (waiting for a carrier that never comes) leaves
// no stale lock: the next apply goes ahead at once.
func TestAgentCLIApplyKilledHolder(t *testing.T) {
	e, file := cliWaitEnv(t, false)
	cmd := exec.Command(e.bin, "--state-dir", e.stateDir, "--log-level", "debug", "apply", "--netns", e.tgt.Name,
		"--wait", "10m", file)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	// Once it waits for link events, it holds the lock.
	sc := bufio.NewScanner(stderr)
	for sc.Scan() && !strings.Contains(sc.Text(), "waiting for link events") {
	}
	if !strings.Contains(sc.Text(), "waiting for link events") {
		t.Fatal("the first apply never waited for link events")
	}
	held := e.netagent("apply", "--wait", "0", "--lock-timeout", "100ms", file)
	if held.code != 3 || !strings.Contains(held.stderr, "netagent apply (pid ") {
		t.Fatalf("an apply while another holds the lock: want exit 3 naming the holder, got %s", held)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	res := e.mustRun(1, "apply", "--wait", "0", "--lock-timeout", "100ms", file)
	if !strings.Contains(res.stderr, "blocked: waiting for link/wan0") {
		t.Fatalf("after the kill: %s", res)
	}
}
