package link

import (
	"errors"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
	"golang.zx2c4.com/wireguard/wgctrl/wgtypes"

	"github.com/netagent/netagent/items"
	"github.com/netagent/netagent/reconciler"
)

// wgKeys makes key files in a test's directory.
type wgKeys struct {
	t   *testing.T
	dir string
}

func newWGKeys(t *testing.T) wgKeys { return wgKeys{t: t, dir: t.TempDir()} }

// private writes a new private key to name (mode 0600) and returns its path
// and key.
func (k wgKeys) private(name string) (string, wgtypes.Key) {
	k.t.Helper()
	key, err := wgtypes.GeneratePrivateKey()
	if err != nil {
		k.t.Fatal(err)
	}
	return k.write(name, key.String()+"\n", 0o600), key
}

func (k wgKeys) write(name, content string, mode os.FileMode) string {
	k.t.Helper()
	path := filepath.Join(k.dir, name)
	if err := os.WriteFile(path, []byte(content), mode); err != nil {
		k.t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil { // past the umask
		k.t.Fatal(err)
	}
	return path
}

// pub returns a new peer's public key.
func (k wgKeys) pub() string {
	k.t.Helper()
	key, err := wgtypes.GeneratePrivateKey()
	if err != nil {
		k.t.Fatal(err)
	}
	return key.PublicKey().String()
}

func wgIfc(name string, a *items.WireguardAttrs) *items.Interface {
	return &items.Interface{IfName: name, Kind: items.KindWireguard, AdminUp: true, Attrs: a}
}

func prefixes(ss ...string) []netip.Prefix {
	var out []netip.Prefix
	for _, s := range ss {
		out = append(out, netip.MustParsePrefix(s))
	}
	return out
}

// TestFakeWireguardLifecycle: create with keys, port, fwmark and peers;
// modify everything in place (one request, same ifindex); a rotated key
// file, a peer added by hand and a changed allowed IP are drift the next
// apply repairs; a port left to the kernel and a roaming peer's learnt
// endpoint are not; each step's second run writes nothing and reads back
// equal; delete.
func TestFakeWireguardLifecycle(t *testing.T) {
	e := newFakeEnv(t)
	keys := newWGKeys(t)
	keyFile, key := keys.private("wg0.key")
	pskFile, psk := keys.private("wg0-peer1.psk")
	p1, p2, p3 := keys.pub(), keys.pub(), keys.pub()
	a := &items.WireguardAttrs{PrivateKeyFile: keyFile, ListenPort: 51820, FwMark: 0x42, Peers: []items.WireguardPeer{{
		PublicKey: p1, PresharedKeyFile: pskFile, AllowedIPs: prefixes("10.99.0.0/24", "2001:db8:99::/64", "10.98.0.0/16"),
		Endpoint: netip.MustParseAddrPort("192.0.2.9:51820"), PersistentKeepalive: 25,
	}, {
		PublicKey: p2, AllowedIPs: prefixes("10.97.0.1/32"), Endpoint: netip.MustParseAddrPort("[2001:db8::9]:4500"),
	}}}
	wg0 := wgIfc("wg0", a)
	if w := e.converge(wg0); !slices.Equal(w, []string{"add wg0", "alias wg0", "wg wg0", "up wg0"}) {
		t.Errorf("create writes %v", w)
	}
	fl := e.f.byName("wg0")
	index := fl.attrs().Index
	if w := fl.wg; w.private != key || w.port != 51820 || w.mark != 0x42 || len(w.peers) != 2 ||
		w.peers[0].psk != psk || w.peers[0].keepalive != 25*time.Second || len(w.peers[0].allowed) != 3 ||
		w.peers[1].endpoint.String() != "[2001:db8::9]:4500" {
		t.Errorf("device after create: %+v", w)
	}

	// In place: port, fwmark off, peer 1 changed (allowed IPs, endpoint,
	// keepalive, no psk), peer 2 gone, peer 3 new.
	b := &items.WireguardAttrs{PrivateKeyFile: keyFile, ListenPort: 51821, Peers: []items.WireguardPeer{{
		PublicKey: p3, AllowedIPs: prefixes("10.96.0.0/24"),
	}, {
		PublicKey: p1, AllowedIPs: prefixes("10.99.0.0/24"), Endpoint: netip.MustParseAddrPort("192.0.2.10:51821"),
	}}}
	wg0 = wgIfc("wg0", b)
	if w := e.converge(wg0); !slices.Equal(w, []string{"wg wg0"}) {
		t.Errorf("modify writes %v, want one wireguard request", w)
	}
	if fl = e.f.byName("wg0"); fl.attrs().Index != index {
		t.Error("modify changed the ifindex")
	}
	if w := fl.wg; w.port != 51821 || w.mark != 0 || len(w.peers) != 2 || w.peers[0].pub.String() != p1 ||
		w.peers[0].psk != (wgtypes.Key{}) || w.peers[0].keepalive != 0 || !slices.Equal(w.peers[0].allowed, prefixes("10.99.0.0/24")) ||
		w.peers[0].endpoint.String() != "192.0.2.10:51821" || w.peers[1].pub.String() != p3 {
		t.Errorf("device after modify: %+v %+v", w, w.peers[0])
	}

	// Drift: a rotated key file, a peer added by hand, an allowed IP
	// changed by hand.
	newKey, _ := wgtypes.GeneratePrivateKey()
	keys.write("wg0.key", newKey.String(), 0o600)
	hand, _ := wgtypes.ParseKey(p2)
	if err := e.f.ConfigureDevice("wg0", wgtypes.Config{Peers: []wgtypes.PeerConfig{{PublicKey: hand},
		{PublicKey: fl.wg.peers[1].pub, ReplaceAllowedIPs: true}}}); err != nil {
		t.Fatal(err)
	}
	e.f.Take()
	st := e.apply(wg0)
	if st.Err != nil || !slices.Equal(opsOf(st.OperationLog), []string{"modify wg0"}) {
		t.Errorf("drift repair: %v %v", st.Err, opsOf(st.OperationLog))
	}
	if w := fl.wg; w.private != newKey || len(w.peers) != 2 || !slices.Equal(w.peers[1].allowed, prefixes("10.96.0.0/24")) {
		t.Errorf("device after the repair: %+v", w)
	}
	e.converge(wg0)

	// Roaming: the kernel learns peer 3's endpoint (no endpoint in the
	// intent): not drift.
	fl.wg.peers[1].endpoint = &net.UDPAddr{IP: net.ParseIP("198.51.100.7"), Port: 1234}
	e.converge(wg0)

	// A port left to the kernel: it picks one when the device opens;
	// leaving it is no drift.
	c := &items.WireguardAttrs{PrivateKeyFile: keyFile, Peers: b.Peers}
	e.converge(wgIfc("wg0", c))

	// The same allowed IPs swapped between two peers in one request.
	d := &items.WireguardAttrs{PrivateKeyFile: keyFile, Peers: []items.WireguardPeer{
		{PublicKey: p1, AllowedIPs: prefixes("10.96.0.0/24")}, {PublicKey: p3, AllowedIPs: prefixes("10.99.0.0/24")}}}
	e.converge(wgIfc("wg0", d))
	if w := fl.wg; !slices.Equal(w.peers[0].allowed, prefixes("10.96.0.0/24")) || !slices.Equal(w.peers[1].allowed, prefixes("10.99.0.0/24")) {
		t.Errorf("swapped allowed ips: %v %v", w.peers[0].allowed, w.peers[1].allowed)
	}

	if st := e.apply(); st.Err != nil || !e.gone("wg0") {
		t.Errorf("delete: %v, gone %v", st.Err, e.gone("wg0"))
	}
}

// TestFakeWireguardKeyFiles: a missing, world-readable or malformed key
// file (private or preshared) fails the create with ErrKeyFile naming the
// interface and the file, never the content, and leaves no link; a
// group-readable one is taken. The same on a modify leaves the device as
// it was.
func TestFakeWireguardKeyFiles(t *testing.T) {
	keys := newWGKeys(t)
	good, _ := keys.private("good.key")
	secret := "c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0LXNlY3JldA==" // 35 bytes: not a key
	cases := []struct {
		name, file, psk, want string
	}{
		{"missing", filepath.Join(keys.dir, "nope.key"), "", "no such file"},
		{"world readable", keys.write("world.key", strings.TrimSpace(good), 0o644), "", "mode 0644 lets others access it"},
		{"malformed", keys.write("bad.key", secret, 0o600), "", "not one base64 WireGuard key"},
		{"directory", keys.dir, "", "not a regular file"},
		{"bad psk", good, keys.write("bad.psk", "x"+secret, 0o600), "preshared key"},
	}
	goodKey, _ := os.ReadFile(good)
	peer := keys.pub()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newFakeEnv(t)
			a := &items.WireguardAttrs{PrivateKeyFile: c.file, Peers: []items.WireguardPeer{{PublicKey: peer, PresharedKeyFile: c.psk}}}
			st := e.apply(wgIfc("wg0", a))
			err := stateOf(st, wgIfc("wg0", a)).LastErr
			path := c.file
			if c.psk != "" {
				path = c.psk
			}
			if !errors.Is(err, ErrKeyFile) || !strings.Contains(err.Error(), "wg0") || !strings.Contains(err.Error(), path) ||
				!strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want ErrKeyFile naming wg0, %s and %q", err, path, c.want)
			}
			if err != nil && (strings.Contains(err.Error(), secret) || strings.Contains(err.Error(), strings.TrimSpace(string(goodKey)))) {
				t.Errorf("error shows a key: %v", err)
			}
			if !e.gone("wg0") {
				t.Error("a failed create left wg0")
			}
		})
	}

	t.Run("group readable, then broken on a modify", func(t *testing.T) {
		e := newFakeEnv(t)
		file := keys.write("group.key", strings.TrimSpace(string(goodKey)), 0o640)
		want := wgIfc("wg0", &items.WireguardAttrs{PrivateKeyFile: file, ListenPort: 1000})
		e.converge(want)
		keys.write("group.key", "garbage", 0o640)
		want = wgIfc("wg0", &items.WireguardAttrs{PrivateKeyFile: file, ListenPort: 2000})
		st := e.apply(want)
		if err := stateOf(st, want).LastErr; !errors.Is(err, ErrKeyFile) {
			t.Errorf("modify with a broken key file: %v", err)
		}
		if w := e.f.byName("wg0").wg; w.port != 1000 {
			t.Errorf("device changed by a failed modify: port %d", w.port)
		}
	})
}

