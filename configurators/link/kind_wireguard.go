package link

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"net"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/vishvananda/netlink"
	"golang.zx2c4.com/wireguard/wgctrl"
	"golang.zx2c4.com/wireguard/wgctrl/wgtypes"

	"github.com/netagent/netagent/internal/netnsx"
	"github.com/netagent/netagent/internal/safefile"
	"github.com/netagent/netagent/items"
)

// wireguardKind creates WireGuard links over rtnetlink (IFLA_INFO_KIND
// "wireguard") and configures the device (keys, port, fwmark, peers) over
// generic netlink through wgOps; everything of the device changes in place
// (see items.WireguardAttrs.NeedsRecreate).
//
// The private key and the preshared keys are read from their files when the
// device is configured and when it is read back (mask), never kept in an
// item, a log or an error: errors name the interface and the file only.
type wireguardKind struct{ plainKind }

// wgOps is the part of wgctrl.Client the configurator calls, by device
// name in the target namespace.
type wgOps interface {
	Device(name string) (*wgtypes.Device, error)
	ConfigureDevice(name string, cfg wgtypes.Config) error
}

// netnsWG is the wgOps of a namespace: each call opens a wgctrl client
// with the calling OS thread inside the namespace (Target.Do), since the
// client's generic netlink socket belongs to the namespace it is opened in.
type netnsWG struct{ t *netnsx.Target }

func (w netnsWG) Device(name string) (*wgtypes.Device, error) {
	var d *wgtypes.Device
	err := w.do(func(c *wgctrl.Client) (err error) {
		d, err = c.Device(name)
		return err
	})
	return d, err
}

func (w netnsWG) ConfigureDevice(name string, cfg wgtypes.Config) error {
	return w.do(func(c *wgctrl.Client) error { return c.ConfigureDevice(name, cfg) })
}

func (w netnsWG) do(f func(*wgctrl.Client) error) error {
	return w.t.Do(func() error {
		c, err := wgctrl.New()
		if err != nil {
			return fmt.Errorf("wireguard control: %w", err)
		}
		defer c.Close()
		return f(c)
	})
}

// maxKeyFile bounds what is read of a key file (a key is 44 bytes).
const maxKeyFile = 1024

// readKey reads a base64 WireGuard key from path, as every file an intent
// names is read (safefile.ReadNamed): never through a symbolic link, never
// a FIFO or a device, never blocking, at most maxKeyFile bytes. It refuses
// a file that others may read or write (mode o+rwx, wg(8)'s warning made
// an error; the group may read it: networkd's own files are
// root:systemd-network 0640), and never puts the file's content in an
// error.
func readKey(path string) (wgtypes.Key, error) {
	b, st, err := safefile.ReadNamed(path, maxKeyFile)
	if err != nil {
		return wgtypes.Key{}, fmt.Errorf("%w %s: %w", ErrKeyFile, path, err)
	}
	if perm := st.Mode & 0o777; perm&0o007 != 0 {
		return wgtypes.Key{}, fmt.Errorf("%w %s: mode %04o lets others access it (chmod o-rwx)", ErrKeyFile, path, perm)
	}
	key, err := wgtypes.ParseKey(strings.TrimSpace(string(b)))
	if err != nil { // its message could quote the content: not wrapped
		return wgtypes.Key{}, fmt.Errorf("%w %s: not one base64 WireGuard key (as wg genkey writes)", ErrKeyFile, path)
	}
	return key, nil
}

func (wireguardKind) newLink(_ *kernel, attrs netlink.LinkAttrs, _ *items.Interface) (netlink.Link, func(), error) {
	attrs.HardwareAddr = nil // a WireGuard device is ARPHRD_NONE
	return &netlink.Wireguard{LinkAttrs: attrs}, noRelease, nil
}

