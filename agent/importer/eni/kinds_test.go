package eni

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/netagent/netagent/agent/importer"
	"github.com/netagent/netagent/agent/intent"
)

// importOK parses src and returns the intent's interfaces by name.
func importOK(t *testing.T, src string) map[string]intent.Interface {
	t.Helper()
	res, err := Parse("f", []byte(src), importer.Options{})
	if err != nil {
		t.Fatalf("%q: %v", src, err)
	}
	out := map[string]intent.Interface{}
	for _, ifc := range res.Intent.Interfaces {
		out[ifc.Name] = ifc
	}
	return out
}

// asJSON is v as compact JSON, for comparing sections.
func asJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// refusedAt checks that src is refused with a refusal starting with want
// (FILE:LINE:COLUMN: key: why...), and that it is skipped (unsupported)
// or not (invalid) under SkipUnsupported as skippable says.
func refusedAt(t *testing.T, src, want string, skippable bool) {
	t.Helper()
	_, err := Parse("f", []byte(src), importer.Options{})
	var ie *importer.Error
	if !errors.As(err, &ie) || !strings.Contains(err.Error(), want) {
		t.Errorf("%q: err %v, want a refusal containing %q", src, err, want)
		return
	}
	_, err = Parse("f", []byte(src), importer.Options{SkipUnsupported: true})
	if skippable != (err == nil) {
		t.Errorf("%q with SkipUnsupported: err %v, want skippable=%v", src, err, skippable)
	}
}

const vlanAware = "auto br0 swp1 swp2 swp3 swp4\niface br0\n  bridge-vlan-aware yes\n  bridge-ports swp1 swp2 swp3 swp4 swp5\n  bridge-vids 10 20-22,30\n  bridge-pvid 20\n" +
	"iface swp1\n  bridge-access 310\n" +
	"iface swp2\n  bridge-vids 707 712\n" +
	"iface swp3\n  bridge-pvid 5\n" +
	"iface swp4\n  bridge-allow-untagged no\n"

func TestBridgeVLANs(t *testing.T) {
	got := importOK(t, vlanAware)
	if br := got["br0"]; br.Bridge == nil || !br.Bridge.VLANFiltering || br.Bridge.VLANs != nil {
		t.Errorf("br0 = %s, want vlanFiltering and the kernel's own VLANs", asJSON(br))
	}
	for port, want := range map[string]string{
		// bridge-access: that VLAN alone, PVID and untagged.
		"swp1": `[{"vid":310,"pvid":true,"untagged":true}]`,
		// Its own vids; the bridge's pvid.
		"swp2": `[{"vid":20,"pvid":true,"untagged":true},{"vid":707},{"vid":712}]`,
		// The bridge's vids; its own pvid.
		"swp3": `[{"vid":5,"pvid":true,"untagged":true},{"vid":10},{"vids":"20-22"},{"vid":30}]`,
		// No untagged VLAN at all.
		"swp4": `[{"vid":10},{"vids":"20-22"},{"vid":30}]`,
		// No stanza: the bridge's defaults (20 is the PVID, not also tagged).
		"swp5": `[{"vid":20,"pvid":true,"untagged":true},{"vid":10},{"vids":"21-22"},{"vid":30}]`,
	} {
		ifc := got[port]
		if ifc.Master != "br0" || ifc.BridgePort == nil || asJSON(ifc.BridgePort.VLANs) != want {
			t.Errorf("%s = %s, want master br0 and vlans %s", port, asJSON(ifc), want)
		}
	}
}

func TestBridgeVLANDefaultsLeftToTheKernel(t *testing.T) {
	got := importOK(t, "auto br0\niface br0\n  bridge-vlan-aware on\n  bridge-ports swp1\n  bridge-pvid 1\n")
	if p := got["swp1"]; p.BridgePort != nil {
		t.Errorf("swp1 = %s: PVID 1 and no vids is the kernel's default, no bridgePort", asJSON(p))
	}
	got = importOK(t, "auto br0\niface br0\n  bridge-vlan-aware no\n  bridge-ports swp1\n")
	if br := got["br0"]; br.Bridge.VLANFiltering {
		t.Errorf("bridge-vlan-aware no: %s", asJSON(br))
	}
}

