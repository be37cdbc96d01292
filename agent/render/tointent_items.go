package render

import (
	"github.com/netagent/netagent/agent/intent"
	"github.com/netagent/netagent/items"
)

// interfaceToIntent converts an Interface item, its MAC only if it is an
// Ethernet one. An owned veth whose peer
// is out of reach (in a namespace without a name) cannot be declared as a
// veth; it is described as physical: it exists, and is not created.
func interfaceToIntent(it *items.Interface) *intent.Interface {
	ifc := &intent.Interface{
		Name:  it.IfName,
		Type:  intent.LinkType(it.Kind),
		MTU:   it.MTU,
		State: stateOf(it.AdminUp),
		Alias: it.Alias,
	}
	// Only an Ethernet address is a MAC: a tunnel's device address is its
	// local endpoint (4 or 16 bytes), which the intent does not set.
	if len(it.MAC) == 6 && it.Kind != items.KindPhysical {
		ifc.MAC = it.MAC.String()
	}
	if kind, ok := linkKinds[ifc.Type]; ok {
		kind.toIntent(it, ifc)
	}
	ifc.Match = matchToIntent(it.Match)
	return ifc
}

// matchToIntent converts a physical interface's match back (nil: none).
func matchToIntent(m *items.NICMatch) *intent.Match {
	if m == nil {
		return nil
	}
	out := &intent.Match{Driver: m.Driver, Path: m.Path, Name: m.Name}
	if len(m.PermanentMAC) > 0 {
		out.PermanentMAC = m.PermanentMAC.String()
	}
	if len(m.MAC) > 0 {
		out.MAC = m.MAC.String()
	}
	return out
}

// optional is a netip.Addr or netip.Prefix.
type optional interface {
	IsValid() bool
	String() string
}

// addrString returns a's text, or "" for the zero value.
func addrString(a optional) string {
	if !a.IsValid() {
		return ""
	}
	return a.String()
}
