package render

import (
	"net/netip"

	"github.com/netagent/netagent/agent/intent"
	"github.com/netagent/netagent/items"
)

// wireguardKind: the key files go to the item as paths (render reads no
// file: the configurator reads them when it applies); peers keep their
// order, allowed IPs and endpoints become netip values. Back, an item read
// from a device whose key is not the intended file's has no key file, and
// one read without an intent neither: show never gives a key.
var wireguardKind = linkKind{
	toItem: func(ifc *intent.Interface) items.KindAttrs {
		w := ifc.Wireguard
		a := &items.WireguardAttrs{PrivateKeyFile: w.PrivateKeyFile, ListenPort: uint16(w.ListenPort), FwMark: uint32(w.FwMark)}
		for _, p := range w.Peers {
			peer := items.WireguardPeer{PublicKey: p.PublicKey, PresharedKeyFile: p.PresharedKeyFile,
				PersistentKeepalive: uint16(p.PersistentKeepalive.Units())}
			for _, s := range p.AllowedIPs {
				peer.AllowedIPs = append(peer.AllowedIPs, netip.MustParsePrefix(s)) // validated
			}
			if p.Endpoint != "" {
				peer.Endpoint = netip.MustParseAddrPort(p.Endpoint) // validated
			}
			a.Peers = append(a.Peers, peer)
		}
		return a
	},
	toIntent: func(it *items.Interface, ifc *intent.Interface) {
		a := items.AttrsOf[*items.WireguardAttrs](it)
		if a == nil {
			return
		}
		w := &intent.Wireguard{PrivateKeyFile: a.PrivateKeyFile, ListenPort: int(a.ListenPort), FwMark: int(a.FwMark)}
		for _, p := range a.Peers {
			peer := intent.WireguardPeer{PublicKey: p.PublicKey, PresharedKeyFile: p.PresharedKeyFile,
				PersistentKeepalive: intent.Seconds{Count: int(p.PersistentKeepalive)}}
			for _, ip := range p.AllowedIPs {
				peer.AllowedIPs = append(peer.AllowedIPs, ip.String())
			}
			if p.Endpoint.IsValid() {
				peer.Endpoint = p.Endpoint.String()
			}
			w.Peers = append(w.Peers, peer)
		}
		ifc.Wireguard = w
	},
}
