//go:build !vmtest

package netns_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"
)

// nicDisruption is the "disruption" object of `plan --json`, as far as
// these tests read it.
type nicDisruption struct {
	LinksDown []struct {
		Link, Effect string
		Certain      bool
	}
	NeighborsWithdrawn []struct{ Neighbor, Effect, Cause string }
}

func (e *cliEnv) planNICDisruption(file string) (nicDisruption, cliResult) {
	e.t.Helper()
	res := e.mustRun(0, "plan", "--json", file)
	var doc struct{ Disruption nicDisruption }
	if err := json.Unmarshal([]byte(res.stdout), &doc); err != nil {
		e.t.Fatalf("plan --json: %v\n%s", err, res.stdout)
	}
	return doc.Disruption, res
}

// nicUp adds a veth end netagent does not own, a NIC to it (mac: its
// address, "" the kernel's), with its peer (name-peer) up, and sets it up.
func (e *cliEnv) nicUp(name, mac string) {
	e.t.Helper()
	args := []string{"link", "add", name}
	if mac != "" {
		args = append(args, "address", mac)
	}
	e.ip(append(args, "type", "veth", "peer", "name", name+"-peer")...)
	e.ip("link", "set", name, "up")
	e.ip("link", "set", name+"-peer", "up")
}

// linkUp reports whether `ip -j link` shows the link administratively up.
func (e *cliEnv) linkUp(name string) bool {
	e.t.Helper()
	flags, _ := e.link(name)["flags"].([]any)
	return slices.Contains(flags, any("UP"))
}

// A NIC found down (as NICs are at boot) that an intent brought up is set
// down again when it leaves the intent (its found state is given back):
// plan says the link goes down, and apply does it. A static neighbour
// taken out of the intent is a neighbour withdrawn in plan's summary.
func TestPlanDisruptionNICFoundDown(t *testing.T) {
	t.Parallel()
	e := cliNewEnv(t)
	e.ip("link", "add", "nic0", "type", "veth", "peer", "name", "nic0-peer")
	e.ip("link", "set", "nic0-peer", "up")
	if e.linkUp("nic0") {
		t.Fatal("nic0 is up before netagent")
	}
	withNeigh := e.writeFile("a.json", `{"version": 1,
  "interfaces": [{"name": "nic0", "type": "physical", "addresses": ["192.0.2.10/24"]}],
  "neighbors": [{"dev": "nic0", "ip": "192.0.2.1", "mac": "02:00:00:00:00:01"}]}`)
	noNeigh := e.writeFile("b.json", `{"version": 1,
  "interfaces": [{"name": "nic0", "type": "physical", "addresses": ["192.0.2.10/24"]}]}`)
	noNIC := e.writeFile("c.json", `{"version": 1}`)
	e.mustRun(0, "apply", withNeigh)
	if !e.linkUp("nic0") {
		t.Fatal("the intent did not bring nic0 up")
	}

	d, res := e.planNICDisruption(noNeigh)
	if len(d.NeighborsWithdrawn) != 1 || d.NeighborsWithdrawn[0].Neighbor != "neighbor/nic0/192.0.2.1" ||
		d.NeighborsWithdrawn[0].Effect != "removed" || d.NeighborsWithdrawn[0].Cause != "delete neighbor/nic0/192.0.2.1" {
		t.Errorf("plan --json: neighbours withdrawn %+v, want neighbor/nic0/192.0.2.1 removed\n%s", d.NeighborsWithdrawn, res)
	}
	res = e.mustRun(0, "plan", noNeigh)
	if !strings.Contains(res.stdout, "disruption: 1 neighbour withdrawn: neighbor/nic0/192.0.2.1\n") || strings.Contains(res.stdout, "disruption: none") {
		t.Errorf("plan does not name the neighbour withdrawn:\n%s", res)
	}

	d, res = e.planNICDisruption(noNIC)
	var down []string
	for _, l := range d.LinksDown {
		if l.Link == "nic0" && l.Effect == "down" && l.Certain {
			down = append(down, l.Link)
		}
	}
	if len(down) != 1 {
		t.Errorf("plan --json: links down %+v, want nic0 down (certain)\n%s", d.LinksDown, res)
	}
	res = e.mustRun(0, "plan", noNIC)
	if !strings.Contains(res.stdout, "disruption: link nic0 goes down (link down): delete interface/nic0\n") ||
		!strings.Contains(res.stdout, "disruption: 1 neighbour withdrawn: neighbor/nic0/192.0.2.1\n") {
		t.Errorf("plan does not say nic0 goes down and its neighbour is withdrawn:\n%s", res)
	}
	res = e.mustRun(0, "apply", noNIC)
	if !strings.Contains(res.stdout, "traffic: link down: the NIC gets back the settings it had before netagent: set down [down: nic0]") {
		t.Errorf("apply does not say it sets nic0 down:\n%s", res)
	}
	if e.linkUp("nic0") {
		t.Errorf("nic0 is still up after leaving the intent: the plan said it goes down")
	}
}