func TestBridgeVLANRefusals(t *testing.T) {
	for _, tc := range []struct {
		src, want string
		skippable bool
	}{
		{"auto br0\niface br0\n  bridge-ports swp1\n  bridge-vids 10\n", "f:4:3: iface br0: bridge-vids: ifupdown2 applies it only to a bridge-vlan-aware", true},
		{"auto br0 swp1\niface br0\n  bridge-ports swp1\niface swp1\n  bridge-access 10\n", "f:5:3: iface swp1: bridge-access: ifupdown2 applies it only", true},
		{"auto br0\niface br0\n  bridge-vlan-aware yes\n  bridge-ports swp1\n  bridge-vids 10 5000\n", "f:5:3: iface br0: bridge-vids: invalid VLAN \"5000\"", false},
		{"auto br0\niface br0\n  bridge-vlan-aware maybe\n", "f:3:3: iface br0: bridge-vlan-aware: invalid value", false},
		{"auto br0\niface br0\n  bridge-vlan-aware yes\n  bridge-pvid 0\n", "f:4:3: iface br0: bridge-pvid: invalid VLAN", false},
		{"auto br0\niface br0\n  bridge-ports glob swp1-5000\n", "f:3:3: iface br0: bridge-ports: invalid: glob swp1-5000 names more than 1024 ports", false},
	} {
		refusedAt(t, tc.src, tc.want, tc.skippable)
	}
}

func TestVXLAN(t *testing.T) {
	got := importOK(t, "auto vx0 vx1 eth0\niface eth0\n"+
		"iface vx0\n  vxlan-id 100\n  vxlan-local-tunnelip 192.0.2.1\n  vxlan-svcnodeip 192.0.2.2\n  vxlan-port 4790\n  vxlan-learning no\n  vxlan-ageing 300\n  vxlan-ttl 0\n  vxlan-purge-remotes no\n"+
		"iface vx1\n  vxlan-id 200\n  vxlan-mcastgrp 239.1.1.1\n  vxlan-physdev eth0\n  vxlan-learning yes\n")
	if v := got["vx0"]; v.Type != intent.LinkVXLAN || asJSON(v.VXLAN) != `{"vni":100,"local":"192.0.2.1","remote":"192.0.2.2","port":4790,"learning":false}` {
		t.Errorf("vx0 = %s", asJSON(v))
	}
	// vx1 has no local of its own: ifupdown2 gives it the first one given.
	if v := got["vx1"]; v.Type != intent.LinkVXLAN || asJSON(v.VXLAN) != `{"vni":200,"local":"192.0.2.1","group":"239.1.1.1","parent":"eth0"}` {
		t.Errorf("vx1 = %s", asJSON(v))
	}
	// ifupdown2 takes a unicast vxlan-mcastgrp as the remote, a multicast
	// vxlan-svcnodeip as the group.
	got = importOK(t, "auto vx0 vx1 eth0\niface eth0\niface vx0\n  vxlan-id 1\n  vxlan-mcastgrp6 2001:db8::2\niface vx1\n  vxlan-id 2\n  vxlan-svcnodeip 239.0.0.9\n  vxlan-physdev eth0\n")
	if got["vx0"].VXLAN.Remote != "2001:db8::2" || got["vx1"].VXLAN.Group != "239.0.0.9" {
		t.Errorf("vx0 = %s, vx1 = %s", asJSON(got["vx0"]), asJSON(got["vx1"]))
	}
}

