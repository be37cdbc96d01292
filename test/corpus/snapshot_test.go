//go:build !vmtest

package corpus_test

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
)

// samePlanOffline plans file live and against a snapshot of the
// namespace taken just before (netagent snapshot), with args, and fails
// unless both print the same bytes and exit with the same code. It
// returns the live plan's output.
func (e *env) samePlanOffline(file string, args ...string) result {
	e.t.Helper()
	snap := e.dir + "/snapshot.json"
	if res := e.netagent("snapshot", "--out", snap); res.code != 0 {
		e.t.Fatalf("snapshot: %s", res)
	}
	live := e.netagent("plan", append(slices.Clone(args), file)...)
	offline := e.netagent("plan", append([]string{"--against", snap}, append(slices.Clone(args), file)...)...)
	if live.stdout != offline.stdout || live.code != offline.code {
		e.t.Errorf("plan %v of %s: live (exit %d) and --against the snapshot (exit %d) differ:\n%s\noffline stderr: %s",
			args, file, live.code, offline.code, lineDiff(live.stdout, offline.stdout), offline.stderr)
	}
	if j, oj := e.netagent("plan", append([]string{"--json"}, append(slices.Clone(args), file)...)...),
		e.netagent("plan", append([]string{"--json", "--against", snap}, append(slices.Clone(args), file)...)...); j.stdout != oj.stdout {
		e.t.Errorf("plan --json %v of %s: live and offline differ:\n%s", args, file, lineDiff(j.stdout, oj.stdout))
	}
	return live
}

// addPhysicals adds the physical links of the corpus file that are not
// there yet (addPhysical).
func (e *env) addPhysicals(c nsCase) {
	e.t.Helper()
	in := e.loadIntent(c.file)
	for _, ifc := range in.Interfaces {
		if ifc.Type == "physical" && ifc.Name != "lo" && !e.try("ip", "link", "show", ifc.Name) {
			e.addPhysical(ifc.Name, !slices.Contains(c.down, ifc.Name))
		}
	}
}

// For every corpus case of this kernel: in a namespace holding other
// writers' objects (placeForeign), then after another corpus intent was
// applied (the next case's: netagent's own objects and its records in
// the state directory, some in the way of this intent), `plan --against`
// a snapshot prints exactly what the live plan prints, as text and as
// JSON, with the same exit code; and again after this intent itself was
// applied (nothing to do).
func TestSnapshotPlanAgainstCorpus(t *testing.T) {
	for i, c := range nsCases {
		prep := nsCases[(i+1)%len(nsCases)]
		if prep.peerNS != c.peerNS {
			prep = nsCases[(i+2)%len(nsCases)]
		}
		t.Run(strings.TrimSuffix(c.file, ".json"), func(t *testing.T) {
			e := newEnv(t, c.peerNS || prep.peerNS)
			e.addPhysicals(c)
			e.placeForeign()
			e.samePlanOffline(e.intentFile(c.file))

			e.addPhysicals(prep)
			e.netagent("apply", e.intentFile(prep.file)) // a failure is part of the state planned against
			live := e.samePlanOffline(e.intentFile(c.file))
			t.Logf("after %s: %s", prep.file, lastLine(live.stdout))

			e.netagent("apply", e.file)
			e.samePlanOffline(e.file)
		})
	}
}

// A plan that is refused (a protected link it would disrupt) and one
// with a predicted clash (someone else's bridge where the intent puts
// its own) print the same live and offline.
func TestSnapshotPlanAgainstRefusedAndClash(t *testing.T) {
	c := nsCase{file: "systemd-bridge.json"}
	e := newEnv(t, false)
	e.addPhysicals(c)
	in := e.loadIntent(c.file)
	var bridge string
	for _, ifc := range in.Interfaces {
		if ifc.Type == "bridge" {
			bridge = ifc.Name
		}
	}
	e.ip("link", "add", bridge, "type", "bridge")
	live := e.samePlanOffline(e.file)
	if !strings.Contains(live.stdout, bridge) || live.code == 0 {
		t.Errorf("the live plan predicts no clash on %s (exit %d):\n%s", bridge, live.code, live.stdout)
	}
	e.ip("link", "del", bridge)
	if res := e.netagent("apply", e.file); res.code != 0 {
		t.Fatalf("apply: %s", res)
	}
	empty := e.writeFile("empty.json", `{"version": 1}`)
	refused := e.samePlanOffline(empty, "--protect", bridge)
	if refused.code == 0 {
		t.Errorf("removing protected %s is not refused:\n%s", bridge, refused.stdout)
	}
}

