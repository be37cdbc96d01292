//go:build !vmtest

package netns_test

import (
	"fmt"
	"testing"
)

// macMTU is a link's MAC and MTU as `ip -j link` reads them back.
func (e *cliEnv) macMTU(name string) string {
	e.t.Helper()
	l := e.link(name)
	return fmt.Sprintf("%s mtu %v", l["address"], l["mtu"])
}

// A trial that recreates a VXLAN (another VNI) and lowers its uplink's
// MTU, neither the VXLAN's nor its bridge's MAC or MTU in any intent (the
// kernel chose them: a random MAC, the MTU from the uplink's, the
// bridge's from its port), is reverted exactly: after the revert (the
// trial's own, at its timeout, and `netagent recover` after a kill) the
// VXLAN and the bridge have the MACs and MTUs they had before the trial.
func TestTrialRevertKeepsKernelChosenMACAndMTU(t *testing.T) {
	for _, killed := range []bool{false, true} {
		t.Run(fmt.Sprintf("killed=%v", killed), func(t *testing.T) {
			t.Parallel()
			e := cliNewEnv(t)
			vx := `{"name": "vx0", "type": "vxlan", "vxlan": {"vni": %d, "local": "192.0.2.10", "remote": "192.0.2.20", "port": 4789, "parent": "uplink0"}, "master": "br0"}`
			br := `{"name": "br0", "type": "bridge", "bridge": {"stp": false}, "addresses": ["10.0.0.1/24"]}`
			before := e.writeFile("before.json", `{"version": 1, "interfaces": [
    {"name": "uplink0", "type": "physical", "addresses": ["192.0.2.10/24"]}, `+br+`, `+fmt.Sprintf(vx, 100)+`]}`)
			trial := e.writeFile("trial.json", `{"version": 1, "interfaces": [
    {"name": "uplink0", "type": "physical", "mtu": 1400, "addresses": ["192.0.2.10/24"]}, `+br+`, `+fmt.Sprintf(vx, 200)+`]}`)
			e.mustRun(0, "apply", before)
			want := map[string]string{"vx0": e.macMTU("vx0"), "br0": e.macMTU("br0"), "uplink0": e.macMTU("uplink0")}
			check := func(when string) {
				t.Helper()
				for _, name := range []string{"vx0", "br0", "uplink0"} {
					if got := e.macMTU(name); got != want[name] {
						t.Errorf("%s, %s is %s, was %s before the trial", when, name, got, want[name])
					}
				}
			}
			full := e.trialRun([]string{"NETAGENT_TEST_KILL_AFTER=100000000"}, "--timeout", "0s", trial)
			if full.code != 6 {
				t.Fatalf("want exit 6 (not confirmed): %s", full)
			}
			check("after the trial's own revert")
			if !killed {
				return
			}
			apply, _ := killPoints(t, full)
			if res := e.trialRun([]string{fmt.Sprintf("NETAGENT_TEST_KILL_AFTER=%d", apply)}, "--timeout", "0s", trial); res.code != -1 {
				t.Fatalf("not killed: %s", res)
			}
			if got := e.macMTU("vx0"); got == want["vx0"] {
				t.Fatalf("the trial did not recreate vx0: %s", got)
			}
			e.mustRun(0, "recover")
			check("after recover")
		})
	}
}
