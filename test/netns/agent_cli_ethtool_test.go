//go:build !vmtest

package netns_test

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
)

// ethtoolIntent is uplink0 (a veth playing the NIC) with an ethtool
// section.
func ethtoolIntent(section string) string {
	return `{"version": 1, "interfaces": [{"name": "uplink0", "type": "physical", "ethtool": ` + section + `}]}`
}

// ethtoolShows fails unless `ethtool <args> uplink0` matches every
// pattern (multi-line).
func (e *cliEnv) ethtoolShows(args []string, patterns ...string) {
	e.t.Helper()
	out := e.exec("ethtool", append(args, "uplink0")...)
	for _, p := range patterns {
		if !regexp.MustCompile(`(?m)` + p).MatchString(out) {
			e.t.Errorf("ethtool %v lacks %q:\n%s", args, p, out)
		}
	}
}

// TestAgentCLIEthtoolFeaturesAndChannels applies features (a CLI alias
// and a kernel name) and channels to a veth, reads them back with the
// ethtool program, applies again (nothing to do), and removes the
// section: the values found come back. Plan shows the channel change as
// a possible link reset.
func TestAgentCLIEthtoolFeaturesAndChannels(t *testing.T) {
	e := cliNewEnv(t)
	e.ethtoolShows([]string{"-k"}, `^generic-receive-offload: off$`, `^\s+tx-checksum-ip-generic: on$`)
	e.ethtoolShows([]string{"-l"}, `Current hardware settings:\s+RX:\s+1\s+TX:\s+1\s`)
	on := e.writeFile("on.json", ethtoolIntent(`{"features": {"gro": true, "tx-checksum-ip-generic": false}, "channels": {"rx": 2, "tx": 2}}`))
	if ops := e.planOps(on); len(ops) != 1 || ops[0] != "modify ethtool/uplink0" {
		t.Fatalf("plan: %v, want modify ethtool/uplink0 (the NIC holds its settings already)", ops)
	}
	plan := e.mustRun(0, "plan", on).stdout
	if !strings.Contains(plan, "traffic: link flap (possible): channels/rx 1 -> 2: many NIC drivers reset the link (carrier down and up) on a channel change; channels/tx 1 -> 2") {
		t.Errorf("plan does not show the channel change's possible link reset:\n%s", plan)
	}
	e.mustRun(0, "apply", on)
	e.ethtoolShows([]string{"-k"}, `^generic-receive-offload: on$`, `^\s+tx-checksum-ip-generic: off$`)
	e.ethtoolShows([]string{"-l"}, `Current hardware settings:\s+RX:\s+2\s+TX:\s+2\s`)
	if ops := e.planOps(on); len(ops) != 0 {
		t.Errorf("a second apply would do %v", ops)
	}
	e.mustRun(0, "apply", on)

	off := e.writeFile("off.json", `{"version": 1, "interfaces": [{"name": "uplink0", "type": "physical"}]}`)
	e.mustRun(0, "apply", off)
	e.ethtoolShows([]string{"-k"}, `^generic-receive-offload: off$`, `^\s+tx-checksum-ip-generic: on$`)
	e.ethtoolShows([]string{"-l"}, `Current hardware settings:\s+RX:\s+1\s+TX:\s+1\s`)
	if ops := e.planOps(off); len(ops) != 0 {
		t.Errorf("after the give-back, apply would do %v", ops)
	}
}

// TestAgentCLIEthtoolRefusesFixedFeatureAndMaximum: a veth's LRO is
// fixed off, its rx channels at most 2, its autoneg off and it supports
// no link mode to advertise. Plan predicts the failure naming the limit,
// apply fails that item only and changes nothing of it.
func TestAgentCLIEthtoolRefusesFixedFeatureAndMaximum(t *testing.T) {
	e := cliNewEnv(t)
	for _, tc := range []struct{ section, want string }{
		{`{"features": {"gro": true, "lro": true}}`, "feature rx-lro of uplink0 is fixed (off by the driver)"},
		{`{"features": {"gro": true}, "channels": {"rx": 3}}`, "channels rx of uplink0: 3 is above the NIC's maximum 2"},
		{`{"features": {"gro": true}, "link": {"advertise": ["1000baseT/Full"]}}`, "link advertise of uplink0: the NIC does not support 1000baseT/Full (it supports none)"},
		{`{"features": {"gro": true}, "link": {"autoneg": true, "advertise": ["1000baseT/Full"]}}`, "link advertise of uplink0: the NIC does not support 1000baseT/Full (it supports none)"},
	} {
		file := e.writeFile("bad.json", `{"version": 1, "interfaces": [{"name": "uplink0", "type": "physical", "mtu": 1400, "ethtool": `+tc.section+`}]}`)
		plan := e.netagent("plan", file)
		if !strings.Contains(plan.stdout, "ethtool/uplink0: predicted to fail: modify failed: refused: "+tc.want) {
			t.Errorf("plan does not predict %q:\n%s", tc.want, plan)
		}
		apply := e.netagent("apply", file)
		if apply.code == 0 || !strings.Contains(apply.stdout+apply.stderr, tc.want) {
			t.Errorf("apply: want a failure naming %q, got %s", tc.want, apply)
		}
		e.ethtoolShows([]string{"-k"}, `^generic-receive-offload: off$`, `^large-receive-offload: off \[fixed\]$`)
		e.ethtoolShows([]string{"-l"}, `Current hardware settings:\s+RX:\s+1\s`)
		if mtu := e.link("uplink0")["mtu"]; mtu != float64(1400) {
			t.Errorf("the interface item failed with the ethtool one: mtu %v", mtu)
		}
	}
}

