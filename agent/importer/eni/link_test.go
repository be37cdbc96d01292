package eni

import (
	"strings"
	"testing"

	"github.com/netagent/netagent/agent/importer"
)

// TestAlias: alias is the rest of the line, as ifupdown2 writes it to
// ifalias (quotes kept, $IFACE replaced, the first value of two).
func TestAlias(t *testing.T) {
	got := importOK(t, "auto swp30 br0\niface swp30\n    alias \"test  network\"\n    alias other\niface br0\n  bridge-ports swp1\n  alias  uplink of $IFACE \n")
	if a := got["swp30"].Alias; a != `"test  network"` {
		t.Errorf("swp30 alias = %q", a)
	}
	if a := got["br0"].Alias; a != "uplink of br0" {
		t.Errorf("br0 alias = %q", a)
	}
	refusedAt(t, "auto eth0\niface eth0\n  alias netagent:x\n", "f:3:3: iface eth0: alias: \"netagent:x\" is netagent's ownership mark", true)
	refusedAt(t, "auto eth0\niface eth0\n  alias "+strings.Repeat("a", 247)+"\n", "f:3:3: iface eth0: alias: 247 bytes: netagent's alias is at most 246", true)
}

// TestEthtoolLink: link-speed, link-duplex and link-autoneg as ifupdown2's
// ethtool addon sets them (do_speed_settings, no policy defaults).
func TestEthtoolLink(t *testing.T) {
	for _, tc := range []struct{ opts, want, warn string }{
		{"link-speed 1000\n  link-duplex full\n  link-autoneg no", `{"speed":1000,"duplex":"full","autoneg":false}`, ""},
		{"link-speed 100", `{"speed":100,"autoneg":false}`, ""},
		{"link-autoneg on\n  link-speed 1000", `{"autoneg":true}`, "f:4:3: iface eth0: link-speed: ignored, as ifupdown2 ignores it: link-autoneg on sets only"},
		{"link-autoneg off", "null", "f:3:3: iface eth0: link-autoneg: ignored, as ifupdown2 ignores it: without link-speed"},
		{"link-duplex half", "null", "f:3:3: iface eth0: link-duplex: ignored"},
	} {
		src := "auto eth0\niface eth0\n  " + tc.opts + "\n"
		res, err := Parse("f", []byte(src), importer.Options{})
		if err != nil {
			t.Fatalf("%q: %v", src, err)
		}
		ifc := res.Intent.Interfaces[0]
		got := "null"
		if ifc.Ethtool != nil {
			got = asJSON(ifc.Ethtool.Link)
		}
		if got != tc.want {
			t.Errorf("%q: ethtool link %s, want %s", src, got, tc.want)
		}
		var warns []string
		for _, w := range res.Warnings {
			warns = append(warns, w.Error())
		}
		if all := strings.Join(warns, "\n"); tc.warn == "" && all != "" || !strings.Contains(all, tc.warn) {
			t.Errorf("%q: warnings %q, want %q", src, all, tc.warn)
		}
	}
	refusedAt(t, "auto eth0\niface eth0\n  link-speed fast\n", "f:3:3: iface eth0: link-speed: invalid link-speed \"fast\"", false)
	refusedAt(t, "auto eth0\niface eth0\n  link-duplex both\n", "f:3:3: iface eth0: link-duplex: invalid value \"both\"", false)
}

// TestVRFTableAuto: vrf-table auto is the first table of ifupdown2's
// range that no other VRF of the file names, with a warning.
func TestVRFTableAuto(t *testing.T) {
	src := "auto a b eth0\niface a\n  vrf-table auto\n  vrf-default-route no\niface b\n  vrf-table 1001\niface eth0 inet dhcp\n  vrf a\n"
	res, err := Parse("f", []byte(src), importer.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := asJSON(res.Intent.Interfaces[0]); got != `{"name":"a","type":"vrf","vrf":{"table":1002}}` {
		t.Errorf("a = %s", got)
	}
	if len(res.Warnings) != 1 || !strings.HasPrefix(res.Warnings[0].Error(), "f:3:3: iface a: vrf-table: auto is table 1002, the one ifupdown2 picks at boot") {
		t.Errorf("warnings = %v", res.Warnings)
	}
}

// TestRefusedOptionsSayWhy: the options of peers' features netagent has
// not are refused naming the feature.
func TestRefusedOptionsSayWhy(t *testing.T) {
	for key, want := range map[string]string{
		"mstpctl-portadminedge yes": "an mstpd setting",
		"mstpctl-treeprio 4096":     "an mstpd setting",
		"bridge-mcsnoop 0":          "a bridge multicast (IGMP/MLD snooping) setting",
		"clag-id 1":                 "a setting of Cumulus' MLAG",
		"clagd-peer-ip 10.0.0.2":    "a setting of Cumulus' MLAG",
		"batman-hop-penalty 23":     "a batman-adv mesh setting",
		"frobnicate 1":              "netagent has no equivalent of this option",
	} {
		name := strings.Fields(key)[0]
		refusedAt(t, "auto eth0\niface eth0\n  "+key+"\n", "f:3:3: iface eth0: "+name+": "+want, true)
	}
}

// TestSharedAddressRefused: an address (not /32, /128) on a second
// interface is refused at its line naming the first; under
// --skip-unsupported the second interface is left out, and its ports with
// it.
func TestSharedAddressRefused(t *testing.T) {
	src := "auto swp30 br0 bond3\niface swp30\n  address 12.0.0.4/24\n  address 2001:db8::5/128\n" +
		"iface br0\n  address 12.0.0.4/24\n  address 2001:db8::5/128\n  bridge-ports bond3 swp5\niface bond3\n  bond-slaves swp1\n"
	refusedAt(t, src, "f:6:3: iface br0: address: 12.0.0.4/24 is also swp30's (f:3:3): the intent gives an address", true)
	res, err := Parse("f", []byte(src), importer.Options{SkipUnsupported: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Intent.Interfaces) != 1 || res.Intent.Interfaces[0].Name != "swp30" {
		t.Errorf("interfaces = %s", asJSON(res.Intent.Interfaces))
	}
}

// TestBroadcast: the nth broadcast is the nth address's; the one netagent
// gives anyway (the subnet's, for IPv4 shorter than /31) is accepted, any
// other refused.
func TestBroadcast(t *testing.T) {
	importOK(t, "auto eth0\niface eth0\n  address 192.168.10.1/30\n  broadcast 192.168.10.3\n  address 10.0.0.1/8\n  broadcast 10.255.255.255\n")
	refusedAt(t, "auto eth0\niface eth0\n  address 192.168.10.1/30\n  broadcast 192.168.10.2\n", "f:4:3: iface eth0: broadcast: 192.168.10.2 for 192.168.10.1/30: netagent gives", true)
	refusedAt(t, "auto eth0\niface eth0\n  address 192.168.10.1/31\n  broadcast 192.168.10.1\n", "f:4:3: iface eth0: broadcast: 192.168.10.1 for 192.168.10.1/31", true)
	refusedAt(t, "auto eth0\niface eth0\n  broadcast 192.168.10.3\n", "f:3:3: iface eth0: broadcast: broadcast #1 is for an address the stanza has not", true)
	refusedAt(t, "auto eth0\niface eth0\n  address 192.168.10.1/30\n  broadcast x\n", "f:4:3: iface eth0: broadcast: invalid broadcast", false)
}