// intentFile is the corpus file as the case applies it (loadIntent).
func (e *env) intentFile(name string) string {
	e.t.Helper()
	e.loadIntent(name)
	return e.file
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

// Ethtool: a veth's features planned changed, applied, then one the
// kernel reports fixed (predicted to fail) and the way back print the
// same live and against a snapshot (the snapshot holds the features,
// changeable and fixed, and the groups the driver answers).
func TestSnapshotPlanAgainstEthtool(t *testing.T) {
	e := newEnv(t, false)
	e.addPhysical("uplink0", true)
	intent := func(features string) string {
		return e.writeFile("ethtool.json", `{"version": 1, "interfaces": [{"name": "uplink0", "type": "physical", "ethtool": {"features": `+features+`}}]}`)
	}
	on := intent(`{"gro": true, "tx-checksum-ip-generic": false}`)
	if live := e.samePlanOffline(on); !strings.Contains(live.stdout, "ethtool/uplink0") {
		t.Errorf("the plan changes no ethtool setting:\n%s", live.stdout)
	}
	if res := e.netagent("apply", on); res.code != 0 {
		t.Fatalf("apply: %s", res)
	}
	fixed := intent(`{"gro": true, "tx-checksum-ip-generic": false, "lro": true}`)
	if live := e.samePlanOffline(fixed); live.code == 0 {
		t.Errorf("turning on a fixed feature is not predicted to fail:\n%s", live.stdout)
	}
	e.samePlanOffline(intent(`{}`))
}

// nftables tables are in a snapshot: netagent's (decoded as the
// configurator decodes them, with its records) and others' (their base
// chains' hooks, policies and drop verdicts). The edge example planned
// beside another owner's dropping base chain (a warning) and the
// iptables-nft tables of placeForeign, then applied (nothing to do),
// changed (a base chain's priority: a recreate), with its mark chain
// deleted (the mark lost), and removed, prints the same live and
// offline.
func TestSnapshotPlanAgainstNftables(t *testing.T) {
	e := newEnv(t, false)
	e.addPhysical("wan0", true)
	e.addPhysical("lan0", true)
	e.placeForeign()
	e.exec("nft", "add table ip fw; add chain ip fw cin { type filter hook input priority 10; policy accept; }; add rule ip fw cin tcp dport 23 drop")
	data, err := os.ReadFile("../../examples/nftables-edge.json")
	if err != nil {
		t.Fatal(err)
	}
	edge := e.writeFile("edge.json", string(data))
	live := e.samePlanOffline(edge)
	t.Logf("plan of the edge example:\n%s", live.stdout)
	if !strings.Contains(live.stdout, "inet/edge") || !strings.Contains(live.stdout, "ip/fw cin") {
		t.Errorf("the plan makes no table or warns of no drop:\n%s", live.stdout)
	}
	if res := e.netagent("apply", edge); res.code != 0 {
		t.Fatalf("apply: %s", res)
	}
	if live := e.samePlanOffline(edge); !strings.Contains(live.stdout, "no changes") {
		t.Errorf("the plan of what was applied changes something:\n%s", live.stdout)
	}
	moved := e.writeFile("moved.json", strings.Replace(string(data), `"priority": "filter", "policy": "drop", "rules": [
        {"ctState": ["established", "related"], "verdict": "accept"},
        {"ctState": ["invalid"]`, `"priority": -10, "policy": "drop", "rules": [
        {"ctState": ["established", "related"], "verdict": "accept"},
        {"ctState": ["invalid"]`, 1))
	if live := e.samePlanOffline(moved); !strings.Contains(live.stdout, "recreate chain input") {
		t.Errorf("the plan of a new priority recreates no chain:\n%s", live.stdout)
	}
	e.samePlanOffline(e.writeFile("empty.json", `{"version": 1}`))
	e.exec("nft", "delete chain inet edge netagent-owned")
	live = e.samePlanOffline(edge)
	t.Logf("plan after the mark chain was deleted:\n%s", live.stdout)
	if live.code == 0 || !strings.Contains(live.stdout, "lost its mark") {
		t.Errorf("the plan over a table that lost its mark (exit %d):\n%s", live.code, live.stdout)
	}
}

// Another owner's table of the intent's name is a predicted clash, live
// and offline alike.
func TestSnapshotPlanAgainstNftablesClash(t *testing.T) {
	e := newEnv(t, false)
	e.exec("nft", "add table inet netagent; add chain inet netagent input { type filter hook input priority 0; }")
	nft := e.writeFile("nft.json", `{"version": 1, "nftables": {"tables": [{"family": "inet", "name": "netagent",
	  "chains": [{"name": "input", "type": "filter", "hook": "input", "priority": 0, "policy": "accept"}]}]}}`)
	if live := e.samePlanOffline(nft); live.code == 0 || !strings.Contains(live.stdout, "not netagent's") {
		t.Errorf("the plan predicts no clash (exit %d):\n%s", live.code, live.stdout)
	}
}

// A bridge port's cost and priority are in the snapshot: after an apply
// that set them, the same intent plans nothing and another cost plans
// the one change, live and offline alike.
func TestSnapshotPlanAgainstBridgePort(t *testing.T) {
	e := newEnv(t, false)
	e.addPhysical("uplink0", true)
	intent := func(cost int) string {
		return e.writeFile("port.json", fmt.Sprintf(`{"version": 1, "interfaces": [{"name": "br7", "type": "bridge"},
		  {"name": "uplink0", "type": "physical", "master": "br7", "bridgePort": {"cost": %d, "priority": 7}}]}`, cost))
	}
	if res := e.netagent("apply", intent(50)); res.code != 0 {
		t.Fatalf("apply: %s", res)
	}
	if live := e.samePlanOffline(intent(50)); !strings.Contains(live.stdout, "no changes") {
		t.Errorf("the plan of what was applied changes something:\n%s", live.stdout)
	}
	if live := e.samePlanOffline(intent(60)); !strings.Contains(live.stdout, "port/uplink0") {
		t.Errorf("the plan of another cost changes no port:\n%s", live.stdout)
	}
}

// What runs only on the host (DNS through --resolv-conf, DHCP) is not
// planned against a snapshot: refused, exit 3.
func TestSnapshotPlanAgainstRefusesHostOnly(t *testing.T) {
	e := newEnv(t, false)
	e.addPhysical("uplink0", true)
	snap := e.dir + "/snapshot.json"
	if res := e.netagent("snapshot", "--out", snap); res.code != 0 {
		t.Fatalf("snapshot: %s", res)
	}
	dhcp := e.writeFile("dhcp.json", `{"version": 1, "interfaces": [{"name": "uplink0", "type": "physical", "dhcp4": true}]}`)
	if res := e.netagent("plan", "--against", snap, dhcp); res.code != 3 || !strings.Contains(res.stderr, "DHCP") {
		t.Errorf("plan --against of a DHCP intent: %s", res)
	}
}