// ethtoolState is what ethtool -k and -l show of the settings the trial
// test changes.
func (e *cliEnv) ethtoolState() string {
	e.t.Helper()
	k := e.exec("ethtool", "-k", "uplink0")
	l := e.exec("ethtool", "-l", "uplink0")
	var out []string
	for _, re := range []string{`(?m)^generic-receive-offload: \w+`, `(?m)^\s+tx-checksum-ip-generic: \w+`, `(?m)^tx-nocache-copy: \w+`} {
		out = append(out, strings.TrimSpace(regexp.MustCompile(re).FindString(k)))
	}
	cur := regexp.MustCompile(`(?s)Current hardware settings:\s+RX:\s+(\d+)\s+TX:\s+(\d+)`).FindStringSubmatch(l)
	if cur == nil {
		e.t.Fatalf("ethtool -l:\n%s", l)
	}
	return strings.Join(out, ", ") + ", rx " + cur[1] + " tx " + cur[2]
}

// A trial that changes features and channels (some of them set by the
// intent before it, some not) reverts exactly: after its own revert at
// its timeout, and after a SIGKILL in its apply and `netagent recover`,
// ethtool shows what it showed before the trial. The journal's
// before-images are the read-back items, which hold every setting.
func TestTrialRevertsEthtoolSettings(t *testing.T) {
	e := cliNewEnv(t)
	before := e.writeFile("before.json", ethtoolIntent(`{"features": {"gro": true}, "channels": {"tx": 2}}`))
	trial := e.writeFile("trial.json", ethtoolIntent(`{"features": {"gro": false, "tx-checksum-ip-generic": false, "tx-nocache-copy": true}, "channels": {"rx": 2, "tx": 1}}`))
	e.mustRun(0, "apply", before)
	want := e.ethtoolState()
	if want != "generic-receive-offload: on, tx-checksum-ip-generic: on, tx-nocache-copy: off, rx 1 tx 2" {
		t.Fatalf("before the trial: %s", want)
	}
	full := e.trialRun([]string{"NETAGENT_TEST_KILL_AFTER=100000000"}, "--timeout", "0s", trial)
	if full.code != 6 {
		t.Fatalf("want exit 6 (not confirmed): %s", full)
	}
	if got := e.ethtoolState(); got != want {
		t.Errorf("after the trial's own revert: %s, was %s", got, want)
	}
	apply, _ := killPoints(t, full)
	if res := e.trialRun([]string{fmt.Sprintf("NETAGENT_TEST_KILL_AFTER=%d", apply)}, "--timeout", "0s", trial); res.code != -1 {
		t.Fatalf("not killed: %s", res)
	}
	if got := e.ethtoolState(); got == want {
		t.Fatalf("the killed trial changed nothing: %s", got)
	}
	e.mustRun(0, "recover")
	if got := e.ethtoolState(); got != want {
		t.Errorf("after recover: %s, was %s", got, want)
	}
	if ops := e.planOps(before); len(ops) != 0 {
		t.Errorf("after recover, apply of the intent before would do %v", ops)
	}
}

// Drift: someone turns GRO back off with ethtool; check reports the
// setting with both values, show --json prints the section back, apply
// repairs it.
func TestAgentCLIEthtoolDriftCheckShow(t *testing.T) {
	e := cliNewEnv(t)
	on := e.writeFile("on.json", ethtoolIntent(`{"features": {"gro": true}, "channels": {"rx": 2}}`))
	e.mustRun(0, "apply", on)
	e.mustRun(0, "check", on)
	e.exec("ethtool", "-K", "uplink0", "gro", "off")
	res := e.mustRun(1, "check", on)
	if !strings.Contains(res.stdout, "ethtool/uplink0: Settings: want map[channels/rx:2 features/rx-gro:1], have map[channels/rx:2 features/rx-gro:0]") {
		t.Errorf("check after ethtool -K gro off: %s", res)
	}
	e.mustRun(0, "apply", on)
	show := e.mustRun(0, "show", "--json")
	if !strings.Contains(show.stdout, `"ethtool": {`) || !strings.Contains(show.stdout, `"rx-gro": true`) || !strings.Contains(show.stdout, `"rx": 2`) {
		t.Errorf("show --json does not print the settings netagent changed:\n%s", show.stdout)
	}
	e.ethtoolShows([]string{"-k"}, `^generic-receive-offload: on$`)
	e.mustRun(0, "check", on)
}
