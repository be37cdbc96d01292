package render

import (
	"github.com/netagent/netagent/agent/intent"
	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/items"
)

// section is one top-level member of an intent ("interfaces", "routes",
// ...) as this package sees it: how Render turns its objects into items,
// and how ToIntent turns the items back. Each section's converters are in
// its file, section_<name>.go (the interfaces' in links.go, tointent.go,
// tointent_items.go and link_<type>.go).
type section struct {
	// path is the section's JSON path ("firewall.chains").
	path string
	// addToIndex, if set, files into x what the section's objects tell
	// the other sections (the declared interfaces and addresses, the
	// on-link routes), from the validated intent. newIndex runs it for
	// every section, before anything renders.
	addToIndex func(x *index, in *intent.Intent)
	// render puts the items of the section's objects into b, reporting
	// what the items cannot express with b.fail.
	render func(b *builder)
	// refs, if set, returns the interface names an item of the section
	// names (nil for an item of another section): ToIntent declares them,
	// as physical interfaces when no item describes them, so that the
	// intent it returns is valid.
	refs func(it dg.Item) []string
	// toIntent puts the section's objects, from the items of inv, into
	// out, leaving out the defaults, in the order of inv.sorted.
	toIntent func(inv *inverter, out *intent.Intent)
}

// sections is the table of an intent's sections, in the order of the
// schema (that of intent's own table). Render renders them, and ToIntent
// fills them, in this order.
var sections = []section{
	interfacesSection, // links.go, tointent.go
	routesSection,     // section_routes.go
	rulesSection,      // section_rules.go
	neighborsSection,  // section_neighbors.go
	sysctlsSection,    // section_sysctls.go
	firewallSection,   // section_firewall.go
	nftablesSection,   // nftables.go
	dnsSection,        // section_dns.go
}

// The interfaces section: its items are the interfaces, their ports and
// their addresses, rendered by builder.interfaces (links.go) and inverted
// by inverter.interfaces (tointent.go), which indexes them itself.
var interfacesSection = section{
	path:       "interfaces",
	addToIndex: (*index).addInterfaces,
	render:     (*builder).interfaces,
	toIntent:   func(inv *inverter, out *intent.Intent) { out.Interfaces = inv.interfaces() },
}

// sectionItems returns the items of inv of type T, in the order of inv.sorted.
func sectionItems[T dg.Item](inv *inverter) []T {
	var out []T
	for _, it := range inv.sorted {
		if x, ok := it.(T); ok {
			out = append(out, x)
		}
	}
	return out
}

// families maps the intent's families to the items'.
var families = map[intent.Family]items.Family{intent.FamilyIPv4: items.FamilyIPv4, intent.FamilyIPv6: items.FamilyIPv6}

// containsRef reports whether refs holds ref.
func containsRef(refs []dg.ItemRef, ref dg.ItemRef) bool {
	for _, r := range refs {
		if r == ref {
			return true
		}
	}
	return false
}
