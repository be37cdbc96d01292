package intent

import (
	"fmt"
)

// The interfaces section: its checks are in validate_links.go, the
// interface types' sections in link_<type>.go (see link_kinds.go).
var interfacesSection = listSection("interfaces", func(in *Intent) *[]Interface { return &in.Interfaces },
	func(x *Interface) *Origin { return &x.Origin }, interfaceKeys, (*checker).interfaces, false)

// interfaceKeys returns the interface names an interface defines: its own,
// and those of its section (a veth's peer).
func interfaceKeys(ifc *Interface) []string {
	keys := []string{fmt.Sprintf("interface %q", ifc.Name)}
	for _, s := range linkSections {
		if s.keys != nil && s.has(ifc) {
			keys = append(keys, s.keys(ifc)...)
		}
	}
	return keys
}