// Both ports of a bridge leave it in one apply: the bridge loses its
// carrier, and the plan says so (the second port is the last to leave).
func TestPlanDisruptionBridgeLosesItsPorts(t *testing.T) {
	t.Parallel()
	e := cliNewEnv(t)
	e.nicUp("p1", "")
	e.nicUp("p2", "")
	with := e.writeFile("a.json", `{"version": 1, "interfaces": [
  {"name": "br0", "type": "bridge", "bridge": {"stp": false}, "addresses": ["10.1.0.1/24"]},
  {"name": "p1", "type": "physical", "master": "br0"}, {"name": "p2", "type": "physical", "master": "br0"}]}`)
	without := e.writeFile("b.json", `{"version": 1, "interfaces": [
  {"name": "br0", "type": "bridge", "bridge": {"stp": false}, "addresses": ["10.1.0.1/24"]}]}`)
	e.mustRun(0, "apply", with)
	carrier := func() bool {
		flags, _ := e.link("br0")["flags"].([]any)
		return slices.Contains(flags, any("LOWER_UP"))
	}
	deadline := time.Now().Add(5 * time.Second)
	for !carrier() && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if !carrier() {
		t.Fatal("br0 has no carrier with its two ports")
	}
	d, res := e.planNICDisruption(without)
	var down bool
	for _, l := range d.LinksDown {
		down = down || l.Link == "br0" && l.Certain
	}
	if !down {
		t.Errorf("plan --json: links down %+v, want br0\n%s", d.LinksDown, res)
	}
	e.mustRun(0, "apply", without)
	if carrier() {
		t.Errorf("br0 kept its carrier: the plan said it loses it")
	}
}

// A NIC that stays in the intent without the MTU it was given gets its
// found MTU back at once: plan says so (a possible flap, as any NIC MTU
// change), and apply does it.
func TestPlanDisruptionNICMTULeftOut(t *testing.T) {
	t.Parallel()
	e := cliNewEnv(t)
	e.mustRun(0, "apply", e.writeFile("a.json", `{"version": 1, "interfaces": [{"name": "uplink0", "type": "physical", "mtu": 1400}]}`))
	b := e.writeFile("b.json", `{"version": 1, "interfaces": [{"name": "uplink0", "type": "physical"}]}`)
	res := e.mustRun(0, "plan", b)
	if !strings.Contains(res.stdout, "traffic: link flap (possible): mtu 1400 -> 1500") {
		t.Errorf("plan does not say the MTU goes back:\n%s", res)
	}
	e.mustRun(0, "apply", b)
	if mtu := e.link("uplink0")["mtu"]; mtu != 1500.0 {
		t.Errorf("mtu %v, want the found 1500 back", mtu)
	}
}
