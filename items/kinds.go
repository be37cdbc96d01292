package items

import (
	dg "github.com/netagent/netagent/depgraph"
)

// KindAttrs are the settings of one kind of interface (*BondAttrs for a
// bond, *TunnelAttrs for the tunnels gre, ipip, sit and ip6tnl, ...). Each
// kind's file (kind_<kind>.go) holds its attributes and every rule about
// them: its defaults (stated once), what the kernel cannot change in place,
// what it refers to and what it keeps unique.
type KindAttrs interface {
	// Kind is the interface kind the attributes belong to.
	Kind() InterfaceKind
	// Equal compares the attributes by value (false for another kind's).
	Equal(other KindAttrs) bool
	// NeedsRecreate reports whether the kernel cannot turn old (the same
	// kind's attributes; the zero ones when old had none) into these in
	// place (see InterfaceNeedsRecreate).
	NeedsRecreate(old KindAttrs) bool
	// Dependencies are what the interface self needs because of its
	// attributes (a parent interface).
	Dependencies(self string) []dg.Dependency
	// ConflictKeys are the kernel's keys the attributes take besides the
	// interface's name (see Interface.ConflictKeys).
	ConflictKeys(self string) []string
	// Problem describes what the kernel would refuse in the attributes of
	// the interface self, or "".
	Problem(self string) string
	// String describes the attributes, `ip link` style; "" when all are
	// defaults.
	String() string
}

// kindSpec is what items knows of an interface kind beyond its attributes.
type kindSpec struct {
	// zero returns the kind's zero attributes, which are the kernel's
	// defaults; nil for a kind without attributes.
	zero func() KindAttrs
	// required: the kind has no defaults, an interface of it must have its
	// attributes.
	required bool
	// existing: the interface is not created but exists already (a NIC);
	// it depends on its Link.
	existing bool
	// master: the kind takes ports (IFLA_MASTER), which are Ports of
	// MasterKind the kind.
	master bool
}

// kinds is the table of interface kinds. Adding a kind is one line here
// and a kind_<kind>.go file with its attributes.
var kinds = map[InterfaceKind]kindSpec{
	KindPhysical:  {existing: true},
	KindBond:      {zero: func() KindAttrs { return &BondAttrs{} }, master: true},
	KindVLAN:      {zero: func() KindAttrs { return &VLANAttrs{} }, required: true},
	KindBridge:    {zero: func() KindAttrs { return &BridgeAttrs{} }, master: true},
	KindVeth:      {zero: func() KindAttrs { return &VethAttrs{} }, required: true},
	KindMacvlan:   {zero: func() KindAttrs { return &MacvlanAttrs{} }, required: true},
	KindVxlan:     {zero: func() KindAttrs { return &VxlanAttrs{} }, required: true},
	KindDummy:     {}, // no attributes
	KindGRE:       tunnelSpec(KindGRE),
	KindIPIP:      tunnelSpec(KindIPIP),
	KindSIT:       tunnelSpec(KindSIT),
	KindIP6Tnl:    tunnelSpec(KindIP6Tnl),
	KindWireguard: {zero: func() KindAttrs { return &WireguardAttrs{} }, required: true},
	KindIpvlan:    {zero: func() KindAttrs { return &IpvlanAttrs{} }, required: true},
	KindVRF:       {zero: func() KindAttrs { return &VRFAttrs{} }, required: true, master: true},
}

// tunnelSpec is the spec of a tunnel kind: TunnelAttrs of that type.
func tunnelSpec(kind InterfaceKind) kindSpec {
	return kindSpec{zero: func() KindAttrs { return &TunnelAttrs{Type: kind} }, required: true}
}

// TakesPorts reports whether interfaces of the kind are masters of Ports:
// bond, bridge, vrf.
func TakesPorts(kind InterfaceKind) bool { return kinds[kind].master }

// AttrsOf returns the interface's attributes if they are a T (for instance
// *BondAttrs), else the zero T (nil).
func AttrsOf[T KindAttrs](i *Interface) T {
	t, _ := i.Attrs.(T)
	return t
}

// ZeroAttrs returns a new value of the kind's attributes, all zero (nil
// for a kind without attributes): what to decode a stored interface's
// attributes into.
func ZeroAttrs(kind InterfaceKind) KindAttrs {
	if spec := kinds[kind]; spec.zero != nil {
		return spec.zero()
	}
	return nil
}

// attrsOrZero returns the interface's attributes, or its kind's zero ones
// when it has none (nil for a kind without attributes).
func attrsOrZero(i *Interface) KindAttrs {
	if i.Attrs != nil {
		return i.Attrs
	}
	if spec := kinds[i.Kind]; spec.zero != nil {
		return spec.zero()
	}
	return nil
}

// sameAttrs is Equal for a kind whose attributes are comparable: other is
// a *T holding the same values.
func sameAttrs[T comparable](a *T, other KindAttrs) bool {
	o, ok := any(other).(*T)
	return ok && o != nil && *a == *o
}

// oldAttrs returns old as the kind's attributes, the zero ones if it is
// not.
func oldAttrs[T any](old KindAttrs) T {
	var zero T
	p, ok := any(old).(*T)
	if !ok || p == nil {
		return zero
	}
	return *p
}

// checkAttrs checks that the attributes are the kind's, that the kind is
// known and that a kind that needs attributes has them.
func (i *Interface) checkAttrs() error {
	if i.Attrs != nil && i.Attrs.Kind() != i.Kind {
		return invalid(i, "%s attributes on a %s interface", i.Attrs.Kind(), i.Kind)
	}
	spec, known := kinds[i.Kind]
	switch {
	case !known:
		return invalid(i, "unknown kind %q", i.Kind)
	case spec.required && i.Attrs == nil:
		return invalid(i, "%s interface without %s attributes", i.Kind, i.Kind)
	case i.Attrs != nil:
		if reason := i.Attrs.Problem(i.IfName); reason != "" {
			return invalid(i, "%s", reason)
		}
	}
	return nil
}

// ParentOf returns the name of the interface that i's attributes depend on
// (a vlan's, a macvlan's or a vxlan's parent), "" for none.
func ParentOf(i *Interface) string {
	if i.Attrs == nil {
		return ""
	}
	for _, d := range i.Attrs.Dependencies(i.IfName) {
		if d.RequiredItem.Type == TypeInterface {
			return d.RequiredItem.Name
		}
	}
	return ""
}
