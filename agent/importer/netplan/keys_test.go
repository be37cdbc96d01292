package netplan

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/netagent/netagent/agent/importer"
	"github.com/netagent/netagent/agent/intent"
)

// importOne imports body as one file a.yaml.
func importOne(t *testing.T, body string, opts importer.Options) (*importer.Result, error) {
	t.Helper()
	return Import([]string{write(t, t.TempDir(), "a.yaml", body)}, opts)
}

// imported is body's intent as compact JSON, failing the test on an error.
func imported(t *testing.T, body string) string {
	t.Helper()
	res, err := importOne(t, body, importer.Options{})
	if err != nil {
		t.Fatalf("%s: %v", body, err)
	}
	data, err := json.Marshal(res.Intent)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// TestImportKeysMapped: each key as the intent says it (the JSON of the
// interfaces and routes the document imports to).
func TestImportKeysMapped(t *testing.T) {
	for _, c := range []struct{ name, body, want string }{
		{"match by one literal name, no set-name: that name",
			"network:\n  ethernets:\n    id0: {match: {name: eth3}, addresses: [192.0.2.1/24], routes: [{to: 10.0.0.0/8, via: 192.0.2.9}]}\n",
			`"interfaces":[{"name":"eth3","type":"physical","addresses":["192.0.2.1/24"]}],"routes":[{"to":"10.0.0.0/8","via":"192.0.2.9","dev":"eth3"}]`},
		{"match macaddress is the permanent MAC; set-name after routes renames them too",
			"network:\n  ethernets:\n    id0:\n      routes: [{to: 10.0.0.0/8, via: 192.0.2.9}]\n      match: {macaddress: \"52:54:00:AA:BB:CC\", driver: [e1000e]}\n      set-name: lan0\n",
			`"interfaces":[{"name":"lan0","type":"physical","match":{"permanentMac":"52:54:00:aa:bb:cc","driver":"e1000e"}}],"routes":[{"to":"10.0.0.0/8","via":"192.0.2.9","dev":"lan0","onlink":true}]`},
		{"match by name glob with set-name",
			"network:\n  ethernets:\n    id0: {match: {name: \"enp*\", driver: ixgbe}, set-name: up0}\n",
			`"interfaces":[{"name":"up0","type":"physical","match":{"driver":"ixgbe","name":"enp*"}}]`},
		{"a vlan's link and a bond's ports and primary name the set-name",
			"network:\n  ethernets:\n    a: {match: {macaddress: \"52:54:00:00:00:01\"}, set-name: nic1}\n  vlans:\n    v5: {id: 5, link: a}\n",
			`"interfaces":[{"name":"nic1","type":"physical","match":{"permanentMac":"52:54:00:00:00:01"}},{"name":"v5","type":"vlan","vlan":{"parent":"nic1","id":5}}]`},
		{"gateway4 and gateway6: default routes through the device",
			"network:\n  ethernets:\n    e0: {addresses: [192.0.2.1/24, \"2001:db8::1/64\"], gateway4: 192.0.2.254, gateway6: \"2001:db8::fe\"}\n",
			`"routes":[{"to":"0.0.0.0/0","via":"192.0.2.254","dev":"e0"},{"to":"::/0","via":"2001:db8::fe","dev":"e0"}]`},
		{"a route's mtu",
			"network:\n  ethernets:\n    e0: {addresses: [192.0.2.1/24], routes: [{to: 10.0.0.0/8, via: 192.0.2.9, mtu: 1400}]}\n",
			`"routes":[{"to":"10.0.0.0/8","via":"192.0.2.9","dev":"e0","mtu":1400}]`},
		{"dhcp6-overrides that say what the client does",
			"network:\n  ethernets:\n    e0: {dhcp6: true, dhcp6-overrides: {use-dns: true, use-routes: yes}}\n",
			`"interfaces":[{"name":"e0","type":"physical","ipv6":{"acceptRA":true,"dhcp6":true}}]`},
		{"dhcp4 routes have netplan's metric 100 unless an override says",
			"network:\n  ethernets:\n    e0: {dhcp4: yes}\n    e1: {dhcp4: true, dhcp4-overrides: {route-metric: 0}}\n",
			`"interfaces":[{"name":"e0","type":"physical","dhcp4":{"routeMetric":100}},{"name":"e1","type":"physical","dhcp4":true}]`},
		{"dhcp-identifier mac: no client id, the server knows the MAC",
			"network:\n  ethernets:\n    e0: {dhcp4: yes, dhcp-identifier: mac}\n",
			`"interfaces":[{"name":"e0","type":"physical","dhcp4":{"routeMetric":100}}]`},
		{"dhcp4-overrides without dhcp4 do nothing",
			"network:\n  ethernets:\n    e0: {dhcp4: no, dhcp4-overrides: {route-metric: 5}}\n",
			`"interfaces":[{"name":"e0","type":"physical"}]`},
		{"bond parameters, with netplan's time suffixes",
			"network:\n  ethernets:\n    a: {}\n    b: {}\n  bonds:\n    bd: {interfaces: [a, b], parameters: {mode: 802.3ad, lacp-rate: fast, mii-monitor-interval: 1s, transmit-hash-policy: layer3+4, min-links: 1}}\n",
			`{"name":"bd","type":"bond","bond":{"mode":"802.3ad","miimon":1000,"lacpRate":"fast","xmitHashPolicy":"layer3+4","minLinks":1}}`},
		{"an active-backup bond's primary",
			"network:\n  ethernets:\n    a: {}\n    b: {}\n  bonds:\n    bd: {interfaces: [a, b], parameters: {mode: active-backup, primary: b, mii-monitor-interval: 100}}\n",
			`"bond":{"mode":"active-backup","miimon":100,"primary":"b"}`},
		{"bridge parameters: stp on unless said, forward-delay in centiseconds, port cost and priority on the port",
			"network:\n  ethernets:\n    a: {}\n  bridges:\n    br: {interfaces: [a], parameters: {forward-delay: 4, path-cost: {a: 7}, port-priority: {a: 3}}}\n",
			`"interfaces":[{"name":"a","type":"physical","master":"br","bridgePort":{"cost":7,"priority":3}},{"name":"br","type":"bridge","bridge":{"stp":true,"forwardDelay":400}}]`},
		{"bridge stp off, forward-delay in ms",
			"network:\n  bridges:\n    br: {parameters: {stp: false, forward-delay: 1500ms}}\n",
			`"bridge":{"forwardDelay":150}`},
	} {
		if got := imported(t, c.body); !strings.Contains(got, c.want) {
			t.Errorf("%s:\n got %s\nwant %s", c.name, got, c.want)
		}
	}
}

// TestImportKeysRefused: each key netagent cannot express, or a bad value,
// is refused at its FILE:LINE:COLUMN with the key and why.
func TestImportKeysRefused(t *testing.T) {
	for body, want := range map[string]string{
		"network:\n  ethernets:\n    id0: {match: {macaddress: \"52:54:00:00:00:01\"}}\n":      "a.yaml:3:11: network.ethernets.id0.match: a match without set-name keeps the kernel's name",
		"network:\n  ethernets:\n    id0: {match: {name: \"en*\"}}\n":                          "a.yaml:3:11: network.ethernets.id0.match: a match without set-name",
		"network:\n  ethernets:\n    id0: {set-name: x}\n":                                     "a.yaml:3:21: set-name: needs a match",
		"network:\n  ethernets:\n    id0: {match: {driver: \"ixgb*\"}, set-name: x}\n":         "a.yaml:3:27: driver: netagent matches a driver by its exact name, not by a glob",
		"network:\n  ethernets:\n    id0: {match: {driver: [a, b]}, set-name: x}\n":            "a.yaml:3:27: driver: netagent matches one driver by its exact name",
		"network:\n  ethernets:\n    id0: {match: {path: x}, set-name: x}\n":                   "a.yaml:3:19: path: netagent does not match NICs by this key",
		"network:\n  ethernets:\n    e0: {macaddress: \"52:54:00:00:00:01\"}\n":                "a.yaml:3:10: macaddress: the intent sets the MAC of virtual interfaces only",
		"network:\n  ethernets:\n    e0: {gateway4: \"2001:db8::1\"}\n":                        "a.yaml:3:20: gateway4: is not an IPv4 address",
		"network:\n  ethernets:\n    e0: {gateway6: 192.0.2.1}\n":                              "a.yaml:3:20: gateway6: is not an IPv6 address",
		"network:\n  ethernets:\n    e0: {routes: [{to: 10.0.0.0/8, mtu: 20}]}\n":              "a.yaml:3:41: mtu: is not a number from 68 to 65535",
		"network:\n  ethernets:\n    e0: {routes: [{to: 10.0.0.0/8, congestion-window: 9}]}\n": "a.yaml:3:36: congestion-window: the intent's routes have no such setting",
		"network:\n  ethernets:\n    e0: {routes: [{to: 10.0.0.0/8, bogus: 9}]}\n":             "a.yaml:3:36: bogus: unknown route key",
		"network:\n  ethernets:\n    e0: {dhcp6: true, dhcp6-overrides: {use-dns: false}}\n":   "a.yaml:3:41: use-dns: the intent's DHCPv6 client (ipv6.dhcp6) has no settings",
		"network:\n  ethernets:\n    e0: {dhcp6: true, dhcp6-overrides: {route-metric: 5}}\n":  "a.yaml:3:41: route-metric: the intent's DHCPv6 client",
		"network:\n  ethernets:\n    e0: {dhcp6: true, dhcp6-overrides: {x: 5}}\n":             "a.yaml:3:41: x: unknown dhcp6 override",
		"network:\n  ethernets:\n    e0: {dhcp4: true, dhcp4-overrides: {use-ntp: false}}\n":   "a.yaml:3:41: use-ntp: the intent's dhcp4 section has no such setting",
		"network:\n  ethernets:\n    e0: {dhcp-identifier: duid}\n":                            "a.yaml:3:27: dhcp-identifier: netagent's DHCP client sends no DUID",
		"network:\n  ethernets:\n    e0: {dhcp-identifier: x}\n":                               "a.yaml:3:27: dhcp-identifier: is not duid or mac",
		"network:\n  bonds:\n    b: {parameters: {up-delay: 200}}\n":                           "a.yaml:3:22: up-delay: the intent's bond section has no such setting",
		"network:\n  bonds:\n    b: {parameters: {ad-select: count}}\n":                        "a.yaml:3:22: ad-select: the intent's bond section",
		"network:\n  bonds:\n    b: {parameters: {mode: fast}}\n":                              "a.yaml:3:28: mode: \"fast\" is not one of balance-rr",
		"network:\n  bonds:\n    b: {parameters: {lacp-rate: often}}\n":                        "a.yaml:3:33: lacp-rate: \"often\" is not one of slow, fast",
		"network:\n  bonds:\n    b: {parameters: {mii-monitor-interval: 1x}}\n":                "a.yaml:3:44: mii-monitor-interval: is not a time",
		"network:\n  bonds:\n    b: {parameters: {bogus: 1}}\n":                                "a.yaml:3:22: bogus: unknown bond parameter",
		"network:\n  bridges:\n    b: {parameters: {priority: 100}}\n":                         "a.yaml:3:22: priority: the intent's bridge section has no such setting",
		"network:\n  bridges:\n    b: {parameters: {hello-time: 2}}\n":                         "a.yaml:3:22: hello-time: the intent's bridge section",
		"network:\n  bridges:\n    b: {parameters: {forward-delay: 31}}\n":                     "a.yaml:3:37: forward-delay: is not a time from 0 to 30000ms",
		"network:\n  bridges:\n    b: {parameters: {forward-delay: 15ms}}\n":                   "in steps of 10ms",
		"network:\n  bridges:\n    b: {parameters: {path-cost: {nic9: 4}}}\n":                  "a.yaml:3:34: nic9: is no device",
		"network:\n  bridges:\n    b: {interfaces: [nic9]}\n":                                  "a.yaml:3:22: interfaces: names nic9, which is no device",
	} {
		_, err := importOne(t, body, importer.Options{})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q:\n got %v\nwant %q", body, err, want)
		}
	}
}

