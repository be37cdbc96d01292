//go:build vmtest

package netns_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"strings"
	"testing"

	"github.com/netagent/netagent/agent/intent"
	"github.com/netagent/netagent/internal/netnsx"
	"github.com/netagent/netagent/internal/testns"
	"github.com/netagent/netagent/test/vm"
)

// eniAdoptPeer is where a VM case's ping goes: a peer namespace at the
// far end of the case's NICs (their stand-ins' peers), with an address
// the case reaches over its own links.
type eniAdoptPeer struct {
	// nics are the NICs whose stand-ins' peers move into the peer
	// namespace; more than one (a bond's slaves) are joined there by a
	// bridge, so that the peer is behind every slave.
	nics []string
	// vid puts the peer's address on a VLAN of that ID (802.1Q) on top
	// of the NIC's peer or the bridge; bridgeVLAN: unless the case's
	// bridge sends that VLAN untagged out of nics[0].
	vid        int
	bridgeVLAN bool
	addr       string // the peer's address, with the subnet's length
	// far is an address on the peer's lo that the ping goes to by the
	// case's gateway (addr); "": the ping goes to addr.
	far  string
	bind string // ping -I: the case's VRF, whose table has the route
	// across is a NIC behind which a second peer namespace has
	// acrossAddr (on VLAN vid as the bridge sends it out of that NIC):
	// the ping goes from the first peer through the case's bridge to it.
	across, acrossAddr string
}

// eniAdoptPeers are the peers of eniVMCases: each a ping through what
// only the VM's kernel has.
var eniAdoptPeers = map[string]eniAdoptPeer{
	// Through the 802.3ad bond (no LACP partner: the bond sends over one
	// aggregator, and the bridge answers on the slave it learnt from),
	// by the default route via 192.0.2.1.
	"vm:bond": {nics: []string{"eth1", "eth2"}, addr: "192.0.2.1/24", far: "203.0.113.77"},
	// Through the active-backup bond: its primary eth2 carries it.
	"vm:bond-active-backup": {nics: []string{"eth1", "eth2"}, addr: "198.51.100.1/24"},
	// Through the VLAN mgmt (200 on eth0) by its default route via
	// 10.200.0.254: tagged frames on eth0.
	"vm:vlan": {nics: []string{"eth0"}, vid: 200, addr: "10.200.0.254/24", far: "203.0.113.77"},
	// Through VLAN 10 on the balance-xor bond.
	"vm:bond-vlan": {nics: []string{"eth1", "eth2"}, vid: 10, addr: "10.10.0.1/24"},
	// Through the VRF blue: its table's default route via 192.0.2.1 on
	// eth1 (ping -I blue).
	"vm:vrf": {nics: []string{"eth1"}, addr: "192.0.2.1/24", far: "203.0.113.77", bind: "blue"},
	// Through the VLAN-aware bridge, from a peer behind eth1 to one
	// behind eth3 in VLAN 20 (tagged on eth1, eth3's PVID: each as the
	// bridge sends it). br0's own address cannot carry a ping: ifupdown2
	// gives br0 itself only VLAN 1 (bridge-pvid 10 is its ports'
	// default), which no port carries.
	"vm:vlan-aware-bridge": {nics: []string{"eth1"}, vid: 20, bridgeVLAN: true, addr: "192.0.2.201/24",
		across: "eth3", acrossAddr: "192.0.2.203/24"},
}

