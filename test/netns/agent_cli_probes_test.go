//go:build !vmtest

package netns_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/netagent/netagent/agent/probe"
	"github.com/netagent/netagent/internal/dnsmasqtest"
	"github.com/netagent/netagent/internal/netnsx"
)

// The upstream's services, behind its router (uplinkEnv): dnsmasq answers
// ok.test with probedAddr and nothing else (NXDOMAIN); a Go HTTP server
// answers /ok.
const (
	upstreamIP = "198.51.100.1"
	probedAddr = "192.0.2.77"
)

// probeServices starts dnsmasq (DNS only) and an HTTP server inside up on
// upstreamIP, and returns the HTTP server's port and a func that stops
// dnsmasq.
func probeServices(t *testing.T, up *netnsx.Target) (httpPort string, stopDNS func()) {
	t.Helper()
	bin, err := exec.LookPath(dnsmasqtest.Binary)
	if err != nil {
		bin = "/usr/sbin/" + dnsmasqtest.Binary
	}
	cmd := exec.Command("ip", "netns", "exec", up.Name, bin, "--keep-in-foreground", "--no-daemon", "--conf-file=/dev/null",
		"--no-resolv", "--no-hosts", "--bind-interfaces", "--listen-address="+upstreamIP, "--port=53",
		"--address=/ok.test/"+probedAddr, "--address=/#/", "--pid-file=", "--user=root")
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting dnsmasq: %v", err)
	}
	stopDNS = func() { cmd.Process.Kill(); cmd.Wait() }
	t.Cleanup(stopDNS)
	var ln net.Listener
	if err := up.Do(func() (err error) {
		ln, err = net.Listen("tcp", upstreamIP+":0")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/ok" {
			http.NotFound(w, r)
			return
		}
		fmt.Fprint(w, "upstream healthy")
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	_, httpPort, _ = net.SplitHostPort(ln.Addr().String())
	return httpPort, stopDNS
}

// awaitDNS waits for dnsmasq to answer from the agent's namespace (it
// binds a moment after it starts).
func awaitDNS(t *testing.T, e *cliEnv) {
	t.Helper()
	awaitDNSIn(t, e.tgt)
}

