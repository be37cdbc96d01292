package snapshot

import (
	"fmt"
	"net/netip"
	"time"

	"golang.zx2c4.com/wireguard/wgctrl/wgtypes"

	"github.com/netagent/netagent/configurators/link"
)

// Ipvlan is an ipvlan's mode ("l2", "l3", "l3s") and flag ("bridge",
// "private", "vepa"); its parent is the Link's Parent.
type Ipvlan struct {
	Mode string `json:"mode"`
	Flag string `json:"flag"`
}

// Wireguard is a WireGuard device's configuration: never its private
// key nor a preshared key. PublicKey is its private key's public key (""
// when none is set); PrivateKeyFile the file netagent's link record
// names that held the private key when the snapshot was taken, so that
// a plan against the snapshot compares the intent's key file as the live
// plan does ("": none known).
type Wireguard struct {
	ListenPort     int             `json:"listenPort"`
	FwMark         int             `json:"fwmark,omitempty"`
	PublicKey      string          `json:"publicKey,omitempty"`
	PrivateKeyFile string          `json:"privateKeyFile,omitempty"`
	Peers          []WireguardPeer `json:"peers,omitempty"`
}

// WireguardPeer is one peer: its public key, endpoint ("": none),
// allowed IPs, keepalive (seconds, 0: off), whether a preshared key is
// set and the file that held it (as PrivateKeyFile).
type WireguardPeer struct {
	PublicKey        string   `json:"publicKey"`
	Endpoint         string   `json:"endpoint,omitempty"`
	AllowedIPs       []string `json:"allowedIPs,omitempty"`
	Keepalive        int      `json:"keepalive,omitempty"`
	PresharedKey     bool     `json:"presharedKey,omitempty"`
	PresharedKeyFile string   `json:"presharedKeyFile,omitempty"`
}

// maxPeers bounds a device's peers in a document.
const maxPeers = 4096

// wireguardOf is the document's form of a dumped device.
func wireguardOf(w *link.LoadedWireguard) *Wireguard {
	out := &Wireguard{ListenPort: w.ListenPort, FwMark: w.FwMark, PrivateKeyFile: w.PrivateKeyFile}
	if w.PublicKey != (wgtypes.Key{}) {
		out.PublicKey = w.PublicKey.String()
	}
	for _, p := range w.Peers {
		x := WireguardPeer{PublicKey: p.PublicKey.String(), Keepalive: int(p.Keepalive / time.Second),
			PresharedKey: p.PresharedKey, PresharedKeyFile: p.PresharedKeyFile}
		if p.Endpoint.IsValid() {
			x.Endpoint = p.Endpoint.String()
		}
		for _, a := range p.AllowedIPs {
			x.AllowedIPs = append(x.AllowedIPs, a.String())
		}
		out.Peers = append(out.Peers, x)
	}
	return out
}

// loaded is the fake's device of a checked document's.
func (w *Wireguard) loaded() *link.LoadedWireguard {
	out := &link.LoadedWireguard{ListenPort: w.ListenPort, FwMark: w.FwMark, PrivateKeyFile: w.PrivateKeyFile}
	out.PublicKey, _ = wgtypes.ParseKey(w.PublicKey)
	for _, p := range w.Peers {
		x := link.LoadedPeer{Keepalive: time.Duration(p.Keepalive) * time.Second, PresharedKey: p.PresharedKey, PresharedKeyFile: p.PresharedKeyFile}
		x.PublicKey, _ = wgtypes.ParseKey(p.PublicKey)
		x.Endpoint, _ = netip.ParseAddrPort(p.Endpoint)
		for _, a := range p.AllowedIPs {
			pfx, _ := netip.ParsePrefix(a)
			x.AllowedIPs = append(x.AllowedIPs, pfx)
		}
		out.Peers = append(out.Peers, x)
	}
	return out
}

// check checks the device: port, keys, key file paths, peers (unique,
// bounded), endpoints, allowed IPs (prefixes without host bits, each
// on one peer), keepalives.
func (w *Wireguard) check(p string) error {
	switch {
	case w.ListenPort < 0 || w.ListenPort > 65535:
		return bad(p+".listenPort", "port %d is out of range", w.ListenPort)
	case w.FwMark < 0 || int64(w.FwMark) > 1<<32-1:
		return bad(p+".fwmark", "%d is out of range", w.FwMark)
	case w.PublicKey != "" && !validKey(w.PublicKey):
		return bad(p+".publicKey", "not a base64 WireGuard key")
	case w.PrivateKeyFile != "" && (w.PublicKey == "" || !keyPath(w.PrivateKeyFile)):
		return bad(p+".privateKeyFile", "an absolute path, of a device with a private key")
	case len(w.Peers) > maxPeers:
		return bad(p+".peers", "more than %d peers", maxPeers)
	}
	keys, allowed := map[string]bool{}, map[netip.Prefix]bool{}
	for i, peer := range w.Peers {
		pp := fmt.Sprintf("%s.peers[%d]", p, i)
		if err := peer.check(pp, keys, allowed); err != nil {
			return err
		}
	}
	return nil
}

func (peer *WireguardPeer) check(p string, keys map[string]bool, allowed map[netip.Prefix]bool) error {
	switch {
	case !validKey(peer.PublicKey) || keys[peer.PublicKey]:
		return bad(p+".publicKey", "not a base64 WireGuard key, or twice")
	case peer.Keepalive < 0 || peer.Keepalive > 65535:
		return bad(p+".keepalive", "%d is out of range", peer.Keepalive)
	case peer.PresharedKeyFile != "" && (!peer.PresharedKey || !keyPath(peer.PresharedKeyFile)):
		return bad(p+".presharedKeyFile", "an absolute path, of a peer with a preshared key")
	case len(peer.AllowedIPs) > maxPeers:
		return bad(p+".allowedIPs", "more than %d", maxPeers)
	}
	if peer.Endpoint != "" {
		if ap, err := netip.ParseAddrPort(peer.Endpoint); err != nil || ap.Port() == 0 || ap.Addr().Zone() != "" {
			return bad(p+".endpoint", "%q is not an address and port", truncate(peer.Endpoint))
		}
	}
	keys[peer.PublicKey] = true
	for j, a := range peer.AllowedIPs {
		pfx, err := netip.ParsePrefix(a)
		if err != nil || pfx != pfx.Masked() || allowed[pfx] {
			return bad(fmt.Sprintf("%s.allowedIPs[%d]", p, j), "%q is not a prefix without host bits, or is on two peers", truncate(a))
		}
		allowed[pfx] = true
	}
	return nil
}

func validKey(s string) bool {
	_, err := wgtypes.ParseKey(s)
	return err == nil
}

// keyPath: an absolute path of at most 4096 bytes, no control characters.
func keyPath(s string) bool {
	return len(s) <= 4096 && s != "" && s[0] == '/' && recordPath(s[1:])
}
