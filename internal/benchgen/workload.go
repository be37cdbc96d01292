package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// The uplink every routes and pairs workload runs over: one end of a veth
// pair made by setup.batch, declared in the intent as a physical interface.
const (
	uplink     = "uplink0"
	uplinkAddr = "192.0.2.10/24"
	gateway    = "192.0.2.1"
	gateway2   = "192.0.2.2" // the gateway of the route change.json edits
	vxRemote   = "192.0.2.20"
	vxPort     = 4789
)

// The intent's shape, as far as the workloads use it (agent/intent is the
// reference; `netagent validate` checks what gen writes).
type (
	doc struct {
		Version    int         `json:"version"`
		Interfaces []iface     `json:"interfaces,omitempty"`
		Routes     []route     `json:"routes,omitempty"`
		Firewall   *fwTable    `json:"firewall,omitempty"`
		Nftables   *nftSection `json:"nftables,omitempty"`
	}
	iface struct {
		Name      string       `json:"name"`
		Type      string       `json:"type"`
		Bridge    *bridgeAttrs `json:"bridge,omitempty"`
		VXLAN     *vxlanAttrs  `json:"vxlan,omitempty"`
		Master    string       `json:"master,omitempty"`
		Addresses []string     `json:"addresses,omitempty"`
	}
	bridgeAttrs struct {
		STP bool `json:"stp"`
	}
	vxlanAttrs struct {
		VNI    int    `json:"vni"`
		Local  string `json:"local"`
		Remote string `json:"remote"`
		Port   int    `json:"port"`
		Parent string `json:"parent"`
	}
	route struct {
		To  string `json:"to"`
		Via string `json:"via"`
		Dev string `json:"dev"`
	}
	fwTable struct {
		Chains []chain `json:"chains"`
	}
	chain struct {
		Table    string   `json:"table"`
		Name     string   `json:"name"`
		JumpFrom string   `json:"jumpFrom"`
		Rules    []string `json:"rules"`
	}
)

// files is one workload: the contents of each file gen writes.
type files struct {
	setup, kernelName, kernel string
	intent, change            *doc
}

// workload builds the files of a kind at size n.
func workload(kind string, n, chains int) (*files, error) {
	switch kind {
	case "routes":
		return routesWorkload(n), nil
	case "pairs":
		return pairsWorkload(n), nil
	case "iptables":
		if chains < 1 || chains > n {
			return nil, fmt.Errorf("iptables: -chains %d must be between 1 and -n %d", chains, n)
		}
		return iptablesWorkload(n, chains), nil
	case "nft-rules":
		if chains < 1 || chains > n {
			return nil, fmt.Errorf("nft-rules: -chains %d must be between 1 and -n %d", chains, n)
		}
		return nftRulesWorkload(n, chains), nil
	case "nft-set":
		return nftSetWorkload(n), nil
	}
	return nil, fmt.Errorf("unknown -kind %q (routes, pairs, iptables, nft-rules or nft-set)", kind)
}

// uplinkSetup makes uplink0 as one end of an up veth pair, so that it has
// a carrier, as a NIC plugged into a switch would.
func uplinkSetup() string {
	return "link set lo up\n" +
		"link add " + uplink + " type veth peer name " + uplink + "-peer\n" +
		"link set " + uplink + "-peer up\n" +
		"link set " + uplink + " up\n"
}

// uplinkAddrLine gives uplink0 its address, with the broadcast address
// netagent sets too.
const uplinkAddrLine = "addr add " + uplinkAddr + " brd + dev " + uplink + "\n"

// uplinkIface is uplink0 as the intent declares it.
func uplinkIface() iface {
	return iface{Name: uplink, Type: "physical", Addresses: []string{uplinkAddr}}
}

// routePrefix is the i-th route's destination, a distinct IPv4 /24.
func routePrefix(i int) string {
	return fmt.Sprintf("%d.%d.%d.0/24", 10+i>>16, i>>8&255, i&255)
}

func routesWorkload(n int) *files {
	var b strings.Builder
	b.WriteString(uplinkAddrLine)
	d := &doc{Version: 1, Interfaces: []iface{uplinkIface()}}
	for i := range n {
		fmt.Fprintf(&b, "route add %s via %s dev %s proto 211\n", routePrefix(i), gateway, uplink)
		d.Routes = append(d.Routes, route{To: routePrefix(i), Via: gateway, Dev: uplink})
	}
	c := *d
	c.Routes = append([]route(nil), d.Routes...)
	c.Routes[0].Via = gateway2
	return &files{setup: uplinkSetup(), kernelName: "kernel.batch", kernel: b.String(), intent: d, change: &c}
}

