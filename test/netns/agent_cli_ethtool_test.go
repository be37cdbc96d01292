//go:build !vmtest

package netns_test

import (
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
// fixed off and its rx channels at most 2. Plan predicts the failure
// naming the limit, apply fails that item only and changes nothing of it.
func TestAgentCLIEthtoolRefusesFixedFeatureAndMaximum(t *testing.T) {
	e := cliNewEnv(t)
	for _, tc := range []struct{ section, want string }{
		{`{"features": {"gro": true, "lro": true}}`, "feature rx-lro of uplink0 is fixed (off by the driver)"},
		{`{"features": {"gro": true}, "channels": {"rx": 3}}`, "channels rx of uplink0: 3 is above the NIC's maximum 2"},
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