// converge sends one WG_CMD_SET_DEVICE with what differs: the private key
// (when the device's public key is not the file's), a nonzero listen port,
// the fwmark, and the peers as a set: missing ones added, changed ones
// updated (allowed IPs replaced exactly), others removed. A device that
// matches gets no request.
func (wireguardKind) converge(k *kernel, l netlink.Link, _, wantIfc *items.Interface) error {
	want := items.AttrsOf[*items.WireguardAttrs](wantIfc)
	if want == nil {
		return nil
	}
	name := l.Attrs().Name
	dev, err := k.wgDevice(name)
	if err != nil {
		return err
	}
	cfg, err := wgConfig(dev, want)
	if err != nil {
		return err
	}
	if cfg == nil {
		return k.st.recordKeyFiles(l, want)
	}
	if err := k.wg.ConfigureDevice(name, *cfg); err != nil {
		return fmt.Errorf("configuring wireguard device: %w", err)
	}
	return k.st.recordKeyFiles(l, want)
}

// wgConfig is the request that turns dev into want, nil when dev matches.
func wgConfig(dev *wgtypes.Device, want *items.WireguardAttrs) (*wgtypes.Config, error) {
	key, err := readKey(want.PrivateKeyFile)
	if err != nil {
		return nil, fmt.Errorf("private key: %w", err)
	}
	var cfg wgtypes.Config
	changed := false
	if dev.PublicKey != key.PublicKey() || dev.PrivateKey != key {
		cfg.PrivateKey, changed = &key, true
	}
	if port := int(want.ListenPort); port != 0 && port != dev.ListenPort {
		cfg.ListenPort, changed = &port, true
	}
	if mark := int(want.FwMark); mark != dev.FirewallMark {
		cfg.FirewallMark, changed = &mark, true
	}
	have := map[wgtypes.Key]*wgtypes.Peer{}
	for i := range dev.Peers {
		have[dev.Peers[i].PublicKey] = &dev.Peers[i]
	}
	wanted := map[wgtypes.Key]bool{}
	for i := range want.Peers {
		pc, err := peerConfig(&want.Peers[i], have)
		if err != nil {
			return nil, err
		}
		if pc.PublicKey == key.PublicKey() { // the kernel would drop it, every time
			return nil, fmt.Errorf("peer %s is the interface's own public key (%s)", want.Peers[i].PublicKey, want.PrivateKeyFile)
		}
		wanted[pc.PublicKey] = true
		if pc.Remove { // marks "nothing to change"
			continue
		}
		cfg.Peers, changed = append(cfg.Peers, pc), true
	}
	for _, p := range dev.Peers {
		if !wanted[p.PublicKey] {
			cfg.Peers, changed = append(cfg.Peers, wgtypes.PeerConfig{PublicKey: p.PublicKey, Remove: true}), true
		}
	}
	if !changed {
		return nil, nil
	}
	return &cfg, nil
}

// peerConfig is the request for one wanted peer: all of it for a new one,
// what differs for one the device has; Remove set means nothing differs.
func peerConfig(want *items.WireguardPeer, have map[wgtypes.Key]*wgtypes.Peer) (wgtypes.PeerConfig, error) {
	pub, err := wgtypes.ParseKey(want.PublicKey)
	if err != nil {
		return wgtypes.PeerConfig{}, fmt.Errorf("peer %s: bad public key", want.PublicKey)
	}
	var psk wgtypes.Key
	if want.PresharedKeyFile != "" {
		if psk, err = readKey(want.PresharedKeyFile); err != nil {
			return wgtypes.PeerConfig{}, fmt.Errorf("peer %s: preshared key: %w", want.PublicKey, err)
		}
	}
	pc := wgtypes.PeerConfig{PublicKey: pub}
	old, ok := have[pub]
	if !ok {
		old = &wgtypes.Peer{}
	}
	changed := !ok
	if psk != old.PresharedKey {
		pc.PresharedKey, changed = &psk, true
	}
	if want.Endpoint.IsValid() && endpointOf(old.Endpoint) != want.Endpoint {
		pc.Endpoint, changed = net.UDPAddrFromAddrPort(want.Endpoint), true
	}
	if ka := time.Duration(want.PersistentKeepalive) * time.Second; ka != old.PersistentKeepaliveInterval {
		pc.PersistentKeepaliveInterval, changed = &ka, true
	}
	if !slices.Equal(items.SortedPrefixes(want.AllowedIPs), items.SortedPrefixes(prefixesOf(old.AllowedIPs))) {
		pc.ReplaceAllowedIPs, changed = true, true
		for _, p := range want.AllowedIPs {
			pc.AllowedIPs = append(pc.AllowedIPs, net.IPNet{IP: p.Addr().AsSlice(), Mask: net.CIDRMask(p.Bits(), p.Addr().BitLen())})
		}
	}
	if !changed {
		pc.Remove = true
	}
	return pc, nil
}