// bridgeAddr is the address of the i-th pair's bridge; host picks the last
// octet, so change.json can move it within the prefix.
func bridgeAddr(i, host int) string {
	return fmt.Sprintf("10.%d.%d.%d/24", i>>8&255, i&255, host)
}

func pairsWorkload(n int) *files {
	var b strings.Builder
	b.WriteString(uplinkAddrLine)
	d := &doc{Version: 1, Interfaces: []iface{uplinkIface()}}
	for i := range n {
		br, vx := fmt.Sprintf("br%d", i), fmt.Sprintf("vx%d", i)
		fmt.Fprintf(&b, "link add %s type bridge stp_state 0\n", br)
		fmt.Fprintf(&b, "link add %s type vxlan id %d local %s remote %s dstport %d dev %s\n",
			vx, i+1, uplinkAddr[:len(uplinkAddr)-3], vxRemote, vxPort, uplink)
		fmt.Fprintf(&b, "link set %s alias netagent up\n", br)
		fmt.Fprintf(&b, "link set %s master %s alias netagent up\n", vx, br)
		fmt.Fprintf(&b, "addr add %s brd + dev %s\n", bridgeAddr(i, 1), br)
		d.Interfaces = append(d.Interfaces,
			iface{Name: br, Type: "bridge", Bridge: &bridgeAttrs{}, Addresses: []string{bridgeAddr(i, 1)}},
			iface{Name: vx, Type: "vxlan", Master: br, VXLAN: &vxlanAttrs{
				VNI: i + 1, Local: uplinkAddr[:len(uplinkAddr)-3], Remote: vxRemote, Port: vxPort, Parent: uplink}})
	}
	c := *d
	c.Interfaces = append([]iface(nil), d.Interfaces...)
	c.Interfaces[1].Addresses = []string{bridgeAddr(0, 2)} // [0] is the uplink, [1] br0
	return &files{setup: uplinkSetup(), kernelName: "kernel.batch", kernel: b.String(), intent: d, change: &c}
}

// ruleSpec is rule r of chain c.
func ruleSpec(c, r, port int) string {
	return fmt.Sprintf("-s 10.%d.%d.0/24 -p tcp --dport %d -j ACCEPT", c%250, r%250, port)
}

func iptablesWorkload(n, chains int) *files {
	var b strings.Builder
	b.WriteString("*filter\n")
	d := &doc{Version: 1, Firewall: &fwTable{}}
	for c := range chains {
		d.Firewall.Chains = append(d.Firewall.Chains, chain{Table: "filter", Name: fmt.Sprintf("NA-BENCH%04d", c), JumpFrom: "FORWARD"})
		fmt.Fprintf(&b, ":NA-BENCH%04d - [0:0]\n", c)
	}
	for c := range chains {
		ch := &d.Firewall.Chains[c]
		fmt.Fprintf(&b, "-A %s -m comment --comment netagent\n", ch.Name)
		for r := range n/chains + btoi(c < n%chains) {
			ch.Rules = append(ch.Rules, ruleSpec(c, r, 1000+r))
			fmt.Fprintf(&b, "-A %s %s\n", ch.Name, ch.Rules[r])
		}
	}
	for _, ch := range d.Firewall.Chains {
		fmt.Fprintf(&b, "-A FORWARD -m comment --comment netagent -j %s\n", ch.Name)
	}
	b.WriteString("COMMIT\n")
	c := *d
	c.Firewall = &fwTable{Chains: append([]chain(nil), d.Firewall.Chains...)}
	c.Firewall.Chains[0].Rules = append([]string(nil), d.Firewall.Chains[0].Rules...)
	c.Firewall.Chains[0].Rules[0] = ruleSpec(0, 0, 999)
	return &files{setup: "link set lo up\n", kernelName: "kernel.rules", kernel: b.String(), intent: d, change: &c}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// write puts the workload's files into dir.
func (f *files) write(dir string) error {
	intent, err := json.Marshal(f.intent)
	if err != nil {
		return err
	}
	change, err := json.Marshal(f.change)
	if err != nil {
		return err
	}
	for name, data := range map[string][]byte{
		"setup.batch": []byte(f.setup), f.kernelName: []byte(f.kernel),
		"intent.json": intent, "change.json": change,
	} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			return fmt.Errorf("writing %s: %w", name, err)
		}
	}
	return nil
}