// TestVXLANLocalOfLo: lo's vxlan-local-tunnelip is every VXLAN's that has
// none, and lo stays no VXLAN.
func TestVXLANLocalOfLo(t *testing.T) {
	got := importOK(t, "auto lo vx0\niface lo inet loopback\n  vxlan-local-tunnelip 192.0.2.7\niface vx0\n  vxlan-id 5\n")
	if _, ok := got["lo"]; ok || got["vx0"].VXLAN.Local != "192.0.2.7" {
		t.Errorf("lo = %s, vx0 = %s", asJSON(got["lo"]), asJSON(got["vx0"]))
	}
}

func TestVXLANRefusals(t *testing.T) {
	for _, tc := range []struct {
		src, want string
		skippable bool
	}{
		{"auto vx0\niface vx0\n  vxlan-id 10\n  vxlan-remoteip 192.0.2.9\n", "f:4:3: iface vx0: vxlan-remoteip: ifupdown2 adds each as a flooding entry", true},
		{"auto vx0\niface vx0\n  vxlan-id 10\n  vxlan-ttl 64\n", "f:4:3: iface vx0: vxlan-ttl: netagent sets only 0", true},
		{"auto vx0\niface vx0\n  vxlan-id 10\n  vxlan-ageing 30\n", "f:4:3: iface vx0: vxlan-ageing: ", true},
		{"auto vx0\niface vx0\n  vxlan-id 10\n  vxlan-mcastgrp-map 10=239.0.0.1\n", "f:4:3: iface vx0: vxlan-mcastgrp-map: ", true},
		{"auto vx0\niface vx0\n  vxlan-id 0\n", "f:3:3: iface vx0: vxlan-id: invalid VXLAN id \"0\"", false},
		{"auto vx0\niface vx0\n  vxlan-id 1\n  vxlan-port 70000\n", "f:4:3: iface vx0: vxlan-port: invalid UDP port", false},
		{"auto vx0\niface vx0\n  vxlan-id 1\n  vxlan-local-tunnelip x\n", "f:4:3: iface vx0: vxlan-local-tunnelip: invalid address", false},
		{"auto vx0\niface vx0\n  vxlan-id 1\n  vxlan-svcnodeip 192.0.2.1\n  vxlan-mcastgrp 239.0.0.1\n", "f:5:3: iface vx0: vxlan-mcastgrp: invalid: vxlan-svcnodeip and vxlan-mcastgrp exclude", false},
		{"auto vx0\niface vx0\n  vxlan-local-tunnelip 192.0.2.1\n", "f:3:3: iface vx0: vxlan-local-tunnelip: vxlan options without vxlan-id", false},
		{"auto vx0\niface vx0\n  vxlan-id 1\n  vxlan-mcastgrp 239.0.0.1\n", "f:4:3: iface vx0: vxlan-mcastgrp: a multicast group needs vxlan-physdev", false},
	} {
		refusedAt(t, tc.src, tc.want, tc.skippable)
	}
}

func TestBond(t *testing.T) {
	got := importOK(t, "auto bond0 bond1\n"+
		"iface bond0\n  bond-slaves swp1 swp2\n  bond-mode 802.3ad\n  bond-miimon 100\n  bond-lacp-rate 1\n  bond-xmit-hash-policy layer3+4\n  bond-min-links 1\n"+
		"  bond-updelay 0\n  bond-downdelay 0\n  bond-use-carrier yes\n  bond-num-grat-arp 1\n  bond-num-unsol-na 1\n  bond-ad-sys-priority 65535\n  bond-lacp-bypass-allow no\n  bond-primary-reselect always\n"+
		"iface bond1\n  bond-ports swp3 swp4\n  bond-mode 1\n  bond-primary swp4\n  bond-lacp-rate slow\n  bond-xmit-hash-policy layer2\n")
	if b := got["bond0"]; b.Type != intent.LinkBond || asJSON(b.Bond) != `{"mode":"802.3ad","miimon":100,"lacpRate":"fast","xmitHashPolicy":"layer3+4","minLinks":1}` {
		t.Errorf("bond0 = %s", asJSON(b))
	}
	// Numbers for names; the kernel's defaults left out (slow, layer2).
	if b := got["bond1"]; b.Type != intent.LinkBond || asJSON(b.Bond) != `{"mode":"active-backup","primary":"swp4"}` {
		t.Errorf("bond1 = %s", asJSON(b))
	}
	for port, master := range map[string]string{"swp1": "bond0", "swp2": "bond0", "swp3": "bond1", "swp4": "bond1"} {
		if got[port].Master != master {
			t.Errorf("%s = %s, want master %s", port, asJSON(got[port]), master)
		}
	}
	if b := importOK(t, "auto bond0\niface bond0\n  bond-slaves none\n")["bond0"]; b.Type != intent.LinkBond || b.Bond != nil {
		t.Errorf("bond-slaves none = %s, want a bond of the defaults and no ports", asJSON(b))
	}
}