// wgDevice reads the device's configuration.
func (k *kernel) wgDevice(name string) (*wgtypes.Device, error) {
	if k.wg == nil {
		return nil, errors.New("no wireguard control in this configurator")
	}
	dev, err := k.wg.Device(name)
	if err != nil {
		return nil, fmt.Errorf("reading wireguard device: %w", err)
	}
	return dev, nil
}

// observe reads the device's configuration, the keys as fingerprints: the
// public key of its private key, and a SHA-256 of each preshared key
// (mask resolves them against the intended files). The key files recorded
// when netagent configured the device (see recordKeyFiles) are given too
// when they still hold the device's keys, so that a read-back without an
// intent (show) names them.
func (wireguardKind) observe(k *kernel, l netlink.Link, _ func(int) string) (items.KindAttrs, error) {
	if _, ok := l.(*netlink.Wireguard); !ok {
		return nil, nil
	}
	dev, err := k.wgDevice(l.Attrs().Name)
	if err != nil {
		return nil, err
	}
	st, err := k.st.snapshot()
	if err != nil {
		return nil, err
	}
	files := st.Wireguard[l.Attrs().Name]
	if files.Index != l.Attrs().Index {
		files = wgKeyFiles{}
	}
	judge := k.keyJudge()
	a := &items.WireguardAttrs{ListenPort: uint16(dev.ListenPort), FwMark: uint32(dev.FirewallMark)}
	if dev.PrivateKey != (wgtypes.Key{}) {
		a.PublicKey = dev.PublicKey.String()
		if judge.holdsPrivate(dev, files.PrivateKey) {
			a.PrivateKeyFile = files.PrivateKey
		}
	}
	for _, p := range dev.Peers {
		peer := items.WireguardPeer{PublicKey: p.PublicKey.String(), Endpoint: endpointOf(p.Endpoint),
			PersistentKeepalive: uint16(p.PersistentKeepaliveInterval / time.Second),
			AllowedIPs:          prefixesOf(p.AllowedIPs)}
		if p.PresharedKey != (wgtypes.Key{}) {
			peer.PresharedKeySum = keySum(p.PresharedKey)
			path := files.Preshared[peer.PublicKey]
			if judge.holdsPreshared(dev, &p, path) {
				peer.PresharedKeyFile = path
			}
		}
		a.Peers = append(a.Peers, peer)
	}
	return a, nil
}

// wgKeyFiles is what the link record keeps of a WireGuard device netagent
// configured: the paths of its key files, never a key, so that read-back
// without an intent names them. Index tells the device apart from another
// of the same name. A record outlives its device until the next boot
// (records are pruned by boot); it is used only while the files hold the
// device's keys.
type wgKeyFiles struct {
	Index      int               `json:"index"`
	PrivateKey string            `json:"privateKey"`
	Preshared  map[string]string `json:"preshared,omitempty"` // by peer public key
}

// recordKeyFiles records the key files of the device l configured as want
// says, if the record differs.
func (s *stateStore) recordKeyFiles(l netlink.Link, want *items.WireguardAttrs) error {
	rec := wgKeyFiles{Index: l.Attrs().Index, PrivateKey: want.PrivateKeyFile}
	for _, p := range want.Peers {
		if p.PresharedKeyFile != "" {
			if rec.Preshared == nil {
				rec.Preshared = map[string]string{}
			}
			rec.Preshared[p.PublicKey] = p.PresharedKeyFile
		}
	}
	name := l.Attrs().Name
	err := s.update(func(e *nsState) bool {
		old, ok := e.Wireguard[name]
		if ok && old.Index == rec.Index && old.PrivateKey == rec.PrivateKey && maps.Equal(old.Preshared, rec.Preshared) {
			return false
		}
		if e.Wireguard == nil {
			e.Wireguard = map[string]wgKeyFiles{}
		}
		e.Wireguard[name] = rec
		return true
	})
	if err != nil {
		return fmt.Errorf("recording the key files of %s: %w", name, err)
	}
	return nil
}