// TestInVMAdoptENI takes over, for each VM case (eniVMCases), a
// namespace ifupdown2 configured (ifup -a -i FILE, as TestInVMENIOracle
// runs it), as TestAdoptSwitchover does on the host: import eni, plan
// --adopt lists only adoptions, apply --adopt under ip monitor and a ping
// every 10 ms through the case's bond, VLAN, VRF or VLAN-aware bridge to a
// peer namespace (eniAdoptPeers); no deletion, no ping lost, the kernel
// as ifupdown2 left it, a second apply writes nothing (no operation, no
// kernel event), and an intent without objects deletes exactly what was
// adopted, leaving a foreign address and route on uplink0 alone. The
// VM's Linux 6.1 keeps an IPv4 address's IFA_PROTO on an in-place
// replace: those addresses are adopted by the state directory's record
// (configurators/l3/addrrecord.go); docs/migrating.md has the figures.
func TestInVMAdoptENI(t *testing.T) {
	if !vm.InGuest() {
		t.Fatal("this test runs in the VM only: go test -run '^TestVM$' ./test/netns/")
	}
	var table []string
	for _, name := range slices.Sorted(maps.Keys(eniVMCases)) {
		var f takeoverFigures
		ok := t.Run(name, func(t *testing.T) { f = eniAdoptCase(t, name) })
		table = append(table, fmt.Sprintf("%-24s %-4s %s", name, map[bool]string{true: "ok", false: "FAIL"}[ok], f))
	}
	t.Logf("switch-over figures in the VM:\n%s", strings.Join(table, "\n"))
}

// eniAdoptCase runs the switch-over of one VM case.
func eniAdoptCase(t *testing.T, name string) takeoverFigures {
	spec, ok := eniAdoptPeers[name]
	if !ok {
		t.Fatalf("%s has no peer in eniAdoptPeers", name)
	}
	file := eniWriteCase(t, eniVMCases[name])
	in, refusal := eniVMImport(t, file)
	if in == nil {
		t.Fatalf("netagent import eni refused it: %s", refusal)
	}
	e := eniVMNewEnv(t)
	// uplink0, as cliNewEnv's: the monitor's mark route and the foreign
	// sentinel go over it.
	e.ip("link", "add", "uplink0", "type", "veth", "peer", "name", "uplink0-peer")
	e.ip("link", "set", "uplink0", "up")
	e.ip("link", "set", "uplink0-peer", "up")
	takeoverAddSentinel(e)
	eniStandIns(e, in)
	w := eniAdoptWire(t, e, in, spec) // the hardware is wired before the host boots
	eniVMIfup(t, e, file)
	path := eniAdoptPath(t, e, w, spec)
	f, adopted, mon := takeoverTakeOver(t, e, path, false, "eni", file)
	f.removed = takeoverRemoval(t, e, mon, in, adopted)
	return f
}

// eniAdoptWired is the peer side of a case: the peer namespace and the
// device there its address goes on (or its VLAN), and for a ping across
// a bridge the second peer's.
type eniAdoptWired struct {
	p, q       *netnsx.Target
	pdev, qdev string
}

// eniAdoptWire makes the peer namespace and moves into it the stand-ins'
// peers of spec's NICs, joined by a bridge when there are several, and
// for spec.across a second peer namespace with that NIC's.
func eniAdoptWire(t *testing.T, e *eniVMEnv, in *intent.Intent, spec eniAdoptPeer) eniAdoptWired {
	t.Helper()
	var w eniAdoptWired
	w.p, w.pdev = eniAdoptPeerNS(t, e, in, spec.nics)
	if spec.across != "" {
		w.q, w.qdev = eniAdoptPeerNS(t, e, in, []string{spec.across})
	}
	return w
}

// eniAdoptPeerNS makes a peer namespace with the stand-ins' peers of
// nics, joined by a bridge pbr when there are several, and returns it
// and the device the peer's address goes on.
func eniAdoptPeerNS(t *testing.T, e *eniVMEnv, in *intent.Intent, nics []string) (*netnsx.Target, string) {
	t.Helper()
	p := testns.New(t)
	pip := func(args ...string) { testns.Exec(t, p, "ip", args...) }
	pip("link", "set", "lo", "up")
	dev := "pbr"
	if len(nics) > 1 {
		pip("link", "add", "pbr", "type", "bridge") // STP off: ports forward at once
	}
	for _, nic := range nics {
		peer := takeoverStandIn(t, in, intent.Interface{Name: nic})
		e.ip("link", "set", peer, "netns", p.Name)
		if len(nics) > 1 {
			pip("link", "set", peer, "master", "pbr")
		} else {
			dev = peer
		}
		pip("link", "set", peer, "up")
	}
	pip("link", "set", dev, "up")
	return p, dev
}

