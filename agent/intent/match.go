package intent

import (
	"path"
	"strings"
)

// Match finds a physical interface's NIC by what it is, not by its kernel
// name: every key given must hold, and at least one is given. The
// interface's Name is then the name netagent gives the NIC it finds
// (renaming it), and the NIC's own name is given back when the interface
// leaves the intent.
type Match struct {
	// PermanentMAC is the NIC's burnt-in address (IFLA_PERM_ADDRESS,
	// `ethtool -P`).
	PermanentMAC string `json:"permanentMac,omitempty"`
	// MAC is the NIC's current address.
	MAC string `json:"mac,omitempty"`
	// Driver is the name of the NIC's driver ("e1000e", "virtio_net").
	Driver string `json:"driver,omitempty"`
	// Path is the NIC's bus path as udev's ID_PATH writes it
	// ("pci-0000:00:1f.6").
	Path string `json:"path,omitempty"`
	// Name is a glob (path.Match syntax, "enp*") on the name the kernel
	// gave the NIC (its name before netagent renamed it).
	Name string `json:"name,omitempty"`
}

// key is the match as one comparable string, to find two interfaces that
// match the same way.
func (m *Match) key() string {
	return strings.Join([]string{strings.ToLower(m.PermanentMAC), strings.ToLower(m.MAC), m.Driver, m.Path, m.Name}, "\x00")
}

// match checks an interface's match (at o): on a physical interface only,
// with a key, unicast MACs, a driver and a path without odd characters,
// a valid glob; and no other interface matching the same way (seen, by
// key: where each match is).
func (c *checker) match(ifc *Interface, o Origin, seen map[string]Origin) {
	m := ifc.Match
	if m == nil {
		return
	}
	if ifc.Type != LinkPhysical {
		c.fail(o, "can only be set on a physical interface, not on a %s", ifc.Type)
		return
	}
	if *m == (Match{}) {
		c.fail(o, "has no key: give permanentMac, mac, driver, path or name")
		return
	}
	c.matchKeys(m, o)
	if prev, ok := seen[m.key()]; ok {
		c.fail(o, "matches the same NIC as the match at %s", prev)
		return
	}
	seen[m.key()] = o
}

// matchKeys checks each key of m.
func (c *checker) matchKeys(m *Match, o Origin) {
	if m.PermanentMAC != "" {
		c.mac(o.field("permanentMac"), m.PermanentMAC, false)
	}
	if m.MAC != "" {
		c.mac(o.field("mac"), m.MAC, false)
	}
	word := func(field, s string, max int) {
		if s != "" && (len(s) > max || strings.ContainsFunc(s, func(r rune) bool { return r <= ' ' || r > '~' || r == '/' })) {
			c.fail(o.field(field), "%q is not a %s (printable, no spaces or /, at most %d bytes)", s, field, max)
		}
	}
	word("driver", m.Driver, 32)
	word("path", m.Path, 255)
	if m.Name == "" {
		return
	}
	if _, err := path.Match(m.Name, ""); err != nil || len(m.Name) > 255 {
		c.fail(o.field("name"), "%q is not a valid glob (path.Match syntax, like \"enp*\")", m.Name)
	}
}
