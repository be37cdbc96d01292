package items

import (
	"cmp"
	"encoding/base64"
	"fmt"
	"net/netip"
	"path/filepath"
	"slices"
	"strings"

	dg "github.com/netagent/netagent/depgraph"
)

// KindWireguard is the kind of a WireGuard interface.
const KindWireguard InterfaceKind = "wireguard"

// WireguardAttrs are the settings of a WireGuard interface (required). The
// link is made over rtnetlink; everything here is the device's
// configuration (generic netlink), which the kernel changes in place: a
// WireGuard interface is never recreated for it.
//
// Keys are never held here: the private key and the preshared keys are
// files the configurator reads when it applies or reads back (render is
// pure and reads no file). Read-back gives PrivateKeyFile only as the
// intended item names it, and only when the device's public key is the one
// of the file's private key (a rotated key file is drift); likewise a
// peer's PresharedKeyFile.
type WireguardAttrs struct {
	// PrivateKeyFile is the absolute path of the file holding the base64
	// private key ("" in a read-back without an intent, or when the device
	// holds another key than the file's).
	PrivateKeyFile string
	// ListenPort is the UDP port; 0 lets the kernel pick one (and leaves
	// the one it picked as it is).
	ListenPort uint16
	FwMark     uint32 // 0: none
	// Peers are a set by public key; Equal ignores their order and that of
	// their allowed IPs.
	Peers []WireguardPeer
	// PublicKey is read back only: the public key (base64) of the private
	// key the device holds. The configurator's read-back resolves it
	// against the intended PrivateKeyFile and clears it; the intent never
	// sets it.
	PublicKey string
}

// WireguardPeer is one peer of a WireGuard interface.
type WireguardPeer struct {
	PublicKey string // base64 of 32 bytes
	// PresharedKeyFile is the absolute path of the file holding the
	// base64 preshared key; "" for none.
	PresharedKeyFile string
	// AllowedIPs are prefixes without host bits.
	AllowedIPs []netip.Prefix
	// Endpoint is the peer's address and UDP port; the zero AddrPort for
	// none (the peer's roaming address is learnt).
	Endpoint netip.AddrPort
	// PersistentKeepalive is the keepalive interval in seconds; 0 is off.
	PersistentKeepalive uint16
	// PresharedKeySum is read back only: a fingerprint (SHA-256, hex) of
	// the preshared key the device holds for the peer, "" for none. The
	// configurator's read-back resolves it against the intended
	// PresharedKeyFile and clears it; the intent never sets it.
	PresharedKeySum string
}

// Kind returns KindWireguard.
func (a *WireguardAttrs) Kind() InterfaceKind { return KindWireguard }

// Equal compares the settings, the peers as a set by public key and each
// peer's allowed IPs as a set.
func (a *WireguardAttrs) Equal(other KindAttrs) bool {
	o, ok := other.(*WireguardAttrs)
	if !ok || o == nil {
		return false
	}
	if a.PrivateKeyFile != o.PrivateKeyFile || a.PublicKey != o.PublicKey || a.ListenPort != o.ListenPort ||
		a.FwMark != o.FwMark || len(a.Peers) != len(o.Peers) {
		return false
	}
	ap, op := a.sortedPeers(), o.sortedPeers()
	for i := range ap {
		if !ap[i].Equal(&op[i]) {
			return false
		}
	}
	return true
}

// Equal compares two peers, their allowed IPs as a set.
func (p *WireguardPeer) Equal(o *WireguardPeer) bool {
	return p.PublicKey == o.PublicKey && p.PresharedKeyFile == o.PresharedKeyFile && p.PresharedKeySum == o.PresharedKeySum &&
		p.Endpoint == o.Endpoint && p.PersistentKeepalive == o.PersistentKeepalive &&
		slices.Equal(SortedPrefixes(p.AllowedIPs), SortedPrefixes(o.AllowedIPs))
}

// sortedPeers returns a copy of the peers sorted by public key.
func (a *WireguardAttrs) sortedPeers() []WireguardPeer {
	peers := slices.Clone(a.Peers)
	slices.SortFunc(peers, func(x, y WireguardPeer) int { return cmp.Compare(x.PublicKey, y.PublicKey) })
	return peers
}

