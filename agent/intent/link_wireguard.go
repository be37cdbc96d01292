package intent

import (
	"encoding/base64"
	"fmt"
	"net"
	"net/netip"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/netagent/netagent/items"
)

// LinkWireguard is the type of a wireguard interface, whose section is "wireguard".
const LinkWireguard LinkType = "wireguard"

// Wireguard holds the settings of a WireGuard interface: {"type":
// "wireguard", "wireguard": {"privateKeyFile": "/etc/netagent/wg0.key",
// "listenPort": 51820, "peers": [...]}}. The section is required. Keys are
// never in the intent: PrivateKeyFile (and a peer's PresharedKeyFile), an
// absolute path, names a file holding one base64 key, as wg genkey writes
// it, which netagent reads when it applies (the file may change: a new key
// is applied by the next reconcile). The file must not be accessible to
// others (o-rwx). A peer's PublicKey is a base64 key, once per interface;
// its AllowedIPs are prefixes without host bits, each on one peer; its
// Endpoint is address:port or [v6]:port (no host names). Two wireguard
// interfaces cannot listen on the same nonzero port. A wireguard
// interface has no mac and no master.
type Wireguard struct {
	PrivateKeyFile string          `json:"privateKeyFile"`
	ListenPort     int             `json:"listenPort,omitempty"` // 0: the kernel picks one
	FwMark         int             `json:"fwmark,omitempty"`     // 0: none
	Peers          []WireguardPeer `json:"peers,omitempty"`
}

// WireguardPeer is a peer of a WireGuard interface. AllowedIPs are CIDR
// prefixes without host bits, each on one peer of the interface. Endpoint
// is "address:port" or "[IPv6 address]:port"; a host name is refused
// (netagent resolves no names: the endpoint would depend on DNS at apply
// time, and the kernel takes an address only).
type WireguardPeer struct {
	PublicKey           string   `json:"publicKey"`
	PresharedKeyFile    string   `json:"presharedKeyFile,omitempty"`
	AllowedIPs          []string `json:"allowedIPs,omitempty"`
	Endpoint            string   `json:"endpoint,omitempty"`
	PersistentKeepalive Seconds  `json:"persistentKeepalive,omitzero"` // seconds or "25s"; 0: off
}

// wireguardSection: required; two WireGuard interfaces cannot listen on
// the same nonzero port.
var wireguardSection = linkSection{
	typ:      LinkWireguard,
	required: true,
	present:  func(ifc *Interface) bool { return ifc.Wireguard != nil },
	check:    (*checker).wireguard,
}

// wireguard checks a WireGuard interface: its key file, port, fwmark and
// peers; it has no MAC address and cannot be a bond or bridge port (it is
// not Ethernet).
func (c *checker) wireguard(ifc *Interface, o Origin, unique map[string]Origin) {
	w := ifc.Wireguard
	c.keyFile(o.field("privateKeyFile"), w.PrivateKeyFile, true)
	if c.inRange(o.field("listenPort"), w.ListenPort, 0, 65535) && w.ListenPort != 0 {
		c.unique(unique, fmt.Sprintf("WireGuard listen port %d", w.ListenPort), o.field("listenPort"))
	}
	c.inRange(o.field("fwmark"), w.FwMark, 0, 1<<32-1)
	at := Origin{File: o.File, Path: strings.TrimSuffix(o.Path, "."+string(LinkWireguard))} // the interface's
	if ifc.MAC != "" {
		c.fail(at.field("mac"), "a wireguard interface has no MAC address")
	}
	if ifc.Master != "" {
		c.fail(at.field("master"), "a wireguard interface is not Ethernet and cannot be a port of %q", ifc.Master)
	}
	keys := map[string]Origin{}
	allowed := map[netip.Prefix]Origin{}
	for i := range w.Peers {
		c.wireguardPeer(&w.Peers[i], o.field("peers").index(i), keys, allowed)
	}
}

// wireguardPeer checks one peer: keys seen on the interface's peers so
// far, and their allowed IPs (the kernel keeps one peer per allowed IP and
// would silently move it to the last peer given it).
func (c *checker) wireguardPeer(p *WireguardPeer, o Origin, keys map[string]Origin, allowed map[netip.Prefix]Origin) {
	if c.wireguardKey(o.field("publicKey"), p.PublicKey) {
		if prev, ok := keys[p.PublicKey]; ok {
			c.fail(o.field("publicKey"), "peer %s is already defined at %s", p.PublicKey, prev)
		} else {
			keys[p.PublicKey] = o.field("publicKey")
		}
	}
	c.keyFile(o.field("presharedKeyFile"), p.PresharedKeyFile, false)
	for j, s := range p.AllowedIPs {
		at := o.field("allowedIPs").index(j)
		prefix, ok := c.network(at, s)
		if !ok {
			continue
		}
		if prev, ok := allowed[prefix]; ok {
			c.fail(at, "%s is already allowed at %s: the kernel keeps an allowed IP on one peer only", prefix, prev)
			continue
		}
		allowed[prefix] = at
	}
	c.endpoint(o.field("endpoint"), p.Endpoint)
	checkDuration(c, o.field("persistentKeepalive"), p.PersistentKeepalive, 0, 65535)
}

// keyFile checks the path of a key file: absolute, so that it does not
// depend on the agent's working directory.
func (c *checker) keyFile(o Origin, path string, required bool) {
	switch {
	case path == "":
		if required {
			c.fail(o, "is required (the path of a file holding the base64 key)")
		}
	case !filepath.IsAbs(path):
		c.fail(o, "%q is not an absolute path", path)
	}
}

// wireguardKey checks a public key: the standard base64 of 32 bytes.
func (c *checker) wireguardKey(o Origin, s string) bool {
	if s == "" {
		c.fail(o, "is required")
		return false
	}
	if b, err := base64.StdEncoding.DecodeString(s); err != nil || len(b) != 32 {
		c.fail(o, "%q is not a WireGuard key (the base64 of 32 bytes, as wg pubkey writes it)", s)
		return false
	}
	return true
}

// endpoint checks a peer's endpoint, if set: a unicast address and a port
// 1-65535; host names are refused, netagent has no resolver.
func (c *checker) endpoint(o Origin, s string) {
	if s == "" {
		return
	}
	ap, err := netip.ParseAddrPort(s)
	if err != nil {
		host, port, serr := net.SplitHostPort(s)
		if _, aerr := netip.ParseAddr(host); serr == nil && aerr != nil && host != "" {
			if _, perr := strconv.ParseUint(port, 10, 16); perr == nil {
				c.fail(o, "%q names a host: netagent resolves no names, write its IP address (\"[v6]:port\" for IPv6)", s)
				return
			}
		}
		c.fail(o, "%q is not an address and port (like 192.0.2.9:51820 or [2001:db8::9]:51820)", s)
		return
	}
	a := ap.Addr()
	switch {
	case a.Zone() != "":
		c.fail(o, "%q has a zone, which is not allowed", s)
	case a.Is4In6():
		c.fail(o, "%s is an IPv4-mapped IPv6 address; write the IPv4 address", a)
	case !items.IsUnicast(a):
		c.fail(o, "%s is not a unicast address", a)
	case ap.Port() == 0:
		c.fail(o, "port 0 is not a port to send to")
	}
}