// TestFakeWireguardForeignUntouched: a WireGuard device netagent did not
// make is read back as an external link (no key, no peers), refused when
// the intent names it, never configured or deleted; two devices on the
// same port are refused by the kernel (EADDRINUSE) with the interface
// named.
func TestFakeWireguardForeignUntouched(t *testing.T) {
	e := newFakeEnv(t)
	keys := newWGKeys(t)
	file, _ := keys.private("wg0.key")
	if err := e.f.LinkAdd(&netlink.Wireguard{LinkAttrs: netlink.LinkAttrs{Name: "wg9"}}); err != nil {
		t.Fatal(err)
	}
	theirs, _ := wgtypes.GeneratePrivateKey()
	port := 51820
	if err := e.f.ConfigureDevice("wg9", wgtypes.Config{PrivateKey: &theirs, ListenPort: &port}); err != nil {
		t.Fatal(err)
	}
	e.f.Take()
	wg0 := wgIfc("wg0", &items.WireguardAttrs{PrivateKeyFile: file, ListenPort: 51821})
	e.converge(wg0)
	foreign := wgIfc("wg9", &items.WireguardAttrs{PrivateKeyFile: file})
	if st := e.apply(wg0, foreign); !errors.Is(stateOf(st, foreign).LastErr, ErrNotOwned) {
		t.Errorf("intent naming the foreign wg9: %v, want ErrNotOwned", stateOf(st, foreign).LastErr)
	}
	clash := wgIfc("wg0", &items.WireguardAttrs{PrivateKeyFile: file, ListenPort: 51820})
	if err := stateOf(e.apply(clash), clash).LastErr; !errors.Is(err, unix.EADDRINUSE) || !strings.Contains(err.Error(), "wg0") {
		t.Errorf("port of the foreign wg9: %v, want EADDRINUSE naming wg0", err)
	}
	got, err := e.kernel().readBack(nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range got {
		if l, ok := it.(*items.Link); it.Name() == "wg9" && (!ok || l.Kind != "wireguard") {
			t.Errorf("foreign wg9 read back as %v", it)
		}
	}
	e.apply()
	if !e.gone("wg0") || e.gone("wg9") {
		t.Errorf("after the delete: wg0 gone %v, wg9 gone %v", e.gone("wg0"), e.gone("wg9"))
	}
	if w := e.f.Take(); slices.ContainsFunc(w, func(s string) bool { return strings.HasSuffix(s, " wg9") }) {
		t.Errorf("foreign wg9 written: %v", w)
	}
	if w := e.f.byName("wg9").wg; w.private != theirs || w.port != 51820 {
		t.Errorf("foreign wg9 changed: %+v", w)
	}
}

// TestWireguardPrefixesOf: the kernel's allowed IPs in their 4- and
// 16-byte forms come back as the same prefixes.
func TestWireguardPrefixesOf(t *testing.T) {
	got := prefixesOf([]net.IPNet{
		{IP: net.ParseIP("10.0.0.0").To16(), Mask: net.CIDRMask(8, 32)},
		{IP: net.ParseIP("10.1.0.0").To16(), Mask: net.CIDRMask(112, 128)},
		{IP: net.ParseIP("10.2.0.0").To4(), Mask: net.CIDRMask(16, 32)},
		{IP: net.ParseIP("2001:db8::"), Mask: net.CIDRMask(32, 128)},
	})
	if want := prefixes("10.0.0.0/8", "10.1.0.0/16", "10.2.0.0/16", "2001:db8::/32"); !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

// TestFakeWireguardShow: read-back without an intent (netagent show)
// names the key files netagent configured the device with, as long as they
// hold the device's keys, and never a key; a rotated file is not named
// until the device has its key.
func TestFakeWireguardShow(t *testing.T) {
	e := newFakeEnv(t)
	keys := newWGKeys(t)
	keyFile, key := keys.private("wg0.key")
	pskFile, _ := keys.private("p.psk")
	peer := keys.pub()
	a := &items.WireguardAttrs{PrivateKeyFile: keyFile, ListenPort: 51820,
		Peers: []items.WireguardPeer{{PublicKey: peer, PresharedKeyFile: pskFile, AllowedIPs: prefixes("10.99.0.0/24")}}}
	e.converge(wgIfc("wg0", a))
	shown := func() *items.WireguardAttrs {
		t.Helper()
		got, err := e.kernel().readBack(nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range got {
			if i, ok := it.(*items.Interface); ok && i.IfName == "wg0" {
				return items.AttrsOf[*items.WireguardAttrs](i)
			}
		}
		t.Fatal("wg0 not read back")
		return nil
	}
	s := shown()
	if s.PrivateKeyFile != keyFile || s.PublicKey != key.PublicKey().String() || len(s.Peers) != 1 ||
		s.Peers[0].PresharedKeyFile != pskFile || s.ListenPort != 51820 {
		t.Errorf("shown: %v", s)
	}
	if strings.Contains(s.String(), key.String()) {
		t.Errorf("shown with the private key: %v", s)
	}
	keys.write("wg0.key", mustKey(t).String(), 0o600)
	if s := shown(); s.PrivateKeyFile != "" {
		t.Errorf("a key file that no longer holds the device's key is shown: %v", s)
	}
	e.converge(wgIfc("wg0", a))
	if s := shown(); s.PrivateKeyFile != keyFile {
		t.Errorf("after the repair: %v", s)
	}
}

func mustKey(t *testing.T) wgtypes.Key {
	t.Helper()
	k, err := wgtypes.GeneratePrivateKey()
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// TestFakeWireguardOwnKeyAsPeer: a peer whose public key is the
// interface's own (the kernel drops such a peer, so every reconcile would
// add it again) is refused, naming it; nothing is written.
func TestFakeWireguardOwnKeyAsPeer(t *testing.T) {
	e := newFakeEnv(t)
	keys := newWGKeys(t)
	keyFile, key := keys.private("wg0.key")
	a := &items.WireguardAttrs{PrivateKeyFile: keyFile, Peers: []items.WireguardPeer{{PublicKey: key.PublicKey().String()}}}
	st := e.apply(wgIfc("wg0", a))
	if err := stateOf(st, wgIfc("wg0", a)).LastErr; err == nil || !strings.Contains(err.Error(), "own public key") {
		t.Errorf("own key as a peer: %v", err)
	}
	if !e.gone("wg0") {
		t.Error("the refused create left wg0")
	}
}

// TestFakeWireguardFIFOKeyFile: a key file (private or preshared) that is
// a FIFO, or a symbolic link, fails its interface at once as an unusable
// key file (an open of a FIFO blocks until a writer comes: before the fix
// this apply never returned), and the rest of the intent converges.
func TestFakeWireguardFIFOKeyFile(t *testing.T) {
	keys := newWGKeys(t)
	good, _ := keys.private("good.key")
	fifo := filepath.Join(keys.dir, "fifo.key")
	if err := unix.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(keys.dir, "link.key")
	if err := os.Symlink(good, link); err != nil {
		t.Fatal(err)
	}
	cases := []struct{ name, file, psk, want string }{
		{"fifo private key", fifo, "", "not a regular file"},
		{"fifo preshared key", good, fifo, "not a regular file"},
		{"symbolic link", link, "", "is a symbolic link"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newFakeEnv(t)
			wg := wgIfc("wg0", &items.WireguardAttrs{PrivateKeyFile: c.file,
				Peers: []items.WireguardPeer{{PublicKey: keys.pub(), PresharedKeyFile: c.psk}}})
			br := &items.Interface{IfName: "br0", Kind: items.KindBridge, AdminUp: true}
			done := make(chan reconciler.Status, 1)
			go func() { done <- e.apply(wg, br) }()
			var st reconciler.Status
			select {
			case st = <-done:
			case <-time.After(10 * time.Second):
				t.Fatal("apply with a FIFO key file did not return in 10 s (the open blocks)")
			}
			path := c.file
			if c.psk != "" {
				path = c.psk
			}
			if err := stateOf(st, wg).LastErr; !errors.Is(err, ErrKeyFile) || !strings.Contains(err.Error(), path) ||
				!strings.Contains(err.Error(), c.want) {
				t.Errorf("wg0: %v, want %v naming %s and %q", err, ErrKeyFile, path, c.want)
			}
			if err := stateOf(st, br).LastErr; err != nil || e.gone("br0") {
				t.Errorf("br0 beside it: %v (gone %v), want it created", err, e.gone("br0"))
			}
		})
	}
}
