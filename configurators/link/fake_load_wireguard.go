package link

import (
	"fmt"
	"net"
	"net/netip"
	"time"

	"github.com/vishvananda/netlink"
	"golang.zx2c4.com/wireguard/wgctrl/wgtypes"

	"github.com/netagent/netagent/internal/netnsx"
)

// LoadedWireguard is a WireGuard device's configuration as a snapshot
// keeps it: never its private key nor a preshared key, only whether one
// is set and which key file (as netagent's link record names it) held it
// when the device was dumped, so that a plan over the fake compares the
// intent's key files as the live read-back does.
type LoadedWireguard struct {
	ListenPort int
	FwMark     int
	// PublicKey is the public key of the device's private key (zero:
	// none set).
	PublicKey wgtypes.Key
	// PrivateKeyFile is the file that held the private key ("": none
	// known).
	PrivateKeyFile string
	Peers          []LoadedPeer
}

// LoadedPeer is one peer of a LoadedWireguard.
type LoadedPeer struct {
	PublicKey  wgtypes.Key
	Endpoint   netip.AddrPort // zero: none
	AllowedIPs []netip.Prefix
	Keepalive  time.Duration
	// PresharedKey: a preshared key is set; PresharedKeyFile held it.
	PresharedKey     bool
	PresharedKeyFile string
}

// dumpWireguard reads the configuration of the WireGuard devices among
// links, the key files of t's link record in stateDir ("": none) judged
// against the device's keys, which are never kept.
func dumpWireguard(t *netnsx.Target, stateDir string, links []LoadedLink) error {
	st, err := newStateStore(t, stateDir)
	if err != nil {
		return err
	}
	rec, err := st.snapshot()
	if err != nil {
		return err
	}
	wg := netnsWG{t}
	for i := range links {
		l := &links[i]
		if _, ok := l.Link.(*netlink.Wireguard); !ok {
			continue
		}
		a := l.Link.Attrs()
		dev, err := wg.Device(a.Name)
		if err != nil {
			return fmt.Errorf("reading wireguard device %q: %w", a.Name, err)
		}
		files := rec.Wireguard[a.Name]
		if files.Index != a.Index {
			files = wgKeyFiles{}
		}
		l.Wireguard = loadedWireguard(dev, files)
	}
	return nil
}

// loadedWireguard is dev as a snapshot keeps it, its key files those of
// files that hold its keys.
func loadedWireguard(dev *wgtypes.Device, files wgKeyFiles) *LoadedWireguard {
	out := &LoadedWireguard{ListenPort: dev.ListenPort, FwMark: dev.FirewallMark}
	judge := fileKeys{}
	if dev.PrivateKey != (wgtypes.Key{}) {
		out.PublicKey = dev.PublicKey
		if judge.holdsPrivate(dev, files.PrivateKey) {
			out.PrivateKeyFile = files.PrivateKey
		}
	}
	for i := range dev.Peers {
		p := &dev.Peers[i]
		lp := LoadedPeer{PublicKey: p.PublicKey, Endpoint: endpointOf(p.Endpoint), AllowedIPs: prefixesOf(p.AllowedIPs),
			Keepalive: p.PersistentKeepaliveInterval, PresharedKey: p.PresharedKey != (wgtypes.Key{})}
		if path := files.Preshared[p.PublicKey.String()]; lp.PresharedKey && judge.holdsPreshared(dev, p, path) {
			lp.PresharedKeyFile = path
		}
		out.Peers = append(out.Peers, lp)
	}
	return out
}

// standInKey stands for a key a snapshot does not hold (a private or
// preshared key that is set): nonzero, and no device's real key.
var standInKey = wgtypes.Key{0: 0x5a, 31: 0xa5}

// loadWireguard gives the fake device fl the configuration w: the keys
// that are set as stand-ins, the public key as dumped.
func loadWireguard(fl *fakeLink, w *LoadedWireguard) {
	fw := &fakeWG{port: w.ListenPort, mark: w.FwMark, loaded: true, privateFile: w.PrivateKeyFile}
	if w.PublicKey != (wgtypes.Key{}) {
		fw.private, fw.public = standInKey, w.PublicKey
	}
	for _, p := range w.Peers {
		fp := &fakePeer{pub: p.PublicKey, keepalive: p.Keepalive, allowed: append([]netip.Prefix(nil), p.AllowedIPs...), pskFile: p.PresharedKeyFile}
		if p.Endpoint.IsValid() {
			fp.endpoint = net.UDPAddrFromAddrPort(p.Endpoint)
		}
		if p.PresharedKey {
			fp.psk = standInKey
		}
		fw.peers = append(fw.peers, fp)
	}
	fl.wg = fw
}

// holdsPrivate: a device loaded from a snapshot holds the private key
// of the file the snapshot found holding it; another reads the file.
func (f *FakeKernel) holdsPrivate(dev *wgtypes.Device, path string) bool {
	if fl := f.byName(dev.Name); fl != nil && fl.wg != nil && fl.wg.loaded && fl.wg.private == standInKey {
		return path != "" && path == fl.wg.privateFile
	}
	return fileKeys{}.holdsPrivate(dev, path)
}

// holdsPreshared: likewise for a peer's preshared key.
func (f *FakeKernel) holdsPreshared(dev *wgtypes.Device, peer *wgtypes.Peer, path string) bool {
	if fl := f.byName(dev.Name); fl != nil && fl.wg != nil && fl.wg.loaded {
		for _, p := range fl.wg.peers {
			if p.pub == peer.PublicKey && p.psk == standInKey {
				return path != "" && path == p.pskFile
			}
		}
	}
	return fileKeys{}.holdsPreshared(dev, peer, path)
}