func TestBondRefusals(t *testing.T) {
	const head = "auto bond0\niface bond0\n  bond-slaves swp1\n"
	for _, tc := range []struct {
		src, want string
		skippable bool
	}{
		{head + "  bond-updelay 200\n", "f:4:3: iface bond0: bond-updelay: netagent sets only an updelay of 0", true},
		{head + "  bond-downdelay 200\n", "f:4:3: iface bond0: bond-downdelay: ", true},
		{head + "  bond-ad-sys-priority 100\n", "f:4:3: iface bond0: bond-ad-sys-priority: ", true},
		{head + "  bond-ad-actor-system 02:00:00:00:00:01\n", "f:4:3: iface bond0: bond-ad-actor-system: ", true},
		{head + "  bond-use-carrier no\n", "f:4:3: iface bond0: bond-use-carrier: ", true},
		{head + "  bond-num-grat-arp 3\n", "f:4:3: iface bond0: bond-num-grat-arp: ", true},
		{head + "  bond-primary-reselect better\n", "f:4:3: iface bond0: bond-primary-reselect: ", true},
		{head + "  bond-lacp-bypass-allow yes\n", "f:4:3: iface bond0: bond-lacp-bypass-allow: ", true},
		{head + "  bond-arp-interval 100\n", "f:4:3: iface bond0: bond-arp-interval: netagent has no equivalent", true},
		{head + "  bond-mode 7\n", "f:4:3: iface bond0: bond-mode: invalid bond mode \"7\"", false},
		{head + "  bond-miimon x\n", "f:4:3: iface bond0: bond-miimon: invalid miimon", false},
		{head + "  bond-lacp-rate medium\n", "f:4:3: iface bond0: bond-lacp-rate: invalid lacp-rate", false},
		{head + "  bond-xmit-hash-policy layer5\n", "f:4:3: iface bond0: bond-xmit-hash-policy: invalid", false},
		{head + "  bond-min-links -1\n", "f:4:3: iface bond0: bond-min-links: invalid min-links", false},
		// Mode-dependent options outside their modes (balance-rr here).
		{head + "  bond-lacp-rate fast\n", "f:4:3: iface bond0: bond-lacp-rate: the kernel uses it only in mode 802.3ad, not balance-rr", true},
		{head + "  bond-xmit-hash-policy layer2+3\n", "f:4:3: iface bond0: bond-xmit-hash-policy: the kernel uses it only in mode balance-xor, 802.3ad, balance-tlb", true},
		{head + "  bond-min-links 2\n", "f:4:3: iface bond0: bond-min-links: the kernel uses it only", true},
		{head + "  bond-primary swp1\n", "f:4:3: iface bond0: bond-primary: the kernel uses it only", true},
		{"auto bond0\niface bond0\n  bond-mode 802.3ad\n", "f:3:3: iface bond0: bond-mode: bond options without bond-slaves", false},
		{"auto bond0\niface bond0\n  bond-slaves regex swp.*\n", "f:3:3: iface bond0: bond-slaves: ifupdown2's regex port patterns match the interfaces the host has", true},
	} {
		refusedAt(t, tc.src, tc.want, tc.skippable)
	}
}