// TestImportNameserversWarn: per-link nameservers are merged into the
// host's dns, with one warning (kept, not left out) at the first.
func TestImportNameserversWarn(t *testing.T) {
	res, err := importOne(t, "network:\n  ethernets:\n    a: {nameservers: {addresses: [192.0.2.53], search: [x.example]}}\n"+
		"    b: {nameservers: {addresses: [192.0.2.53, 192.0.2.54]}}\n", importer.Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := intent.DNS{Nameservers: []string{"192.0.2.53", "192.0.2.54"}, Search: []string{"x.example"}}
	if d := res.Intent.DNS; d == nil || strings.Join(d.Nameservers, ",") != strings.Join(want.Nameservers, ",") || strings.Join(d.Search, ",") != "x.example" {
		t.Errorf("dns %+v, want %+v", res.Intent.DNS, want)
	}
	if len(res.Warnings) != 1 || !res.Warnings[0].Kept || !strings.Contains(res.Warnings[0].Error(), "a.yaml:3:9: nameservers: netagent's dns is the host's") {
		t.Errorf("warnings %+v", res.Warnings)
	}
	_, err = importOne(t, "network:\n  ethernets:\n    a: {nameservers: {addresses: [192.0.2.1, 192.0.2.2]}}\n"+
		"    b: {nameservers: {addresses: [192.0.2.3, 192.0.2.4]}}\n", importer.Options{})
	if err == nil || !strings.Contains(err.Error(), "a.yaml:4:9: nameservers: merged with the other devices', more than 3 name servers") {
		t.Errorf("four servers: %v", err)
	}
}

// TestImportMatchSkipped: with --skip-unsupported, a match without
// set-name leaves the NIC out, with a warning naming it.
func TestImportMatchSkipped(t *testing.T) {
	res, err := importOne(t, "network:\n  ethernets:\n    id0: {match: {driver: e1000}}\n    e1: {}\n", importer.Options{SkipUnsupported: true})
	if err != nil || len(res.Intent.Interfaces) != 1 || res.Intent.Interfaces[0].Name != "e1" || len(res.Warnings) != 1 || res.Warnings[0].Object != "id0" {
		t.Fatalf("res %+v err %v", res, err)
	}
}
