package netplan

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/netagent/netagent/agent/importer"
)

func write(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestImportEthernetBridgeRoutes(t *testing.T) {
	f := write(t, t.TempDir(), "a.yaml", `network:
  version: 2
  ethernets:
    lan:
      match: {macaddress: "52:54:00:AA:BB:CC"}
      set-name: lan0
      dhcp4: true
      dhcp4-overrides: {route-metric: 100, use-dns: false}
    eth1: {}
  bridges:
    br0:
      interfaces: [eth1]
      addresses: [192.0.2.1/24]
      routes: [{to: default, via: 192.0.2.254, metric: 5}]
      nameservers: {addresses: [192.0.2.53]}
`)
	res, err := Import([]string{f}, importer.Options{})
	if err != nil {
		t.Fatal(err)
	}
	in := res.Intent
	if len(in.Interfaces) != 3 || in.Interfaces[0].Name != "lan0" || in.Interfaces[0].Match.PermanentMAC != "52:54:00:aa:bb:cc" {
		t.Fatalf("interfaces %+v", in.Interfaces)
	}
	if in.Interfaces[0].DHCP4.RouteMetric != 100 || *in.Interfaces[0].DHCP4.UseDNS {
		t.Errorf("dhcp4 %+v", in.Interfaces[0].DHCP4)
	}
	if in.Interfaces[1].Master != "br0" || len(in.Routes) != 1 || in.Routes[0].To != "0.0.0.0/0" || in.Routes[0].Metric != 5 {
		t.Errorf("master %q routes %+v", in.Interfaces[1].Master, in.Routes)
	}
	if in.DNS == nil || in.DNS.Nameservers[0] != "192.0.2.53" {
		t.Errorf("dns %+v", in.DNS)
	}
}

func TestImportRefusesWithPosition(t *testing.T) {
	dir := t.TempDir()
	for body, want := range map[string]string{
		"network:\n  ethernets:\n    e: {bogus: 1}\n":            "a.yaml:3:9: network.ethernets.e.bogus: unknown key",
		"network:\n  version: 2\n  version: 2\n":                 "a.yaml:3:3: version: duplicate key",
		"network:\n  ethernets:\n    e: &x {mtu: 1500}\n":        "aliases and anchors are refused",
		"network:\n  wifis:\n    wl0: {}\n":                      "a.yaml:3:5: network.wifis.wl0: netagent configures no wireless",
		"network:\n  ethernets:\n    e: {mtu: 12}\n":             "a.yaml:3:14: mtu: is not a number",
		"network:\n  ethernets:\n    e: {ipv6-privacy: true}\n":  "e.ipv6-privacy: IPv6 privacy addresses (networkd's IPv6PrivacyExtensions)",
		"network:\n  ethernets:\n    e: {addresses: [[[[]]]]}\n": "only plain values",
	} {
		f := write(t, dir, "a.yaml", body)
		_, err := Import([]string{f}, importer.Options{})
		var ie *importer.Error
		if !errors.As(err, &ie) || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: got %v, want %q", body, err, want)
		}
	}
}

func TestImportSkipUnsupportedWarns(t *testing.T) {
	f := write(t, t.TempDir(), "a.yaml", "network:\n  wifis:\n    wl0: {}\n  ethernets:\n    e0: {addresses: [192.0.2.1/24]}\n")
	res, err := Import([]string{f}, importer.Options{SkipUnsupported: true})
	if err != nil || len(res.Warnings) != 1 || len(res.Intent.Interfaces) != 1 {
		t.Fatalf("res %+v err %v", res, err)
	}
}

func TestImportMergesInNetplanOrder(t *testing.T) {
	root := t.TempDir()
	lib := write(t, root, "lib/netplan/10-a.yaml", "network:\n  ethernets:\n    e0: {mtu: 1400}\n")
	etc := write(t, root, "etc/netplan/10-a.yaml", "network:\n  ethernets:\n    e0: {mtu: 1500}\n")
	later := write(t, root, "etc/netplan/20-b.yaml", "network:\n  ethernets:\n    e0: {addresses: [192.0.2.1/24]}\n")
	res, err := Import([]string{later, etc, lib}, importer.Options{})
	if err != nil {
		t.Fatal(err)
	}
	e := res.Intent.Interfaces[0]
	if e.MTU != 1500 || len(e.Addresses) != 1 {
		t.Errorf("merged %+v", e)
	}
}

