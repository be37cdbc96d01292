package link

import (
	"net"
	"net/netip"
	"os"
	"slices"
	"time"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
	"golang.zx2c4.com/wireguard/wgctrl/wgtypes"

	"github.com/netagent/netagent/items"
)

// fakeWG is a WireGuard device's configuration as the kernel keeps it
// (drivers/net/wireguard/netlink.c): the private key, the port (0 until
// the device, opened, binds one the kernel picks), the fwmark, and peers in
// the order they were added.
type fakeWG struct {
	private wgtypes.Key
	port    int
	mark    int
	peers   []*fakePeer
	// loaded: from a snapshot (fake_load_wireguard.go): the keys set are
	// stand-ins (standInKey), public is the dumped public key, and
	// privateFile the file that held the private key.
	loaded      bool
	public      wgtypes.Key
	privateFile string
}

type fakePeer struct {
	pub, psk  wgtypes.Key
	endpoint  *net.UDPAddr
	keepalive time.Duration
	allowed   []netip.Prefix
	pskFile   string // loaded: the file that held the preshared key
}

var _ wgOps = (*FakeKernel)(nil)

// buildWireguard: wg_setup, an ARPHRD_NONE device without a MAC, MTU 1420.
func (f *FakeKernel) buildWireguard(a *netlink.LinkAttrs) (*fakeLink, *fakeLink, error) {
	attrs := f.base(a, 1420)
	attrs.HardwareAddr = nil
	return &fakeLink{link: &netlink.Wireguard{LinkAttrs: attrs}, maxMTU: 65535, wg: &fakeWG{}}, nil, nil
}

// wgLink finds a WireGuard device by name (wgctrl's os.ErrNotExist for
// none, or a link of another kind).
func (f *FakeKernel) wgLink(name string) (*fakeLink, error) {
	fl := f.byName(name)
	if fl == nil || fl.wg == nil {
		return nil, os.ErrNotExist
	}
	return fl, nil
}

// Device reports the configuration as WG_CMD_GET_DEVICE does: an open
// device with port 0 has bound one the kernel picked; IPv4 endpoints and
// allowed IPs come in 16-byte form, the allowed IPs in the trie's order
// (here: the reverse of their sort), not the order they were given.
func (f *FakeKernel) Device(name string) (*wgtypes.Device, error) {
	fl, err := f.wgLink(name)
	if err != nil {
		return nil, err
	}
	w := fl.wg
	if w.port == 0 && fl.up() {
		w.port = 40000 + fl.attrs().Index // udp_sock_create with port 0
	}
	d := &wgtypes.Device{Name: name, Type: wgtypes.LinuxKernel, PrivateKey: w.private, ListenPort: w.port, FirewallMark: w.mark}
	switch {
	case w.loaded && w.private == standInKey:
		d.PublicKey = w.public
	case w.private != (wgtypes.Key{}):
		d.PublicKey = w.private.PublicKey()
	}
	for _, p := range w.peers {
		peer := wgtypes.Peer{PublicKey: p.pub, PresharedKey: p.psk, PersistentKeepaliveInterval: p.keepalive}
		if p.endpoint != nil {
			ep := *p.endpoint
			ep.IP = ep.IP.To16()
			peer.Endpoint = &ep
		}
		allowed := items.SortedPrefixes(p.allowed)
		slices.Reverse(allowed)
		for _, a := range allowed {
			peer.AllowedIPs = append(peer.AllowedIPs, net.IPNet{IP: net.IP(a.Addr().AsSlice()).To16(), Mask: net.CIDRMask(a.Bits(), a.Addr().BitLen())})
		}
		d.Peers = append(d.Peers, peer)
	}
	return d, nil
}

// ConfigureDevice applies WG_CMD_SET_DEVICE as wg_set_device does: a port
// another WireGuard device of the namespace holds is EADDRINUSE; a new
// private key whose public key is a peer's removes that peer, and a peer
// of the device's own public key is ignored; peers are removed, updated (update-only ones skipped when missing) or added; an
// allowed IP given to a peer leaves the peer that had it (silently), and is
// stored masked.
func (f *FakeKernel) ConfigureDevice(name string, cfg wgtypes.Config) error {
	fl, err := f.wgLink(name)
	if err != nil {
		return err
	}
	if cfg.ListenPort != nil && *cfg.ListenPort != 0 {
		for _, o := range f.links {
			if o != fl && o.wg != nil && o.wg.port == *cfg.ListenPort {
				return unix.EADDRINUSE
			}
		}
	}
	if err := f.write("wg", name); err != nil {
		return err
	}
	w := fl.wg
	if cfg.ListenPort != nil {
		w.port = *cfg.ListenPort
	}
	if cfg.FirewallMark != nil {
		w.mark = *cfg.FirewallMark
	}
	if cfg.PrivateKey != nil {
		w.private, w.privateFile, w.loaded = *cfg.PrivateKey, "", false
		w.removePeer(w.private.PublicKey())
	}
	if cfg.ReplacePeers {
		w.peers = nil
	}
	for _, pc := range cfg.Peers {
		w.setPeer(pc)
	}
	return nil
}

func (w *fakeWG) removePeer(pub wgtypes.Key) {
	w.peers = slices.DeleteFunc(w.peers, func(p *fakePeer) bool { return p.pub == pub })
}

func (w *fakeWG) setPeer(pc wgtypes.PeerConfig) {
	if pc.Remove {
		w.removePeer(pc.PublicKey)
		return
	}
	if w.private != (wgtypes.Key{}) && pc.PublicKey == w.private.PublicKey() {
		return // set_peer silently ignores the device's own public key
	}
	i := slices.IndexFunc(w.peers, func(p *fakePeer) bool { return p.pub == pc.PublicKey })
	if i < 0 && pc.UpdateOnly {
		return
	}
	if i < 0 {
		w.peers = append(w.peers, &fakePeer{pub: pc.PublicKey})
		i = len(w.peers) - 1
	}
	p := w.peers[i]
	if pc.PresharedKey != nil {
		p.psk = *pc.PresharedKey
	}
	if pc.Endpoint != nil {
		ep := *pc.Endpoint
		p.endpoint = &ep
	}
	if pc.PersistentKeepaliveInterval != nil {
		p.keepalive = *pc.PersistentKeepaliveInterval
	}
	if pc.ReplaceAllowedIPs {
		p.allowed = nil
	}
	for _, n := range pc.AllowedIPs {
		prefix := prefixesOf([]net.IPNet{n})[0]
		for _, o := range w.peers {
			o.allowed = slices.DeleteFunc(o.allowed, func(a netip.Prefix) bool { return a == prefix })
		}
		p.allowed = append(p.allowed, prefix)
	}
}