// eniAdoptPath gives the peers their addresses, once the old tool has
// run (a VLAN-aware bridge's VLANs are read back from the kernel), and
// returns the path of the ping.
func eniAdoptPath(t *testing.T, e *eniVMEnv, w eniAdoptWired, spec eniAdoptPeer) takeoverPath {
	t.Helper()
	how := eniAdoptAddr(t, e, w.p, w.pdev, spec.nics, spec, spec.addr)
	target := netip.MustParsePrefix(spec.addr).Addr()
	if w.q != nil {
		to := netip.MustParsePrefix(spec.acrossAddr).Addr()
		how = fmt.Sprintf("from the peer's %s (%s) through the bridge to the second peer's %s (%s)",
			target, how, to, eniAdoptAddr(t, e, w.q, w.qdev, []string{spec.across}, spec, spec.acrossAddr))
		return takeoverPath{from: w.p, target: to, how: how}
	}
	how = fmt.Sprintf("to the peer's %s %s", target, how)
	if spec.far != "" {
		testns.Exec(t, w.p, "ip", "addr", "add", spec.far+"/32", "dev", "lo")
		how = fmt.Sprintf("to %s by the default route via %s", spec.far, strings.TrimPrefix(how, "to the peer's "))
		target = netip.MustParseAddr(spec.far)
	}
	if spec.bind != "" {
		how += " in the VRF " + spec.bind
	}
	return takeoverPath{from: e.target(), target: target, how: how, bind: spec.bind}
}

// eniAdoptAddr puts addr on dev in the peer namespace p, on a VLAN of
// spec.vid when the NIC (nics[0]) carries it tagged, and says how.
func eniAdoptAddr(t *testing.T, e *eniVMEnv, p *netnsx.Target, dev string, nics []string, spec eniAdoptPeer, addr string) string {
	t.Helper()
	pip := func(args ...string) { testns.Exec(t, p, "ip", args...) }
	how := "over " + strings.Join(nics, ", ")
	switch {
	case spec.vid != 0 && spec.bridgeVLAN && eniAdoptUntagged(t, e, nics[0], spec.vid):
		how += fmt.Sprintf(", VLAN %d untagged", spec.vid)
	case spec.vid != 0:
		pip("link", "add", "link", dev, "name", "pvlan", "type", "vlan", "id", fmt.Sprint(spec.vid))
		pip("link", "set", "pvlan", "up")
		dev = "pvlan"
		how += fmt.Sprintf(", tagged %d", spec.vid)
	}
	pip("addr", "add", addr, "dev", dev, "nodad")
	return how
}

// eniAdoptUntagged reports whether the bridge sends VLAN vid out of port
// untagged (bridge -j vlan show); it fails the test when the port does
// not carry vid.
func eniAdoptUntagged(t *testing.T, e *eniVMEnv, port string, vid int) bool {
	t.Helper()
	var ports []struct {
		Ifname string
		Vlans  []struct {
			Vlan  int
			Flags []string
		}
	}
	out := e.exec("bridge", "-j", "vlan", "show", "dev", port)
	if err := json.Unmarshal([]byte(out), &ports); err != nil {
		t.Fatalf("bridge -j vlan show dev %s: %v\n%s", port, err, out)
	}
	for _, p := range ports {
		for _, v := range p.Vlans {
			if v.Vlan == vid {
				return slices.Contains(v.Flags, "Egress Untagged")
			}
		}
	}
	t.Fatalf("%s does not carry VLAN %d:\n%s", port, vid, out)
	return false
}