func TestOrderShadows(t *testing.T) {
	got := order([]string{"/run/netplan/b.yaml", "/lib/netplan/a.yaml", "/etc/netplan/a.yaml"})
	if strings.Join(got, " ") != "/etc/netplan/a.yaml /run/netplan/b.yaml" {
		t.Errorf("order %v", got)
	}
}

func TestImportTunnels(t *testing.T) {
	f := write(t, t.TempDir(), "t.yaml", `network:
  tunnels:
    gre1: {local: 192.0.2.1, mode: gre, remote: 198.51.100.1, key: 7, ttl: 64}
    t6: {mode: ip6ip6, local: "2001:db8::1", remote: "2001:db8::2"}
    vx: {mode: vxlan, id: 42, port: 4789, mac-learning: false, local: 192.0.2.1}
`)
	res, err := Import([]string{f}, importer.Options{})
	if err != nil {
		t.Fatal(err)
	}
	i := res.Intent.Interfaces
	if i[0].GRE == nil || i[0].GRE.Key != 7 || i[0].GRE.TTL != 64 || i[0].GRE.Local != "192.0.2.1" {
		t.Errorf("gre %+v", i[0])
	}
	if i[1].IP6Tnl == nil || i[1].IP6Tnl.Mode != "ip6ip6" || i[1].IP6Tnl.Remote != "2001:db8::2" {
		t.Errorf("ip6tnl %+v", i[1])
	}
	if i[2].VXLAN == nil || i[2].VXLAN.VNI != 42 || *i[2].VXLAN.Learning {
		t.Errorf("vxlan %+v", i[2])
	}
	f = write(t, t.TempDir(), "w.yaml", "network:\n  tunnels:\n    t0: {mode: vti}\n")
	if _, err := Import([]string{f}, importer.Options{}); err == nil || !strings.Contains(err.Error(), "w.yaml:3:16: network.tunnels.t0.mode: netagent does not import vti tunnels") {
		t.Errorf("vti: %v", err)
	}
}

// TestImportWireguard: a wireguard tunnel whose keys are files (as
// networkd v242+ takes them) is the intent's wireguard section; an inline
// key, allowed-ips with host bits and an endpoint by name are refused at
// their values.
func TestImportWireguard(t *testing.T) {
	src := "network:\n  tunnels:\n    wg0:\n      mode: wireguard\n      addresses: [10.10.10.20/24]\n      keys: {private: /etc/wg/k}\n      mark: 42\n      port: 51820\n" +
		"      peers:\n        - keys: {public: M9nt4YujIOmNrRmpIRTmYSfMdrpvE7u6WkG8FY8WjG4=, shared: /etc/wg/psk}\n          allowed-ips: [20.20.20.0/24, 2001:db8::/64]\n" +
		"          endpoint: 192.0.2.1:51820\n          keepalive: 21\n"
	f := write(t, t.TempDir(), "a.yaml", src)
	res, err := Import([]string{f}, importer.Options{})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(res.Intent.Interfaces)
	want := `[{"name":"wg0","type":"wireguard","addresses":["10.10.10.20/24"],"wireguard":{"privateKeyFile":"/etc/wg/k","listenPort":51820,"fwmark":42,` +
		`"peers":[{"publicKey":"M9nt4YujIOmNrRmpIRTmYSfMdrpvE7u6WkG8FY8WjG4=","presharedKeyFile":"/etc/wg/psk","allowedIPs":["20.20.20.0/24","2001:db8::/64"],"endpoint":"192.0.2.1:51820","persistentKeepalive":21}]}}]`
	if string(got) != want {
		t.Errorf("imported\n%s\nwant\n%s", got, want)
	}
	for _, tc := range []struct{ from, to, want string }{
		{"{private: /etc/wg/k}", "{private: 4GgaQCy68nzNsUE5aJ9fuLzHhB65tAlwbmA72MWnOm8=}", "a.yaml:6:23: private: an inline key: the intent holds no keys"},
		{"shared: /etc/wg/psk", "shared: 7voRZ/ojfXgfPOlswo3Lpma1RJq7qijIEEUEMShQFV8=", "a.yaml:10:80: shared: an inline key"},
		{"20.20.20.0/24", "20.20.20.10/24", "a.yaml:11:25: allowed-ips: 20.20.20.10/24 has host bits: the intent takes the prefix 20.20.20.0/24 only"},
		{"192.0.2.1:51820", "vpn.example.net:51820", "a.yaml:12:21: endpoint: not address:port (a host name?)"},
	} {
		f := write(t, t.TempDir(), "a.yaml", strings.Replace(src, tc.from, tc.to, 1))
		if _, err := Import([]string{f}, importer.Options{}); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err %v, want %q", tc.to, err, tc.want)
		}
	}
}

