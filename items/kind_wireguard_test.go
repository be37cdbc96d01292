package items

import (
	"net/netip"
	"strings"
	"testing"
)

const (
	wgPub1 = "xTIBA5rboUvnH4htodjb6e697QjLERt1NAB4mZqp8Dg="
	wgPub2 = "HIgo9xNzJMWLKASShiTqIybxZ0U3wGLiUeJ1PKf8ykw="
)

func wgPrefixes(ss ...string) []netip.Prefix {
	var out []netip.Prefix
	for _, s := range ss {
		out = append(out, netip.MustParsePrefix(s))
	}
	return out
}

// TestWireguardAttrs: peers are a set by public key, allowed IPs a set;
// nothing needs a recreate; a nonzero port is a conflict key; Problem
// names what the kernel would refuse or silently change; String shows
// paths, never a key but public ones.
func TestWireguardAttrs(t *testing.T) {
	a := &WireguardAttrs{PrivateKeyFile: "/k", ListenPort: 51820, Peers: []WireguardPeer{
		{PublicKey: wgPub1, AllowedIPs: wgPrefixes("10.0.0.0/8", "2001:db8::/32")},
		{PublicKey: wgPub2, Endpoint: netip.MustParseAddrPort("[2001:db8::9]:51820")}}}
	b := &WireguardAttrs{PrivateKeyFile: "/k", ListenPort: 51820, Peers: []WireguardPeer{
		{PublicKey: wgPub2, Endpoint: netip.MustParseAddrPort("[2001:db8::9]:51820")},
		{PublicKey: wgPub1, AllowedIPs: wgPrefixes("2001:db8::/32", "10.0.0.0/8")}}}
	if !a.Equal(b) || !b.Equal(a) {
		t.Error("the same peers in another order differ")
	}
	for name, change := range map[string]func(w *WireguardAttrs){
		"key file":    func(w *WireguardAttrs) { w.PrivateKeyFile = "/other" },
		"public key":  func(w *WireguardAttrs) { w.PublicKey = wgPub1 },
		"port":        func(w *WireguardAttrs) { w.ListenPort = 1 },
		"fwmark":      func(w *WireguardAttrs) { w.FwMark = 1 },
		"peer gone":   func(w *WireguardAttrs) { w.Peers = w.Peers[:1] },
		"allowed ips": func(w *WireguardAttrs) { w.Peers[1].AllowedIPs = wgPrefixes("10.0.0.0/8") },
		"endpoint":    func(w *WireguardAttrs) { w.Peers[0].Endpoint = netip.AddrPort{} },
		"keepalive":   func(w *WireguardAttrs) { w.Peers[0].PersistentKeepalive = 25 },
		"psk file":    func(w *WireguardAttrs) { w.Peers[0].PresharedKeyFile = "/p" },
		"psk sum":     func(w *WireguardAttrs) { w.Peers[0].PresharedKeySum = "ab" },
	} {
		c := *b
		c.Peers = []WireguardPeer{b.Peers[0], b.Peers[1]}
		c.Peers[1].AllowedIPs = append([]netip.Prefix(nil), b.Peers[1].AllowedIPs...)
		change(&c)
		if a.Equal(&c) {
			t.Errorf("%s: still equal", name)
		}
	}
	if a.NeedsRecreate(&WireguardAttrs{}) || a.NeedsRecreate(nil) {
		t.Error("a wireguard change needs a recreate")
	}
	if k := a.ConflictKeys("wg0"); len(k) != 1 || k[0] != "wireguard port 51820" {
		t.Errorf("conflict keys %v", k)
	}
	if k := (&WireguardAttrs{}).ConflictKeys("wg0"); k != nil {
		t.Errorf("port 0 conflict keys %v", k)
	}
	if s := a.String(); !strings.Contains(s, "private-key /k") || !strings.Contains(s, "allowed-ips 10.0.0.0/8,2001:db8::/32") {
		t.Errorf("String: %s", s)
	}
	for want, w := range map[string]*WireguardAttrs{
		"":                                 a,
		`private key file "k" is not`:      {PrivateKeyFile: "k"},
		`peer "x": not a base64 WireGuard`: {PrivateKeyFile: "/k", Peers: []WireguardPeer{{PublicKey: "x"}}},
		"peer " + wgPub1 + " twice":        {PrivateKeyFile: "/k", Peers: []WireguardPeer{{PublicKey: wgPub1}, {PublicKey: wgPub1}}},
		"not a prefix without host bits":   {PrivateKeyFile: "/k", Peers: []WireguardPeer{{PublicKey: wgPub1, AllowedIPs: []netip.Prefix{netip.MustParsePrefix("10.0.0.1/8")}}}},
		"allowed ip 10.0.0.0/8 on two peers": {PrivateKeyFile: "/k", Peers: []WireguardPeer{
			{PublicKey: wgPub1, AllowedIPs: wgPrefixes("10.0.0.0/8")}, {PublicKey: wgPub2, AllowedIPs: wgPrefixes("10.0.0.0/8")}}},
		"bad endpoint": {PrivateKeyFile: "/k", Peers: []WireguardPeer{{PublicKey: wgPub1, Endpoint: netip.MustParseAddrPort("192.0.2.1:0")}}},
	} {
		got := w.Problem("wg0")
		if (want == "") != (got == "") || !strings.Contains(got, want) {
			t.Errorf("Problem: %q, want %q", got, want)
		}
	}
	ifc := &Interface{IfName: "wg0", Kind: KindWireguard, AdminUp: true}
	if err := ifc.Validate(); err == nil {
		t.Error("a wireguard interface without attributes is valid")
	}
}