// mask spells the read-back as the intent does: a listen port the intent
// leaves to the kernel (0) as 0; the private key as the intended file when
// the device's public key is the file's key's; a peer's preshared key as
// its intended file when the device holds the file's key; the endpoint of
// a peer whose intent has none (the one the kernel learnt as it roamed) as
// none. A key file that cannot be read, or holds another key, leaves the
// fingerprint: the item differs, and the modify applies the file's key or
// reports its problem.
func (wireguardKind) mask(obs, wantAttrs items.KindAttrs) items.KindAttrs {
	o := valueOr(attrsAs[items.WireguardAttrs](obs))
	o.Peers = slices.Clone(o.Peers)
	want := attrsAs[items.WireguardAttrs](wantAttrs)
	if want == nil {
		return &o
	}
	if want.ListenPort == 0 {
		o.ListenPort = 0
	}
	switch {
	case o.PrivateKeyFile != "" && o.PrivateKeyFile == want.PrivateKeyFile: // observe found the file holds the key
		o.PublicKey = ""
	case o.PublicKey != "":
		if key, err := readKey(want.PrivateKeyFile); err == nil && o.PublicKey == key.PublicKey().String() {
			o.PrivateKeyFile, o.PublicKey = want.PrivateKeyFile, ""
		}
	}
	wantPeers := map[string]*items.WireguardPeer{}
	for i := range want.Peers {
		wantPeers[want.Peers[i].PublicKey] = &want.Peers[i]
	}
	for i := range o.Peers {
		p := &o.Peers[i]
		w := wantPeers[p.PublicKey]
		if w == nil {
			continue
		}
		if !w.Endpoint.IsValid() {
			p.Endpoint = netip.AddrPort{}
		}
		if w.PresharedKeyFile == "" {
			continue
		}
		if p.PresharedKeyFile == w.PresharedKeyFile { // observe found the file holds the key
			p.PresharedKeySum = ""
			continue
		}
		if psk, err := readKey(w.PresharedKeyFile); err == nil && p.PresharedKeySum == keySum(psk) {
			p.PresharedKeyFile, p.PresharedKeySum = w.PresharedKeyFile, ""
		}
	}
	return &o
}

// keySum is a fingerprint of a secret key: SHA-256, hex.
func keySum(k wgtypes.Key) string {
	sum := sha256.Sum256(k[:])
	return hex.EncodeToString(sum[:])
}

// endpointOf converts the kernel's endpoint (nil: none), IPv4 unmapped.
func endpointOf(a *net.UDPAddr) netip.AddrPort {
	if a == nil {
		return netip.AddrPort{}
	}
	ap := a.AddrPort()
	return netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
}

// prefixesOf converts the kernel's allowed IPs, IPv4 unmapped.
func prefixesOf(nets []net.IPNet) []netip.Prefix {
	var out []netip.Prefix
	for _, n := range nets {
		a, ok := netip.AddrFromSlice(n.IP)
		if !ok {
			continue
		}
		ones, total := n.Mask.Size()
		if a.Is4In6() {
			a = a.Unmap()
			if total == 128 {
				ones -= 96
			}
		}
		out = append(out, netip.PrefixFrom(a, ones).Masked())
	}
	return out
}

// keyJudge tells whether key files hold a device's keys: the files read
// on this host (fileKeys), or, for a fake loaded from a snapshot, what
// the snapshot found when it was taken (FakeKernel's).
type keyJudge interface {
	holdsPrivate(dev *wgtypes.Device, path string) bool
	holdsPreshared(dev *wgtypes.Device, peer *wgtypes.Peer, path string) bool
}

// fileKeys judges by reading the files (readKey).
type fileKeys struct{}

func (fileKeys) holdsPrivate(dev *wgtypes.Device, path string) bool {
	key, err := readKey(path)
	return path != "" && err == nil && key.PublicKey() == dev.PublicKey
}

func (fileKeys) holdsPreshared(_ *wgtypes.Device, peer *wgtypes.Peer, path string) bool {
	psk, err := readKey(path)
	return path != "" && err == nil && psk == peer.PresharedKey
}

// keyJudge is the kernel's wgOps if it judges key files itself, else
// fileKeys.
func (k *kernel) keyJudge() keyJudge {
	if j, ok := k.wg.(keyJudge); ok {
		return j
	}
	return fileKeys{}
}