func TestVRF(t *testing.T) {
	got := importOK(t, "auto eth0 mgmt\niface eth0 inet dhcp\n  vrf mgmt\niface mgmt\n  address 192.0.2.1/32\n  vrf-table 1001\n")
	if v := got["mgmt"]; v.Type != intent.LinkVRF || v.VRF == nil || v.VRF.Table != 1001 || v.Addresses[0] != "192.0.2.1/32" {
		t.Errorf("mgmt = %s", asJSON(v))
	}
	if e := got["eth0"]; e.Master != "mgmt" || e.DHCP4 == nil {
		t.Errorf("eth0 = %s", asJSON(e))
	}
	for _, tc := range []struct {
		src, want string
		skippable bool
	}{
		{"auto mgmt\niface mgmt\n  address 127.0.0.1/8\n  vrf-table 10\n", "f:3:3: iface mgmt: address: 127.0.0.1/8 is a loopback address: the intent's addresses are unicast ones", true},
		{"auto a b\niface a\n  vrf-table auto\niface b\n  vrf-table auto\n", "f:3:3: iface a: vrf-table: auto, with 2 VRFs of vrf-table auto: ifupdown2 numbers them", true},
		{"auto mgmt\niface mgmt\n  vrf-table 254\n", "f:3:3: iface mgmt: vrf-table: invalid table \"254\"", false},
		{"auto mgmt\niface mgmt\n  vrf-table 10\n  vrf-default-route yes\n", "f:4:3: iface mgmt: vrf-default-route: vrf-default-route yes: the unreachable default route Cumulus' vrf helper adds", true},
	} {
		refusedAt(t, tc.src, tc.want, tc.skippable)
	}
}

// TestFirstValueWins: of one option given twice, in one stanza or in two
// stanzas merged, ifupdown2 takes the first value; of addresses, every one.
func TestFirstValueWins(t *testing.T) {
	got := importOK(t, "auto bond0\niface bond0\n  bond-slaves swp1\n  bond-mode active-backup\n  mtu 9000\n  address 192.0.2.1/24\n"+
		"iface bond0\n  bond-mode 802.3ad\n  mtu 1500\n  address 192.0.2.2/24\n")
	b := got["bond0"]
	if b.Bond.Mode != intent.BondActiveBackup || b.MTU != 9000 || len(b.Addresses) != 2 {
		t.Errorf("bond0 = %s, want the first mode and mtu and both addresses", asJSON(b))
	}
}

// TestPortGlobs: ifupdown2's three glob forms, glob applying to the next
// word only, and a word no form matches taken as a name.
func TestPortGlobs(t *testing.T) {
	for _, tc := range []struct{ args, want string }{
		{"glob swp1-3 eth0", "swp1 swp2 swp3 eth0"},
		{"glob swp[1-2].100", "swp1.100 swp2.100"},
		{"glob swp[1-2]s[0-1]", "swp1s0 swp1s1 swp2s0 swp2s1"},
		{"eth0 glob sw1-2 swp3-4", "eth0 sw1 sw2 swp3-4"},
		{"glob nope", "nope"},
	} {
		got, why := portList(strings.Fields(tc.args))
		if why != "" || strings.Join(got, " ") != tc.want {
			t.Errorf("%q: %v %q, want %q", tc.args, got, why, tc.want)
		}
	}
}

