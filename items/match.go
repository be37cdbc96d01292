package items

import (
	"bytes"
	"net"
	"path"
	"strconv"
	"strings"
)

// NICMatch finds a physical interface's NIC by what it is rather than by
// its kernel name: every key given must hold (zero values are not keys).
// The interface's IfName is then the name netagent gives the NIC (a
// rename); see configurators/link (match.go).
type NICMatch struct {
	PermanentMAC net.HardwareAddr // IFLA_PERM_ADDRESS, the burnt-in address
	MAC          net.HardwareAddr // the current address
	Driver       string           // the driver's name (ethtool drvinfo)
	Path         string           // udev's ID_PATH form, e.g. "pci-0000:00:1f.6"
	Name         string           // a path.Match glob on the kernel name (before netagent renamed it)
}

// NIC is what a NIC is, as the kernel reports it, for a NICMatch to
// compare: its kernel name, addresses, driver and bus path ("" when not
// known or not derivable).
type NIC struct {
	Name         string
	Index        int
	PermanentMAC net.HardwareAddr
	MAC          net.HardwareAddr
	Driver       string
	Path         string
}

// Empty reports whether the match has no key.
func (m *NICMatch) Empty() bool {
	return m == nil || len(m.PermanentMAC) == 0 && len(m.MAC) == 0 && m.Driver == "" && m.Path == "" && m.Name == ""
}

// Matches reports whether every key of m holds for n. A key whose value
// n does not know (an unknown driver or path) does not hold.
func (m *NICMatch) Matches(n NIC) bool {
	if len(m.PermanentMAC) > 0 && !bytes.Equal(m.PermanentMAC, n.PermanentMAC) {
		return false
	}
	if len(m.MAC) > 0 && !bytes.Equal(m.MAC, n.MAC) {
		return false
	}
	if m.Driver != "" && m.Driver != n.Driver {
		return false
	}
	if m.Path != "" && m.Path != n.Path {
		return false
	}
	if m.Name != "" {
		ok, err := path.Match(m.Name, n.Name)
		return err == nil && ok
	}
	return true
}

// Equal compares every key (both nil is equal).
func (m *NICMatch) Equal(o *NICMatch) bool {
	if m == nil || o == nil {
		return m == nil && o == nil
	}
	return bytes.Equal(m.PermanentMAC, o.PermanentMAC) && bytes.Equal(m.MAC, o.MAC) &&
		m.Driver == o.Driver && m.Path == o.Path && m.Name == o.Name
}

// String describes the match, "permanentMac 52:54:00:12:34:56 driver e1000".
func (m *NICMatch) String() string {
	if m == nil {
		return ""
	}
	var parts []string
	add := func(k, v string) {
		if v != "" {
			parts = append(parts, k+" "+v)
		}
	}
	add("permanentMac", macString(m.PermanentMAC))
	add("mac", macString(m.MAC))
	add("driver", m.Driver)
	add("path", m.Path)
	add("name", m.Name)
	return strings.Join(parts, " ")
}

func macString(mac net.HardwareAddr) string {
	if len(mac) == 0 {
		return ""
	}
	return mac.String()
}

// Problem describes what is wrong with the match of a physical
// interface, or "" (nil: nothing is wrong).
func (m *NICMatch) Problem() string {
	if m == nil {
		return ""
	}
	return m.problem(KindPhysical)
}

// problem describes what is wrong with the match of an interface of kind,
// or "": a match is for a physical interface, and has a key; its MACs are
// unicast, its glob is valid.
func (m *NICMatch) problem(kind InterfaceKind) string {
	switch {
	case kind != KindPhysical:
		return "only a physical interface is matched, not a " + string(kind)
	case m.Empty():
		return "no key"
	case len(m.PermanentMAC) > 0 && !unicastMAC(m.PermanentMAC):
		return "permanentMac " + m.PermanentMAC.String() + " is not a unicast address"
	case len(m.MAC) > 0 && !unicastMAC(m.MAC):
		return "mac " + m.MAC.String() + " is not a unicast address"
	}
	if _, err := path.Match(m.Name, ""); err != nil {
		return "name " + strconv.Quote(m.Name) + " is not a valid glob"
	}
	return ""
}

// unicastMAC reports whether mac is a 6-byte unicast address, not all
// zeroes.
func unicastMAC(mac net.HardwareAddr) bool {
	return len(mac) == 6 && mac[0]&1 == 0 && !bytes.Equal(mac, make(net.HardwareAddr, 6))
}
