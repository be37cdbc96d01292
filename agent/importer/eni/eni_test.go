package eni

import (
	"errors"
	"strings"
	"testing"

	"github.com/netagent/netagent/agent/importer"
	"github.com/netagent/netagent/agent/intent"
)

const sample = `# a comment
auto lo
iface lo inet loopback

auto eth0
iface eth0 inet static
    address 192.0.2.10
    netmask 255.255.255.0
    gateway 192.0.2.1
    mtu 1400

auto br0
iface br0 inet static
    bridge-ports eth1 \
        eth2
    bridge-stp off
    address 198.51.100.1/24
iface br0 inet6 auto

auto eth0.10
iface eth0.10 inet dhcp
`

func TestParseSample(t *testing.T) {
	res, err := Parse("interfaces", []byte(sample), importer.Options{})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := importer.Encode(res.Intent)
	in := res.Intent
	byName := map[string]intent.Interface{}
	for _, ifc := range in.Interfaces {
		byName[ifc.Name] = ifc
	}
	if _, ok := byName["lo"]; ok {
		t.Errorf("lo with only loopback imported:\n%s", got)
	}
	eth0 := byName["eth0"]
	if eth0.MTU != 1400 || len(eth0.Addresses) != 1 || eth0.Addresses[0] != "192.0.2.10/24" {
		t.Errorf("eth0 = %+v", eth0)
	}
	br := byName["br0"]
	if br.Type != intent.LinkBridge || br.IPv6 == nil || !br.IPv6.AcceptRA || br.Addresses[0] != "198.51.100.1/24" {
		t.Errorf("br0 (two stanzas merged) = %+v", br)
	}
	for _, port := range []string{"eth1", "eth2"} {
		if byName[port].Master != "br0" {
			t.Errorf("%s not a port of br0 (continuation line):\n%s", port, got)
		}
	}
	v := byName["eth0.10"]
	if v.Type != intent.LinkVLAN || v.VLAN.Parent != "eth0" || v.VLAN.ID != 10 || v.DHCP4 == nil {
		t.Errorf("eth0.10 = %+v", v)
	}
	if len(in.Routes) != 1 || in.Routes[0].Via != "192.0.2.1" || in.Routes[0].To != "0.0.0.0/0" {
		t.Errorf("routes = %+v", in.Routes)
	}
}

func TestRefusals(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{"auto eth0\niface eth0 inet static\n  post-up ip route add 10/8 dev eth0\n", "f:3:3: iface eth0: post-up: "},
		{"auto wlan0\niface wlan0 inet dhcp\n\twpa-ssid x\n", "f:3:2: iface wlan0: wpa-ssid: "},
		{"mapping eth0\n  script /bin/x\n", "f:1:1: mapping: "},
		{"iface eth3 inet static\n  address 192.0.2.1/24\n", "f:1:7: iface eth3: not auto"},
		{"auto eth0\niface eth0 inet ppp\n", "f:2:12: iface eth0 inet ppp: "},
		{"auto eth0\niface eth0 inet static\n  hwaddress ether 02:00:00:00:00:01\n", "iface eth0: hwaddress: "},
		{"allow-ovs br0\n", "f:1:1: allow-ovs: "},
		{"auto eth0\n%for i in range(2):\n", "f:2:1: %for: a mako template"},
	} {
		_, err := Parse("f", []byte(tc.src), importer.Options{})
		var ie *importer.Error
		if !errors.As(err, &ie) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: err %v, want a refusal containing %q", tc.src, err, tc.want)
		}
	}
}

func TestSkipUnsupportedLeavesObjectOut(t *testing.T) {
	src := "auto eth0 eth1\niface eth0 inet static\n  address 192.0.2.1/24\n  post-up true\niface eth1 inet dhcp\n"
	res, err := Parse("f", []byte(src), importer.Options{SkipUnsupported: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Warnings) != 1 || res.Warnings[0].Object != "eth0" {
		t.Errorf("warnings = %v", res.Warnings)
	}
	if len(res.Intent.Interfaces) != 1 || res.Intent.Interfaces[0].Name != "eth1" {
		t.Errorf("interfaces = %+v", res.Intent.Interfaces)
	}
}

func TestInvalidValuesNotSkipped(t *testing.T) {
	for _, src := range []string{
		"auto eth0\niface eth0 inet static\n  address 192.0.2.300/24\n",
		"auto eth0\niface eth0 inet static\n  mtu x\n",
		"auto eth0\niface eth0 inet static\n  netmask 255.0.0.0\n",
		"  address 192.0.2.1/24\n",
	} {
		if _, err := Parse("f", []byte(src), importer.Options{SkipUnsupported: true}); err == nil {
			t.Errorf("%q imported", src)
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(sample))
	f.Add([]byte("auto a.b\niface a.b inet static\n netmask 1.2.3.4\n"))
	f.Add([]byte(vlanAware))
	f.Add([]byte("auto a\niface a\n  alias x $IFACE\n  link-speed 100\n<%\n x = 1\n%>\n%for i in r:\nauto b${i}\n<%def name=\"m()\">\n</%def>\n%endfor\n  vrf-table auto\n"))
	for _, tc := range expectedIntents {
		f.Add([]byte(tc.eni))
	}
	f.Add([]byte("auto vx0 lo\niface lo\n vxlan-local-tunnelip 192.0.2.1\niface vx0\n vxlan-id 7\n vxlan-mcastgrp 239.0.0.1\n vxlan-physdev x\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		res, err := Parse("f", data, importer.Options{SkipUnsupported: true})
		if err == nil {
			if _, err := importer.Encode(res.Intent); err != nil {
				t.Fatal(err)
			}
		}
	})
}

func TestIfupdown2ShortStanzas(t *testing.T) {
	res, err := Parse("f", []byte("auto lo\niface lo inet\nauto eth0\niface eth0 inet\n  address 192.0.2.1/24\n"), importer.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Intent.Interfaces) != 1 || res.Intent.Interfaces[0].Name != "eth0" {
		t.Errorf("interfaces = %+v", res.Intent.Interfaces)
	}
}

func TestDNS(t *testing.T) {
	src := "auto eth0\niface eth0 inet static\n  address 192.0.2.1/24\n  dns-nameservers 192.0.2.53 2001:db8::53\n  dns-search example.net\n"
	res, err := Parse("f", []byte(src), importer.Options{})
	if err != nil {
		t.Fatal(err)
	}
	d := res.Intent.DNS
	if d == nil || len(d.Nameservers) != 2 || len(d.Search) != 1 || d.Search[0] != "example.net" {
		t.Errorf("dns = %+v", d)
	}
}
