package render

import (
	"encoding/json"
	"net/netip"
	"strings"
	"testing"

	"github.com/netagent/netagent/items"
)

// A wireguard interface renders to an Interface of kind wireguard with the
// key files as paths (no file is read: none of them exists), and comes
// back from its items (what `netagent show` sees) as the same intent; a
// route over it depends on it as over any interface.
func TestWireguardRenderAndBack(t *testing.T) {
	const k1, k2 = "xTIBA5rboUvnH4htodjb6e697QjLERt1NAB4mZqp8Dg=", "HIgo9xNzJMWLKASShiTqIybxZ0U3wGLiUeJ1PKf8ykw="
	g := mustRender(t, parse(t, `{"version": 1, "interfaces": [
		{"name": "wg0", "type": "wireguard", "mtu": 1420, "addresses": ["10.99.0.1/24"],
		 "wireguard": {"privateKeyFile": "/nonexistent/wg0.key", "listenPort": 51820, "fwmark": 66, "peers": [
			{"publicKey": "`+k1+`", "presharedKeyFile": "/nonexistent/p1.psk", "allowedIPs": ["10.99.0.0/24", "2001:db8:99::/64"],
			 "endpoint": "192.0.2.9:51820", "persistentKeepalive": 25},
			{"publicKey": "`+k2+`", "endpoint": "[2001:db8::9]:4500"}]}},
		{"name": "wg1", "type": "wireguard", "wireguard": {"privateKeyFile": "/nonexistent/wg1.key"}}],
		"routes": [{"to": "10.98.0.0/16", "dev": "wg0"}]}`))
	want := &items.Interface{IfName: "wg0", Kind: items.KindWireguard, MTU: 1420, AdminUp: true, Attrs: &items.WireguardAttrs{
		PrivateKeyFile: "/nonexistent/wg0.key", ListenPort: 51820, FwMark: 66, Peers: []items.WireguardPeer{{
			PublicKey: k1, PresharedKeyFile: "/nonexistent/p1.psk", PersistentKeepalive: 25,
			AllowedIPs: []netip.Prefix{netip.MustParsePrefix("2001:db8:99::/64"), netip.MustParsePrefix("10.99.0.0/24")},
			Endpoint:   netip.MustParseAddrPort("192.0.2.9:51820"),
		}, {PublicKey: k2, Endpoint: netip.MustParseAddrPort("[2001:db8::9]:4500")}}}}
	got, ok := g.Get(items.InterfaceRef("wg0"))
	if !ok || !got.Equal(want) {
		t.Errorf("wg0: got %v, want %v", got, want)
	}
	routeDeps := false
	for it := range g.Items() {
		if r, ok := it.(*items.Route); ok && r.Dst.String() == "10.98.0.0/16" {
			for _, d := range r.Dependencies() {
				routeDeps = routeDeps || d.RequiredItem == items.InterfaceRef("wg0")
			}
		}
	}
	if !routeDeps {
		t.Error("the route over wg0 does not depend on it")
	}
	back, data := reparse(t, ToIntent(itemsOf(g)))
	if err := back.Validate(); err != nil {
		t.Fatalf("invalid: %v\n%s", err, data)
	}
	sameItems(t, mustRender(t, back), g)
	if !strings.Contains(string(data), `"endpoint": "[2001:db8::9]:4500"`) {
		t.Errorf("IPv6 endpoint not in [v6]:port form:\n%s", data)
	}
	var raw map[string]any
	if err := json.Unmarshal(data, &raw); err != nil || strings.Contains(string(data), "privateKey\"") {
		t.Errorf("show output: %v\n%s", err, data)
	}
}
