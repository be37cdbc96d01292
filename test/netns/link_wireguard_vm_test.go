//go:build vmtest

package netns_test

import (
	"errors"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/vishvananda/netlink"
	"golang.zx2c4.com/wireguard/wgctrl"
	"golang.zx2c4.com/wireguard/wgctrl/wgtypes"

	"github.com/netagent/netagent/configurators/link"
	"github.com/netagent/netagent/internal/netnsx"
	"github.com/netagent/netagent/items"
)

// TestInVMWireguard drives WireGuard through the reconciler on the real
// kernel (the host's has no wireguard module), with two namespaces A and B
// joined by a veth (the underlay, made with netlink as a NIC would be):
// wg0 in A and wg1 in B are created by netagent, each the other's peer,
// and a UDP datagram goes from A to B through the tunnel and back (the
// handshake done). Then in place (same ifindex): a new listen port, a
// keepalive, a peer added with a preshared key; the tunnel works on the new
// port. A rotated key file is drift the next apply repairs. A foreign
// WireGuard device is refused and untouched. Delete. Every step applied
// twice with zero operations the second time and read-back equality; and
// every configuration made in the namespace's own device (the wgctrl client
// is opened inside it: in the test's namespace there is no wg0).
func TestInVMWireguard(t *testing.T) {
	a, b := linkVMNamespace(t), linkVMNamespace(t)
	envA, envB := newLinkEnv(t, a), newLinkEnv(t, b)
	underlay(t, a, b)
	dir := t.TempDir()
	keyA, privA := wgKeyFile(t, dir, "a.key")
	keyB, privB := wgKeyFile(t, dir, "b.key")
	pskFile, _ := wgKeyFile(t, dir, "third.psk")
	third, _ := wgtypes.GeneratePrivateKey()

	wg0 := wgItem("wg0", &items.WireguardAttrs{PrivateKeyFile: keyA, ListenPort: 51820, Peers: []items.WireguardPeer{{
		PublicKey: privB.PublicKey().String(), AllowedIPs: []netip.Prefix{netip.MustParsePrefix("10.99.0.2/32")},
		Endpoint: netip.MustParseAddrPort("192.0.2.2:51821")}}})
	wg1 := wgItem("wg1", &items.WireguardAttrs{PrivateKeyFile: keyB, ListenPort: 51821, Peers: []items.WireguardPeer{{
		PublicKey: privA.PublicKey().String(), AllowedIPs: []netip.Prefix{netip.MustParsePrefix("10.99.0.0/24")},
		Endpoint: netip.MustParseAddrPort("192.0.2.1:51820")}}})
	linkWantOps(t, envA.applyTwice(wg0), "create interface/wg0")
	linkWantOps(t, envB.applyTwice(wg1), "create interface/wg1")
	if _, ok := linkNL(t, a, "wg0").(*netlink.Wireguard); !ok || linkNL(t, a, "wg0").Attrs().Alias != "netagent" {
		t.Errorf("wg0 = %T alias %q", linkNL(t, a, "wg0"), linkNL(t, a, "wg0").Attrs().Alias)
	}
	if d := wgDevice(t, a, "wg0"); d.PublicKey != privA.PublicKey() || d.ListenPort != 51820 || len(d.Peers) != 1 {
		t.Errorf("wg0 device: port %d, %d peers, own key %v", d.ListenPort, len(d.Peers), d.PublicKey == privA.PublicKey())
	}
	// show (read-back without an intent) names the key file, and the
	// peers as the intent has them.
	if it, ok := envA.readBack(nil).Get(items.InterfaceRef("wg0")); !ok ||
		items.AttrsOf[*items.WireguardAttrs](it.(*items.Interface)).PrivateKeyFile != keyA {
		t.Errorf("wg0 shown as %v", it)
	}
	if !wgAbsentHere(t, "wg0") {
		t.Error("a wg0 in the test's own namespace")
	}
	tunnelAddr(t, a, "wg0", "10.99.0.1/24")
	tunnelAddr(t, b, "wg1", "10.99.0.2/24")
	udpRoundTrip(t, a, b, "10.99.0.2:7")
	if d := wgDevice(t, a, "wg0"); d.Peers[0].LastHandshakeTime.IsZero() {
		t.Error("no handshake on wg0")
	}

	// In place: the port, a keepalive, a new peer with a preshared key.
	index := linkNL(t, a, "wg0").Attrs().Index
	wg0 = wgItem("wg0", &items.WireguardAttrs{PrivateKeyFile: keyA, ListenPort: 51830, Peers: []items.WireguardPeer{{
		PublicKey: privB.PublicKey().String(), AllowedIPs: []netip.Prefix{netip.MustParsePrefix("10.99.0.2/32")},
		Endpoint: netip.MustParseAddrPort("192.0.2.2:51821"), PersistentKeepalive: 25,
	}, {
		PublicKey: third.PublicKey().String(), PresharedKeyFile: pskFile,
		AllowedIPs: []netip.Prefix{netip.MustParsePrefix("10.98.0.0/16"), netip.MustParsePrefix("2001:db8:98::/48")},
		Endpoint:   netip.MustParseAddrPort("[2001:db8::3]:51820"),
	}}})
	linkWantOps(t, envA.applyTwice(wg0), "modify interface/wg0")
	if i := linkNL(t, a, "wg0").Attrs().Index; i != index {
		t.Errorf("modify changed the ifindex %d -> %d", index, i)
	}
	if d := wgDevice(t, a, "wg0"); d.ListenPort != 51830 || len(d.Peers) != 2 {
		t.Errorf("wg0 after modify: port %d, %d peers", d.ListenPort, len(d.Peers))
	}
	// B's kernel may have learnt A's new port already, from the keepalive
	// the new interval sends at once (roaming): then there is nothing to do.
	wg1.Attrs.(*items.WireguardAttrs).Peers[0].Endpoint = netip.MustParseAddrPort("192.0.2.1:51830")
	envB.applyTwice(wg1)
	if d := wgDevice(t, b, "wg1"); d.Peers[0].Endpoint.String() != "192.0.2.1:51830" {
		t.Errorf("wg1's peer endpoint %v", d.Peers[0].Endpoint)
	}
	udpRoundTrip(t, a, b, "10.99.0.2:7")

	// A rotated key file: drift; B learns A's new key and the tunnel works.
	rotated, _ := wgtypes.GeneratePrivateKey()
	if err := os.WriteFile(keyA, []byte(rotated.String()+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	linkWantOps(t, envA.applyTwice(wg0), "modify interface/wg0")
	if d := wgDevice(t, a, "wg0"); d.PublicKey != rotated.PublicKey() {
		t.Error("wg0 keeps its old key")
	}
	wg1.Attrs.(*items.WireguardAttrs).Peers[0].PublicKey = rotated.PublicKey().String()
	linkWantOps(t, envB.applyTwice(wg1), "modify interface/wg1")
	udpRoundTrip(t, a, b, "10.99.0.2:7")

	// A foreign WireGuard device: refused, untouched.
	if err := a.NL.LinkAdd(&netlink.Wireguard{LinkAttrs: netlink.LinkAttrs{Name: "wg9"}}); err != nil {
		t.Fatal(err)
	}
	theirs, _ := wgtypes.GeneratePrivateKey()
	port := 51899
	wgConfigure(t, a, "wg9", wgtypes.Config{PrivateKey: &theirs, ListenPort: &port})
	foreign := wgItem("wg9", &items.WireguardAttrs{PrivateKeyFile: keyA})
	if st := envA.tryApply(wg0, foreign); !errors.Is(st.Err, link.ErrNotOwned) {
		t.Errorf("intent naming the foreign wg9: %v, want ErrNotOwned\n%s", st.Err, st.OperationLog)
	}

	// Delete.
	linkWantOps(t, envA.applyTwice(), "delete interface/wg0")
	if !linkGone(t, a, "wg0") {
		t.Error("wg0 survives the delete")
	}
	if d := wgDevice(t, a, "wg9"); d.PublicKey != theirs.PublicKey() || d.ListenPort != 51899 || linkNL(t, a, "wg9").Attrs().Alias != "" {
		t.Errorf("foreign wg9 touched: port %d", d.ListenPort)
	}
	if _, ok := envA.readBack(nil).Get(items.LinkRef("wg9")); !ok {
		t.Error("foreign wg9 not read back as an external link")
	}
}

func wgItem(name string, a *items.WireguardAttrs) *items.Interface {
	return &items.Interface{IfName: name, Kind: items.KindWireguard, AdminUp: true, Attrs: a}
}

func wgKeyFile(t *testing.T, dir, name string) (string, wgtypes.Key) {
	t.Helper()
	key, err := wgtypes.GeneratePrivateKey()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(key.String()+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return path, key
}

// wgDevice reads a device with a wgctrl client opened in the namespace.
func wgDevice(t *testing.T, tgt *netnsx.Target, name string) *wgtypes.Device {
	t.Helper()
	var d *wgtypes.Device
	err := tgt.Do(func() error {
		c, err := wgctrl.New()
		if err != nil {
			return err
		}
		defer c.Close()
		d, err = c.Device(name)
		return err
	})
	if err != nil {
		t.Fatalf("reading wireguard %s: %v", name, err)
	}
	return d
}

func wgConfigure(t *testing.T, tgt *netnsx.Target, name string, cfg wgtypes.Config) {
	t.Helper()
	err := tgt.Do(func() error {
		c, err := wgctrl.New()
		if err != nil {
			return err
		}
		defer c.Close()
		return c.ConfigureDevice(name, cfg)
	})
	if err != nil {
		t.Fatalf("configuring wireguard %s: %v", name, err)
	}
}

// wgAbsentHere reports whether the test's own namespace has no such
// WireGuard device.
func wgAbsentHere(t *testing.T, name string) bool {
	t.Helper()
	c, err := wgctrl.New()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, err = c.Device(name)
	return errors.Is(err, os.ErrNotExist)
}

// underlay joins A and B with a veth, 192.0.2.1/24 in A and 192.0.2.2/24
// in B, made with netlink as a NIC would be there.
func underlay(t *testing.T, a, b *netnsx.Target) {
	t.Helper()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(a.NL.LinkAdd(&netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: "ua"}, PeerName: "ub",
		PeerNamespace: netlink.NsFd(b.NsHandle())}))
	for _, x := range []struct {
		tgt        *netnsx.Target
		name, addr string
	}{{a, "ua", "192.0.2.1/24"}, {b, "ub", "192.0.2.2/24"}} {
		l := linkNL(t, x.tgt, x.name)
		addr, err := netlink.ParseAddr(x.addr)
		must(err)
		must(x.tgt.NL.AddrAdd(l, addr))
		must(x.tgt.NL.LinkSetUp(l))
	}
}

func tunnelAddr(t *testing.T, tgt *netnsx.Target, name, cidr string) {
	t.Helper()
	addr, err := netlink.ParseAddr(cidr)
	if err != nil {
		t.Fatal(err)
	}
	if err := tgt.NL.AddrAdd(linkNL(t, tgt, name), addr); err != nil {
		t.Fatalf("address %s on %s: %v", cidr, name, err)
	}
}

// udpRoundTrip sends a datagram from A to to (an address of B's tunnel
// end) and back, through the tunnel. Sockets are made in their namespace;
// a datagram lost to the handshake is sent again, for at most a minute
// (qemu's TCG is slow), each wait ending with the answer's arrival.
func udpRoundTrip(t *testing.T, a, b *netnsx.Target, to string) {
	t.Helper()
	var server, client *net.UDPConn
	if err := b.Do(func() (err error) {
		server, err = net.ListenUDP("udp", net.UDPAddrFromAddrPort(netip.MustParseAddrPort(to)))
		return err
	}); err != nil {
		t.Fatal(err)
	}
	defer server.Close()
	if err := a.Do(func() (err error) {
		client, err = net.DialUDP("udp", nil, net.UDPAddrFromAddrPort(netip.MustParseAddrPort(to)))
		return err
	}); err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	go func() { // echo
		buf := make([]byte, 64)
		for {
			n, from, err := server.ReadFromUDP(buf)
			if err != nil {
				return
			}
			server.WriteToUDP(buf[:n], from)
		}
	}()
	deadline := time.Now().Add(time.Minute)
	buf := make([]byte, 64)
	for time.Now().Before(deadline) {
		if _, err := client.Write([]byte("through the tunnel")); err != nil {
			t.Fatalf("sending through the tunnel: %v", err)
		}
		client.SetReadDeadline(time.Now().Add(5 * time.Second))
		n, err := client.Read(buf)
		if err == nil && string(buf[:n]) == "through the tunnel" {
			return
		}
	}
	t.Fatalf("no answer from %s through the tunnel", to)
}