func TestVLANs(t *testing.T) {
	got := importOK(t, "auto eth0.1.100 v7 vlan0042 qinq\niface eth0.1.100\niface v7\n  vlan-raw-device eth0\n  vlan-id 7\n"+
		"iface vlan0042\n  vlan-raw-device eth1\niface qinq\n  vlan-raw-device eth2\n  vlan-id 10\n  vlan-protocol 802.1ad\n")
	for name, want := range map[string]string{
		"eth0.1.100": `{"parent":"eth0.1","id":100}`, // ifupdown2: the parent is the name before the last dot
		"v7":         `{"parent":"eth0","id":7}`,
		"vlan0042":   `{"parent":"eth1","id":42}`,
		"qinq":       `{"parent":"eth2","id":10,"protocol":"802.1ad"}`,
	} {
		if v := got[name]; v.Type != intent.LinkVLAN || asJSON(v.VLAN) != want {
			t.Errorf("%s = %s, want vlan %s", name, asJSON(v), want)
		}
	}
	refusedAt(t, "auto myvl\niface myvl\n  vlan-raw-device eth0\n", "f:2:7: iface myvl: cannot determine the VLAN id", false)
	refusedAt(t, "auto v\niface v\n  vlan-raw-device eth0\n  vlan-protocol 802.1x\n", "f:4:3: iface v: vlan-protocol: invalid", false)
}

// TestSVIVLANs: a VLAN on a VLAN-aware bridge adds its VID to the bridge
// itself (tagged), the kernel's PVID 1 kept.
func TestSVIVLANs(t *testing.T) {
	got := importOK(t, "auto br0 br0.100 br0.200\niface br0\n  bridge-vlan-aware yes\n  bridge-ports eth1\n  bridge-vids 100 200\niface br0.100\n  address 192.0.2.1/24\niface br0.200\n")
	if b := got["br0"].Bridge; b == nil || asJSON(b.VLANs) != `[{"vid":1,"pvid":true,"untagged":true},{"vid":100},{"vid":200}]` {
		t.Errorf("br0 = %s", asJSON(got["br0"]))
	}
}

// TestUnderscoreKeys: ifupdown2 reads bond_mode as bond-mode; a refusal
// names the key as written.
func TestUnderscoreKeys(t *testing.T) {
	if b := importOK(t, "auto bond0\niface bond0\n  bond_slaves eth0\n  bond-xmit_hash_policy layer2+3\n  bond-mode balance-xor\n")["bond0"]; asJSON(b.Bond) != `{"mode":"balance-xor","xmitHashPolicy":"layer2+3"}` {
		t.Errorf("bond0 = %s", asJSON(b))
	}
	refusedAt(t, "auto br0\niface br0\n  ovs_type OVSBridge\n", "f:3:3: iface br0: ovs_type: ", true)
}

func TestVLANStanzaRefused(t *testing.T) {
	refusedAt(t, "auto br0\niface br0\n  bridge-ports eth1\nvlan br0.100\n  bridge-igmp-querier-src 192.0.2.1\n", "f:4:1: vlan: ifupdown2's vlan stanza", true)
}

// TestLoopbackAddressOnVRF: 127.0.0.1/8 on a VRF is refused; under
// --skip-unsupported only the address is left out, the VRF and its
// members stay (ifupdown2's mgmt-vrf example).
func TestLoopbackAddressOnVRF(t *testing.T) {
	src := "auto eth0 mgmt\niface eth0 inet dhcp\n  vrf mgmt\niface mgmt\n  address 127.0.0.1/8\n  vrf-table auto\n  vrf-default-route no\n"
	res, err := Parse("f", []byte(src), importer.Options{SkipUnsupported: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := asJSON(res.Intent.Interfaces); got != `[{"name":"eth0","type":"physical","mtu":1500,"master":"mgmt","dhcp4":true},{"name":"mgmt","type":"vrf","vrf":{"table":1001}}]` {
		t.Errorf("interfaces %s", got)
	}
	if len(res.Warnings) != 2 || res.Warnings[0].Object != "address 127.0.0.1/8 of mgmt" {
		t.Errorf("warnings %v", res.Warnings)
	}
}
