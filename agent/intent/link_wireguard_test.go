package intent

import (
	"testing"
)

const (
	wgKey1 = "xTIBA5rboUvnH4htodjb6e697QjLERt1NAB4mZqp8Dg="
	wgKey2 = "HIgo9xNzJMWLKASShiTqIybxZ0U3wGLiUeJ1PKf8ykw="
)

// TestValidateWireguard: the section's fields with their JSON paths; the
// same allowed IP on two peers, a peer twice, and two interfaces on one
// listen port are refused naming both places; a host name as endpoint is
// refused (no resolver).
func TestValidateWireguard(t *testing.T) {
	runValidateCases(t, []validateCase{
		{"valid", `"interfaces": [{"name": "wg0", "type": "wireguard", "mtu": 1420, "addresses": ["10.99.0.1/24"],
			"wireguard": {"privateKeyFile": "/etc/netagent/wg0.key", "listenPort": 51820, "fwmark": 4294967295, "peers": [
				{"publicKey": "` + wgKey1 + `", "presharedKeyFile": "/etc/netagent/wg0-peer1.psk", "allowedIPs": ["10.99.0.0/24", "2001:db8:99::/64"],
				 "endpoint": "192.0.2.9:51820", "persistentKeepalive": 25},
				{"publicKey": "` + wgKey2 + `", "endpoint": "[2001:db8::9]:51820"}]}},
			{"name": "wg1", "type": "wireguard", "wireguard": {"privateKeyFile": "/k"}},
			{"name": "wg2", "type": "wireguard", "wireguard": {"privateKeyFile": "/k", "peers": [{"publicKey": "` + wgKey1 + `", "allowedIPs": ["10.99.0.0/24"]}]}}],
			"routes": [{"to": "10.98.0.0/16", "dev": "wg0"}]`, nil},
		{"section required", `"interfaces": [{"name": "wg0", "type": "wireguard"}]`,
			[]string{`interfaces[0].wireguard: is required for type "wireguard"`}},
		{"key file", `"interfaces": [{"name": "wg0", "type": "wireguard", "wireguard": {"privateKeyFile": "wg0.key",
			"peers": [{"publicKey": "` + wgKey1 + `", "presharedKeyFile": "psk"}]}},
			{"name": "wg1", "type": "wireguard", "wireguard": {"privateKeyFile": ""}}]`,
			[]string{`interfaces[0].wireguard.privateKeyFile: "wg0.key" is not an absolute path`,
				`interfaces[0].wireguard.peers[0].presharedKeyFile: "psk" is not an absolute path`,
				`interfaces[1].wireguard.privateKeyFile: is required (the path of a file holding the base64 key)`}},
		{"ranges", `"interfaces": [{"name": "wg0", "type": "wireguard", "wireguard": {"privateKeyFile": "/k", "listenPort": 65536, "fwmark": -1,
			"peers": [{"publicKey": "` + wgKey1 + `", "persistentKeepalive": 65536}]}}]`,
			[]string{`interfaces[0].wireguard.listenPort: 65536 is out of range 0-65535`,
				`interfaces[0].wireguard.fwmark: -1 is out of range 0-4294967295`,
				`interfaces[0].wireguard.peers[0].persistentKeepalive: 65536 is out of range 0-65535`}},
		{"keys", `"interfaces": [{"name": "wg0", "type": "wireguard", "wireguard": {"privateKeyFile": "/k", "peers": [
			{"publicKey": "abc"}, {}, {"publicKey": "` + wgKey1 + `"}, {"publicKey": "` + wgKey1 + `"}]}}]`,
			[]string{`interfaces[0].wireguard.peers[0].publicKey: "abc" is not a WireGuard key (the base64 of 32 bytes, as wg pubkey writes it)`,
				`interfaces[0].wireguard.peers[1].publicKey: is required`,
				`interfaces[0].wireguard.peers[3].publicKey: peer ` + wgKey1 + ` is already defined at interfaces[0].wireguard.peers[2].publicKey`}},
		{"allowed ips", `"interfaces": [{"name": "wg0", "type": "wireguard", "wireguard": {"privateKeyFile": "/k", "peers": [
			{"publicKey": "` + wgKey1 + `", "allowedIPs": ["10.99.0.1/24", "10.98.0.0/16", "nope"]},
			{"publicKey": "` + wgKey2 + `", "allowedIPs": ["10.98.0.0/16"]}]}}]`,
			[]string{`interfaces[0].wireguard.peers[0].allowedIPs[0]: 10.99.0.1/24 has host bits set (did you mean 10.99.0.0/24?)`,
				`interfaces[0].wireguard.peers[0].allowedIPs[2]: "nope" is not a CIDR prefix (like 198.51.100.0/24)`,
				`interfaces[0].wireguard.peers[1].allowedIPs[0]: 10.98.0.0/16 is already allowed at interfaces[0].wireguard.peers[0].allowedIPs[1]: the kernel keeps an allowed IP on one peer only`}},
		{"endpoints", `"interfaces": [{"name": "wg0", "type": "wireguard", "wireguard": {"privateKeyFile": "/k", "peers": [
			{"publicKey": "` + wgKey1 + `", "endpoint": "vpn.example.com:51820"},
			{"publicKey": "` + wgKey2 + `", "endpoint": "192.0.2.9"},
			{"publicKey": "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=", "endpoint": "[fe80::1%eth0]:51820"},
			{"publicKey": "BAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=", "endpoint": "224.0.0.1:51820"},
			{"publicKey": "CAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=", "endpoint": "192.0.2.9:0"}]}}]`,
			[]string{`interfaces[0].wireguard.peers[0].endpoint: "vpn.example.com:51820" names a host: netagent resolves no names, write its IP address ("[v6]:port" for IPv6)`,
				`interfaces[0].wireguard.peers[1].endpoint: "192.0.2.9" is not an address and port (like 192.0.2.9:51820 or [2001:db8::9]:51820)`,
				`interfaces[0].wireguard.peers[2].endpoint: "[fe80::1%eth0]:51820" has a zone, which is not allowed`,
				`interfaces[0].wireguard.peers[3].endpoint: 224.0.0.1 is not a unicast address`,
				`interfaces[0].wireguard.peers[4].endpoint: port 0 is not a port to send to`}},
		{"same listen port", `"interfaces": [{"name": "wg0", "type": "wireguard", "wireguard": {"privateKeyFile": "/k", "listenPort": 51820}},
			{"name": "wg1", "type": "wireguard", "wireguard": {"privateKeyFile": "/k", "listenPort": 51820}},
			{"name": "wg2", "type": "wireguard", "wireguard": {"privateKeyFile": "/k"}}, {"name": "wg3", "type": "wireguard", "wireguard": {"privateKeyFile": "/k"}}]`,
			[]string{`interfaces[1].wireguard.listenPort: WireGuard listen port 51820 is already defined at interfaces[0].wireguard.listenPort`}},
		{"no mac, no master", `"interfaces": [{"name": "br0", "type": "bridge"},
			{"name": "wg0", "type": "wireguard", "mac": "02:00:00:00:00:01", "master": "br0", "wireguard": {"privateKeyFile": "/k"}}]`,
			[]string{`interfaces[1].mac: a wireguard interface has no MAC address`,
				`interfaces[1].master: a wireguard interface is not Ethernet and cannot be a port of "br0"`}},
		{"another type's section", `"interfaces": [{"name": "d", "type": "dummy", "wireguard": {"privateKeyFile": "/k"}}]`,
			[]string{`interfaces[0].wireguard: not allowed for type "dummy"`}},
	})
}