// awaitDNSIn waits for dnsmasq to answer from tgt.
func awaitDNSIn(t *testing.T, tgt *netnsx.Target) {
	t.Helper()
	p, err := probe.Parse("dns:ok.test@" + upstreamIP + ",addr=" + probedAddr + ",timeout=200ms")
	if err != nil {
		t.Fatal(err)
	}
	for range 50 {
		if err = p.Run(context.Background(), tgt); err == nil {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("dnsmasq does not answer: %v", err)
}

// Probes that pass before the change judge the trial; one that fails
// already (NXDOMAIN before anything changed) is reported and does not
// count: the trial is confirmed. With --probe-must-pass-before the trial
// is refused (exit 4) and nothing changes.
func TestTrialProbesFailingBeforeNotCounted(t *testing.T) {
	e, up := uplinkEnvWithPeer(t)
	port, _ := probeServices(t, up)
	awaitDNS(t, e)
	next := e.writeFile("next.json", `{"version": 1,
  "interfaces": [{"name": "uplink0", "type": "physical", "addresses": ["192.0.2.10/24", "192.0.2.11/24"]}],
  "routes": [{"to": "default", "via": "192.0.2.1", "dev": "uplink0"}]}`)
	probes := []string{"--probe", "dns:ok.test@" + upstreamIP + ",addr=" + probedAddr,
		"--probe", "http://" + upstreamIP + ":" + port + "/ok,body=healthy",
		"--probe", "dns:gone.test@" + upstreamIP}
	before := e.trialSnapshot()
	res := e.trialRun(nil, append([]string{"--timeout", "60s", "--probe-must-pass-before", "--confirm-when-probes-pass"}, append(probes, next)...)...)
	if res.code != 4 || !strings.Contains(res.stderr, "refused, nothing changed: probes fail before any change (--probe-must-pass-before): probe dns:gone.test@"+upstreamIP+":53: probe failed") {
		t.Fatalf("with --probe-must-pass-before: want exit 4 naming the failing probe: %s", res)
	}
	if got := e.trialSnapshot(); got != before {
		t.Fatalf("the refused trial changed the namespace:\n%s", lineDiff(before, got))
	}
	res = e.trialRun(nil, append([]string{"--timeout", "60s", "--confirm-when-probes-pass"}, append(probes, next)...)...)
	if res.code != 0 || !strings.Contains(res.stdout, "confirmed") {
		t.Fatalf("want the trial confirmed, the failing probe not counted: %s", res)
	}
	for _, want := range []string{
		"before any change: probe dns:gone.test@" + upstreamIP + ":53: probe failed: no such name (NXDOMAIN): it does not count",
		"probe dns:ok.test@" + upstreamIP + ":53,addr=" + probedAddr + " passed",
		"probe http://" + upstreamIP + ":" + port + "/ok,body=healthy passed",
	} {
		if !strings.Contains(res.stderr, want) {
			t.Errorf("try does not say %q:\n%s", want, res.stderr)
		}
	}
	if strings.Contains(res.stderr, "probe dns:gone.test@"+upstreamIP+":53 passed") {
		t.Errorf("the probe failing before was judged:\n%s", res.stderr)
	}
	e.mustRun(0, "check", next)
}

// A change that takes DNS away (the default route through a gateway that
// is not there) reverts once the probe round is over (--probe-timeout),
// not at the trial's deadline; and DNS lost while a standing trial waits
// for its confirmation reverts it after trial.FailuresToRevert failed
// rounds (one a second), not at the deadline either.
func TestTrialProbeDNSLossRevertsEarly(t *testing.T) {
	e, up := uplinkEnvWithPeer(t)
	port, stopDNS := probeServices(t, up)
	awaitDNS(t, e)
	dns := "dns:ok.test@" + upstreamIP + ",addr=" + probedAddr + ",timeout=500ms"
	const deadline = 60 * time.Second
	before := e.trialSnapshot()
	bad := e.writeFile("bad.json", `{"version": 1,
  "interfaces": [{"name": "uplink0", "type": "physical", "addresses": ["192.0.2.10/24"]}],
  "routes": [{"to": "default", "via": "192.0.2.99", "dev": "uplink0"}]}`)
	start := time.Now()
	res := e.trialRun(nil, "--timeout", deadline.String(), "--probe-timeout", "3s", "--probe", dns, bad)
	took := time.Since(start)
	e.revertedEarly(res, "reverted: probe dns:ok.test@"+upstreamIP+":53,addr="+probedAddr+",timeout=500ms did not pass", took, deadline, before)
	t.Logf("the change that broke DNS reverted after %v (probe timeout 3s, deadline %v)", took, deadline)

	next := e.writeFile("next.json", `{"version": 1,
  "interfaces": [{"name": "uplink0", "type": "physical", "addresses": ["192.0.2.10/24", "192.0.2.11/24"]}],
  "routes": [{"to": "default", "via": "192.0.2.1", "dev": "uplink0"}]}`)
	wait := e.startTrial("--timeout", deadline.String(), "--probe", dns, "--probe", "http://"+upstreamIP+":"+port+"/ok", next)
	start = time.Now()
	stopDNS()
	res = wait()
	took = time.Since(start)
	e.revertedEarly(res, "reverted: probe dns:ok.test@"+upstreamIP+":53,addr="+probedAddr+",timeout=500ms failed 3 times in a row after the change", took, deadline, before)
	t.Logf("DNS lost during the wait: reverted %v later (3 rounds of 1s, deadline %v)", took, deadline)
}

// revertedEarly checks that a trial reverted for a probe (exit 9, saying
// why), took well before its deadline, and left the namespace as before.
func (e *cliEnv) revertedEarly(res cliResult, why string, took, deadline time.Duration, before string) {
	e.t.Helper()
	if res.code != 9 || !strings.Contains(res.stderr, why) {
		e.t.Fatalf("want exit 9 saying %q: %s", why, res)
	}
	if took > deadline/4 {
		e.t.Errorf("reverted after %v: not well before the %v deadline", took, deadline)
	}
	if got := e.trialSnapshot(); got != before {
		e.t.Fatalf("not exact:\n%s", lineDiff(before, got))
	}
}
