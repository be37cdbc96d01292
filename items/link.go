package items

import (
	"bytes"
	"net"
	"strconv"
	"strings"

	dg "github.com/netagent/netagent/depgraph"
)

// Link is an external item: a network interface present in the kernel that
// netagent did not create and never creates or deletes (a physical NIC, or a
// veth end moved into the namespace to play one). The agent puts Links into
// the current state from netlink events; they are never intended. Managed
// interfaces of kind physical depend on their Link, and routes out of an
// uplink depend on its carrier (HasCarrier).
type Link struct {
	IfName string
	Index  int
	// Kind is the netlink kind ("veth", "dummy"); "" for a physical device.
	Kind    string
	MAC     net.HardwareAddr
	AdminUp bool // IFF_UP
	OperUp  bool // operstate up
	Carrier bool // IFF_LOWER_UP
}

var _ dg.Item = (*Link)(nil)

// Type returns TypeLink.
func (l *Link) Type() string { return TypeLink }

// Name returns the interface name.
func (l *Link) Name() string { return l.IfName }

// External returns true: links are observed only.
func (l *Link) External() bool { return true }

// Dependencies returns none.
func (l *Link) Dependencies() []dg.Dependency { return nil }

// Equal compares every field.
func (l *Link) Equal(other dg.Item) bool {
	o, ok := other.(*Link)
	if !ok || o == nil {
		return false
	}
	return l.IfName == o.IfName && l.Index == o.Index && l.Kind == o.Kind &&
		bytes.Equal(l.MAC, o.MAC) && l.AdminUp == o.AdminUp &&
		l.OperUp == o.OperUp && l.Carrier == o.Carrier
}

// String describes the link in one line.
func (l *Link) String() string {
	var b strings.Builder
	b.WriteString("link " + l.IfName + " index " + strconv.Itoa(l.Index))
	if l.Kind != "" {
		b.WriteString(" kind " + l.Kind)
	}
	if len(l.MAC) > 0 {
		b.WriteString(" mac " + l.MAC.String())
	}
	b.WriteString(" admin " + upDown(l.AdminUp) + " oper " + upDown(l.OperUp))
	if l.Carrier {
		b.WriteString(" carrier")
	} else {
		b.WriteString(" no-carrier")
	}
	return b.String()
}

func upDown(up bool) string {
	if up {
		return "up"
	}
	return "down"
}