// SortedPrefixes returns a sorted copy of ps (the order the kernel's
// allowed-IPs trie has no say in).
func SortedPrefixes(ps []netip.Prefix) []netip.Prefix {
	out := slices.Clone(ps)
	slices.SortFunc(out, func(x, y netip.Prefix) int {
		if c := x.Addr().Compare(y.Addr()); c != 0 {
			return c
		}
		return cmp.Compare(x.Bits(), y.Bits())
	})
	return out
}

// NeedsRecreate: never. The private key, the listen port, the fwmark and
// every peer are set on a live device by WG_CMD_SET_DEVICE
// (wg_set_device in drivers/net/wireguard/netlink.c), which rebinds the
// socket for a new port; nothing of it is fixed at the link's creation.
func (a *WireguardAttrs) NeedsRecreate(KindAttrs) bool { return false }

// Dependencies returns none (the endpoints are reached through routes the
// kernel looks up when it sends).
func (a *WireguardAttrs) Dependencies(string) []dg.Dependency { return nil }

// ConflictKeys: "wireguard port <port>" for a nonzero listen port: two
// devices of a namespace cannot bind the same UDP port (EADDRINUSE).
func (a *WireguardAttrs) ConflictKeys(string) []string {
	if a.ListenPort == 0 {
		return nil
	}
	return []string{fmt.Sprintf("wireguard port %d", a.ListenPort)}
}

// Problem checks the key paths and public keys, that peers are unique,
// that allowed IPs are prefixes without host bits held by one peer only,
// and the endpoints.
func (a *WireguardAttrs) Problem(string) string {
	if !filepath.IsAbs(a.PrivateKeyFile) {
		return fmt.Sprintf("private key file %q is not an absolute path", a.PrivateKeyFile)
	}
	keys := map[string]bool{}
	allowed := map[netip.Prefix]bool{}
	for i := range a.Peers {
		p := &a.Peers[i]
		switch {
		case !ValidWireguardKey(p.PublicKey):
			return fmt.Sprintf("peer %q: not a base64 WireGuard key", p.PublicKey)
		case keys[p.PublicKey]:
			return fmt.Sprintf("peer %s twice", p.PublicKey)
		case p.PresharedKeyFile != "" && !filepath.IsAbs(p.PresharedKeyFile):
			return fmt.Sprintf("peer %s: preshared key file %q is not an absolute path", p.PublicKey, p.PresharedKeyFile)
		case p.Endpoint.IsValid() && (p.Endpoint.Port() == 0 || p.Endpoint.Addr().Zone() != ""):
			return fmt.Sprintf("peer %s: bad endpoint %s", p.PublicKey, p.Endpoint)
		}
		keys[p.PublicKey] = true
		for _, ip := range p.AllowedIPs {
			switch {
			case !ip.IsValid() || ip != ip.Masked():
				return fmt.Sprintf("peer %s: allowed ip %s is not a prefix without host bits", p.PublicKey, ip)
			case allowed[ip]:
				return fmt.Sprintf("allowed ip %s on two peers", ip)
			}
			allowed[ip] = true
		}
	}
	return ""
}

// ValidWireguardKey reports whether s is the standard base64 of 32 bytes,
// as wg(8) writes keys.
func ValidWireguardKey(s string) bool {
	b, err := base64.StdEncoding.DecodeString(s)
	return err == nil && len(b) == 32
}

// String describes the settings: the key files' paths, never a key but
// the public ones.
func (a *WireguardAttrs) String() string {
	s := joinSet("private-key", a.PrivateKeyFile, "public-key", a.PublicKey, "listen-port", a.ListenPort, "fwmark", a.FwMark)
	var b strings.Builder
	b.WriteString(s)
	for _, p := range a.sortedPeers() {
		fmt.Fprintf(&b, " peer %s", p.PublicKey)
		if ps := p.string(); ps != "" {
			b.WriteString(" " + ps)
		}
	}
	return strings.TrimSpace(b.String())
}

func (p *WireguardPeer) string() string {
	var ips []string
	for _, ip := range SortedPrefixes(p.AllowedIPs) {
		ips = append(ips, ip.String())
	}
	endpoint := ""
	if p.Endpoint.IsValid() {
		endpoint = p.Endpoint.String()
	}
	return joinSet("preshared-key", p.PresharedKeyFile, "allowed-ips", strings.Join(ips, ","),
		"endpoint", endpoint, "persistent-keepalive", p.PersistentKeepalive)
}