// TestImportOpenvswitchDevices: a device with an openvswitch key, and a
// bond or bridge with a port that is OVS's, is refused at that key as
// Open vSwitch's (its other keys are not read: OVS's bond modes are not
// the kernel's); left out, the NICs that were its ports go with it.
func TestImportOpenvswitchDevices(t *testing.T) {
	src := "network:\n  openvswitch:\n    ports:\n      - [p0, p1]\n  ethernets:\n    eth0:\n      openvswitch: {}\n    eth1: {}\n    eth2:\n      addresses: [192.0.2.1/24]\n" +
		"  bonds:\n    bond0:\n      interfaces: [p1, eth1]\n      parameters: {mode: balance-tcp}\n  bridges:\n    br0:\n      interfaces: [eth0]\n"
	f := filepath.Join(t.TempDir(), "a.yaml")
	if err := os.WriteFile(f, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := Import([]string{f}, importer.Options{})
	var ie *importer.Error
	if !errors.As(err, &ie) {
		t.Fatalf("err %v", err)
	}
	var got []string
	for _, r := range ie.Refusals[1:] { // [0]: network.openvswitch.ports
		got = append(got, strings.TrimPrefix(r.Error(), f))
	}
	want := ":7:20: network.ethernets.eth0.openvswitch: an Open vSwitch device|" +
		":13:20: network.bonds.bond0.interfaces: a port of Open vSwitch (network.openvswitch.ports), so netplan makes this an OVS bond|" +
		":17:20: network.bridges.br0.interfaces: eth0 is an Open vSwitch device, so netplan makes this an OVS bridge"
	for i, w := range strings.Split(want, "|") {
		if i >= len(got) || !strings.HasPrefix(got[i], w) {
			t.Errorf("refusals\n%s\nwant\n%s", strings.Join(got, "\n"), strings.ReplaceAll(want, "|", "\n"))
			break
		}
	}
	res, err := Import([]string{f}, importer.Options{SkipUnsupported: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Intent.Interfaces) != 1 || res.Intent.Interfaces[0].Name != "eth2" {
		t.Errorf("interfaces = %+v", res.Intent.Interfaces)
	}
}

// TestImportGatewayOnLinkWithoutAddress: networkd makes a route with a
// gateway onlink when its device has no static address and netplan did
// not say on-link: true (netplan writes no GatewayOnLink= otherwise), so
// the import does the same; a device with an address keeps its routes as
// written.
func TestImportGatewayOnLinkWithoutAddress(t *testing.T) {
	f := write(t, t.TempDir(), "a.yaml", `network:
  version: 2
  ethernets:
    eth0:
      dhcp4: true
      routes: [{to: 198.51.100.0/24, via: 192.0.2.1, on-link: false}, {to: 203.0.113.0/24}]
    eth1:
      addresses: [192.0.2.10/24]
      routes: [{to: default, via: 192.0.2.1}]
      gateway6: "2001:db8::1"
  vrfs:
    vrf1005:
      table: 1005
      routes: [{to: default, via: 10.10.10.4}]
`)
	res, err := Import([]string{f}, importer.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range res.Intent.Routes {
		got = append(got, fmt.Sprintf("%s via=%s dev=%s onlink=%v", r.To, r.Via, r.Dev, r.OnLink))
	}
	want := []string{
		"198.51.100.0/24 via=192.0.2.1 dev=eth0 onlink=true",
		"203.0.113.0/24 via= dev=eth0 onlink=false",
		"0.0.0.0/0 via=192.0.2.1 dev=eth1 onlink=false",
		"::/0 via=2001:db8::1 dev=eth1 onlink=false",
		"0.0.0.0/0 via=10.10.10.4 dev=vrf1005 onlink=true",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("routes:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
