package intent

// linkSection is an interface type's settings section (the "bond" section
// of a bond, ...): how to find it on an Interface and how to check it.
// Each type's section, its struct, defaults and checks are in its file,
// link_<type>.go.
type linkSection struct {
	typ LinkType // also the section's JSON name
	// required: an interface of the type cannot do without the section.
	required bool
	// present reports whether ifc has the section; nil for a type without
	// one (dummy), whose entry only makes the type known.
	present func(ifc *Interface) bool
	// check checks the section of ifc (of the type, with the section) at
	// o. unique holds what the kernel keeps unique among the links of a
	// namespace (c.unique).
	check func(c *checker, ifc *Interface, o Origin, unique map[string]Origin)
	// define, if set, checks and indexes the names the section defines
	// besides the interface's (a veth's peer), whatever the type.
	define func(c *checker, ifc *Interface, o Origin, netnsPeers map[string]Origin)
	// keys, if set, returns the identities (see sections.go) of the names
	// the section defines besides the interface's, whatever the type.
	keys func(ifc *Interface) []string
	// parent, if set, returns the interface the link sits on ("" for none)
	// and what the kernel takes from its MTU (the VXLAN header), with a
	// note saying so; a negative overhead when the kernel does not bound
	// the link's MTU by its parent's (a tunnel's outer packets fragment).
	parent func(ifc *Interface) (name string, overhead int, note string)
	// fixedMAC, if set, says why an interface of the type cannot have a
	// mac.
	fixedMAC string
	// notPort, if set, says why an interface of the type cannot be a bond
	// or bridge port.
	notPort string
	// master: interfaces of the type take ports (name them as master).
	master bool
	// minMTU and maxMTU, if set, are the least and the greatest mtu the
	// kernel takes for the type (68 and 65535 otherwise).
	minMTU, maxMTU int
	// uppers, if set, are the types the kernel refuses on an interface of
	// the type (as their parent), and why.
	uppers map[LinkType]string
}

// linkSections is the table of the interface types but physical, in the
// order of the schema.
var linkSections = []linkSection{bondSection, vlanSection, bridgeSection, vethSection, macvlanSection, vxlanSection,
	dummySection,
	greSection, ipipSection, sitSection, ip6tnlSection,
	wireguardSection,
	ipvlanSection, vrfSection,
}

// linkTypes lists every interface type: physical, then those of
// linkSections.
var linkTypes = func() []LinkType {
	types := []LinkType{LinkPhysical}
	for _, s := range linkSections {
		types = append(types, s.typ)
	}
	return types
}()

// has reports whether ifc has the section.
func (s linkSection) has(ifc *Interface) bool { return s.present != nil && s.present(ifc) }

// sectionOf returns the section of the type t.
func sectionOf(t LinkType) (linkSection, bool) {
	for _, s := range linkSections {
		if s.typ == t {
			return s, true
		}
	}
	return linkSection{}, false
}
