package netplan

import (
	"net/netip"
	"path/filepath"

	"go.yaml.in/yaml/v3"

	"github.com/netagent/netagent/agent/intent"
)

// A wireguard tunnel maps onto the intent's wireguard section: key (or
// keys.private) as privateKeyFile, mark as fwmark, port as listenPort, and
// each peer's keys.public, keys.shared (presharedKeyFile), allowed-ips,
// endpoint and keepalive. The intent never holds a key: a key netplan
// gives inline (base64) is refused; netplan and networkd (v242+) take an
// absolute path to a file of the key instead, which is what the intent
// names.

// inlineKey is why an inline key is refused.
const inlineKey = "an inline key: the intent holds no keys (it names a file of the key, read at apply); " +
	"write the key to a file only root reads and give netplan its absolute path instead, as networkd (v242+) takes it"

// wgKey sets a private key given as a scalar (key:) or as keys.private.
func (c *conv) wgKey(ifc *intent.Interface, e entry) bool {
	if e.v.Kind == yaml.MappingNode {
		return c.each(e, e.v, func(pe entry) bool {
			if pe.k.Value != "private" {
				return c.unsupported(pe, pe.k, pe.k.Value+" is a key of gre and vti tunnels, not of a wireguard one")
			}
			return c.keyFile(pe, &ifc.Wireguard.PrivateKeyFile)
		})
	}
	return c.keyFile(e, &ifc.Wireguard.PrivateKeyFile)
}

// keyFile sets file from a key that must be an absolute path.
func (c *conv) keyFile(e entry, file *string) bool {
	if e.v.Kind != yaml.ScalarNode || !filepath.IsAbs(e.v.Value) {
		return c.unsupported(e, e.v, inlineKey)
	}
	*file = e.v.Value
	return true
}

func (c *conv) wgMark(ifc *intent.Interface, e entry) bool {
	if ifc.Wireguard == nil {
		return c.unsupported(e, e.k, "mark is a wireguard tunnel's only")
	}
	v, ok := c.number(e, e.v, 0, 1<<32-1)
	ifc.Wireguard.FwMark = int(v)
	return ok
}

// wgPeers maps the peers list.
func (c *conv) wgPeers(ifc *intent.Interface, e entry) bool {
	if ifc.Wireguard == nil {
		return c.unsupported(e, e.k, "peers are a wireguard tunnel's only")
	}
	if e.v.Kind != yaml.SequenceNode {
		return c.bad(e, "is not a list")
	}
	ok := true
	for _, pn := range e.v.Content {
		var p intent.WireguardPeer
		ok = c.each(e, pn, func(pe entry) bool { return c.wgPeerKey(&p, pe) }) && ok
		ifc.Wireguard.Peers = append(ifc.Wireguard.Peers, p)
	}
	return ok
}

func (c *conv) wgPeerKey(p *intent.WireguardPeer, e entry) bool {
	switch e.k.Value {
	case "keys":
		return c.each(e, e.v, func(ke entry) bool {
			switch ke.k.Value {
			case "public":
				p.PublicKey = ke.v.Value
				return true
			case "shared":
				return c.keyFile(ke, &p.PresharedKeyFile)
			}
			return c.bad(ke, "unknown key")
		})
	case "allowed-ips":
		return c.allowedIPs(p, e)
	case "endpoint":
		if _, err := netip.ParseAddrPort(e.v.Value); err != nil {
			return c.unsupported(e, e.v, "not address:port (a host name?): netagent resolves no names, and the kernel takes an address")
		}
		p.Endpoint = e.v.Value
	case "keepalive":
		v, ok := c.number(e, e.v, 0, 65535)
		p.PersistentKeepalive = intent.Seconds{Count: int(v)}
		return ok
	default:
		return c.bad(e, "unknown key")
	}
	return true
}

// allowedIPs takes prefixes without host bits, which is what the intent
// takes (a prefix with host bits is refused, not masked).
func (c *conv) allowedIPs(p *intent.WireguardPeer, e entry) bool {
	if e.v.Kind != yaml.SequenceNode {
		return c.bad(e, "is not a list")
	}
	ok := true
	for _, n := range e.v.Content {
		pfx, err := netip.ParsePrefix(n.Value)
		switch {
		case err != nil:
			ok = c.bad(entry{e.d, e.k, n}, "is not a prefix")
		case pfx.Masked() != pfx:
			ok = c.unsupported(entry{e.d, e.k, n}, n, n.Value+" has host bits: the intent takes the prefix "+pfx.Masked().String()+" only, not an address in it; write that")
		default:
			p.AllowedIPs = append(p.AllowedIPs, pfx.String())
		}
	}
	return ok
}
