//go:build !vmtest

package netns_test

import (
	"bytes"
	"errors"
	"os/exec"
	"strings"
	"testing"
)

// netagentWithPath runs the binary like cliEnv.netagent, with PATH set to
// path (and nothing else of the environment).
func (e *cliEnv) netagentWithPath(path, command string, args ...string) cliResult {
	e.t.Helper()
	argv := append([]string{"--state-dir", e.stateDir, command, "--netns", e.tgt.Name}, args...)
	cmd := exec.Command(e.bin, argv...)
	cmd.Env = []string{"PATH=" + path}
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	res := cliResult{stdout: out.String(), stderr: errOut.String()}
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		res.code = ee.ExitCode()
	case err != nil:
		e.t.Fatalf("running netagent %s: %v", command, err)
	}
	return res
}

const cliToolsIntent = `{
  "version": 1,
  "interfaces": [
    {"name": "uplink0", "type": "physical", "addresses": ["192.0.2.10/24"]},
    {"name": "br-lan", "type": "bridge", "addresses": ["192.168.50.1/24"]}
  ],
  "routes": [{"to": "default", "via": "192.0.2.1", "dev": "uplink0"}],
  "sysctls": {"net.ipv4.ip_forward": "1"}`

// TestAgentCLIWithoutIptables runs netagent on a host with no iptables
// programs at all (PATH is an empty directory): an intent without chains
// applies (exit 0), again with nothing to do, and plan and check agree; one
// with a chain fails that chain alone (exit 1, naming it and the missing
// iptables-restore) and applies the rest. An intent without chains gets
// no warning about the missing programs (issue 29, point 14); one with a
// chain names them in that chain's failure.
func TestAgentCLIWithoutIptables(t *testing.T) {
	e := cliNewEnv(t)
	empty := t.TempDir()
	plain := e.writeFile("plain.json", cliToolsIntent+"}")
	withChain := e.writeFile("chain.json", cliToolsIntent+`,
  "firewall": {"chains": [{"table": "filter", "name": "NA-FWD", "jumpFrom": "FORWARD", "rules": ["-i br-lan -j ACCEPT"]}]}}`)

	res := e.netagentWithPath(empty, "apply", plain)
	if res.code != 0 {
		t.Fatalf("apply without chains and without iptables: %s", res)
	}
	if strings.Contains(res.stderr, "iptables") {
		t.Errorf("apply of an intent without chains warned about iptables:\n%s", res.stderr)
	}
	if !strings.Contains(e.ip("link", "show", "br-lan"), "br-lan") ||
		!strings.Contains(e.ip("route", "show", "default"), "192.0.2.1") ||
		strings.TrimSpace(e.exec("sysctl", "-n", "net.ipv4.ip_forward")) != "1" {
		t.Errorf("the intent was not applied")
	}
	if res := e.netagentWithPath(empty, "apply", plain); res.code != 0 || !strings.Contains(res.stdout, "converged: 0 operations") {
		t.Errorf("second apply: %s", res)
	}
	for _, cmd := range []string{"plan", "check"} {
		if res := e.netagentWithPath(empty, cmd, plain); res.code != 0 {
			t.Errorf("%s: %s", cmd, res)
		}
	}

	res = e.netagentWithPath(empty, "apply", withChain)
	if res.code != 1 {
		t.Fatalf("apply with a chain and without iptables: want exit 1, got %s", res)
	}
	out := res.stdout + res.stderr
	if !strings.Contains(out, "iptables-chain/ipv4/filter/NA-FWD") || !strings.Contains(out, "iptables-restore not found") {
		t.Errorf("apply does not name the chain and the missing program: %s", res)
	}
	if strings.Count(out, ": failed:") != 1 || !strings.Contains(res.stdout, "1 item failed or blocked") {
		t.Errorf("apply reports other failures than the chain's: %s", res)
	}
	if strings.Contains(e.exec("iptables-save"), "NA-FWD") {
		t.Error("the chain exists although iptables is missing")
	}

	// Back with iptables on PATH, the chain comes.
	e.mustRun(0, "apply", withChain)
	if !strings.Contains(e.exec("iptables", "-S", "NA-FWD"), "-A NA-FWD -i br-lan -j ACCEPT") {
		t.Error("the chain was not created once iptables was there")
	}
}

// A link kind this kernel lacks (no dummy module on the test host) fails
// naming the module that gives it (issue 29, point 14), and nothing else
// of the intent is held back.
func TestAgentCLIMissingModuleNamed(t *testing.T) {
	e := cliNewEnv(t)
	file := e.writeFile("dummy.json", `{"version": 1, "interfaces": [{"name": "dm0", "type": "dummy"}, {"name": "br9", "type": "bridge"}]}`)
	res := e.netagent("apply", file)
	want := "adding dummy dm0: operation not supported (this kernel has no dummy links: load the module with `modprobe dummy`, or use a kernel built with it)"
	if res.code != 1 || !strings.Contains(res.stdout, want) || !strings.Contains(res.stdout, "1 item failed or blocked") {
		t.Errorf("apply of a dummy link: want exit 1 and %q, got %s", want, res)
	}
	if !strings.Contains(e.ip("link", "show", "br9"), "br9") {
		t.Error("the bridge was held back by the dummy's failure")
	}
}
