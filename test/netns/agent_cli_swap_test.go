//go:build !vmtest

package netns_test

import (
	"fmt"
	"maps"
	"strings"
	"testing"
)

// swapMAC is the address of the veth end that plays the NIC that came up
// as eth<i> (veths have no permanent address: they are matched by mac).
func swapMAC(i int) string { return fmt.Sprintf("02:00:00:00:0e:%02x", i) }

// cliSwapEnv is cliNewEnv with n NICs eth0, eth1, ... (veth ends with
// fixed MACs, eth0 up; their peers peer0, ...), and their ifindexes by the
// name each came up with.
func cliSwapEnv(t *testing.T, n int) (*cliEnv, map[string]float64) {
	e := cliNewEnv(t)
	for i := range n {
		nic := fmt.Sprintf("eth%d", i)
		e.ip("link", "add", nic, "address", swapMAC(i), "type", "veth", "peer", "name", fmt.Sprintf("peer%d", i))
	}
	e.ip("link", "set", "eth0", "up")
	boot := map[string]float64{}
	for name, index := range e.ifindexes() {
		if strings.HasPrefix(name, "eth") {
			boot[name] = index
		}
	}
	return e, boot
}

// swapIntent is an intent that names want[i] the NIC that came up as
// eth<i>, found by its MAC, with an address on each.
func (e *cliEnv) swapIntent(file string, want []string) string {
	var ifs []string
	for i, name := range want {
		ifs = append(ifs, fmt.Sprintf(`{"name": %q, "type": "physical", "match": {"mac": %q}, "addresses": ["192.0.2.%d/32"]}`,
			name, swapMAC(i), 10+i))
	}
	return e.writeFile(file, `{"version": 1, "interfaces": [`+strings.Join(ifs, ", ")+`]}`)
}

// wantNICNames checks with ip -j link that each NIC (boot: its ifindex by
// the name it came up with) carries the name names gives it, and that no
// temporary name is left.
func (e *cliEnv) wantNICNames(what string, boot map[string]float64, names map[string]string) {
	e.t.Helper()
	got := map[float64]string{}
	for name, index := range e.ifindexes() {
		if strings.HasPrefix(name, "eth") || strings.HasPrefix(name, "natmp") {
			got[index] = name
		}
	}
	want := map[float64]string{}
	for came, now := range names {
		want[boot[came]] = now
	}
	if !maps.Equal(got, want) {
		e.t.Errorf("%s: ip -j link has the NICs %v (by ifindex), want %v (they came up as %v)", what, got, want, boot)
	}
}

// NICs that came up with each other's names (two swapped, three rotated),
// matched by mac, get the intent's names through a temporary name: plan
// predicts no failure, a certain flap of the NIC that is up (and of no
// other), ip -j link shows each name on the NIC of the
// intended MAC (its ifindex kept) with its address, a second apply runs no
// operation; leaving the intent gives every NIC the name it came up with.
func TestAgentCLIMatchSwappedNames(t *testing.T) {
	for _, tc := range []struct {
		name string
		want []string // the name the intent gives the NIC that came up as eth<i>
	}{
		{"two", []string{"eth1", "eth0"}},
		{"three", []string{"eth1", "eth2", "eth0"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e, boot := cliSwapEnv(t, len(tc.want))
			file := e.swapIntent("swap.json", tc.want)
			plan := e.mustRun(0, "plan", file)
			if strings.Contains(plan.stdout, "predicted to fail") {
				t.Errorf("plan predicts a failure: %s", plan)
			}
			// eth0 is up: its rename is a certain flap (the match has a mac
			// only, which the plan tells from the links); the others are down.
			if !strings.Contains(plan.stdout, "traffic: link flap: the NIC the match finds, eth0, is renamed eth1: it is up") ||
				strings.Count(plan.stdout, "link flap") != 2 { // the summary's line and eth1's
				t.Errorf("plan does not predict the renames as they happen: %s", plan)
			}
			e.mustRun(0, "apply", file)
			names := map[string]string{}
			for i, name := range tc.want {
				names[fmt.Sprintf("eth%d", i)] = name
			}
			e.wantNICNames("after the apply", boot, names)
			for i, name := range tc.want {
				if l := e.link(name); l["address"] != swapMAC(i) {
					t.Errorf("ip -j link %s: address %v, want %s", name, l["address"], swapMAC(i))
				}
				if addrs := e.ip("-j", "addr", "show", "dev", name); !strings.Contains(addrs, fmt.Sprintf(`"local":"192.0.2.%d"`, 10+i)) {
					t.Errorf("ip -j addr show dev %s: %s, want 192.0.2.%d", name, addrs, 10+i)
				}
			}
			if res := e.mustRun(0, "apply", "--json", file); strings.Contains(res.stdout, `"op"`) {
				t.Errorf("second apply ran operations: %s", res.stdout)
			}
			e.mustRun(0, "apply", e.writeFile("none.json", `{"version": 1}`))
			back := map[string]string{}
			for came := range boot {
				back[came] = came
			}
			e.wantNICNames("after leaving the intent", boot, back)
		})
	}
}

// A NIC holding the wanted name that no interface of the intent matches
// is refused by plan and apply, naming both NICs, and nothing is renamed.
func TestAgentCLIMatchSwapUnmatchedHolder(t *testing.T) {
	t.Parallel()
	e, boot := cliSwapEnv(t, 2)
	file := e.writeFile("half.json", fmt.Sprintf(`{"version": 1, "interfaces": [
		{"name": "eth0", "type": "physical", "match": {"mac": %q}},
		{"name": "lan9", "type": "physical", "match": {"mac": "02:00:00:00:0e:99"}}]}`, swapMAC(1)))
	says := "the NIC it matches is eth1, and eth0 name is another link's"
	if plan := e.mustRun(1, "plan", file); !strings.Contains(plan.stdout, "interface/eth0: predicted to fail: ") || !strings.Contains(plan.stdout, says) {
		t.Errorf("plan does not predict %q: %s", says, plan)
	}
	if res := e.mustRun(1, "apply", file); !strings.Contains(res.stderr, says) {
		t.Errorf("apply: %s\nwant %q", res, says)
	}
	e.wantNICNames("after the refusal", boot, map[string]string{"eth0": "eth0", "eth1": "eth1"})
}
