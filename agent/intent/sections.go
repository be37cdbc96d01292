package intent

// section is one top-level member of an intent ("interfaces", "routes",
// ...): where it is, how Validate checks it, and how Merge and
// WithoutConflicts combine it across files. Each section's checks and
// identity are in its file, section_<name>.go (the interfaces' checks in
// validate_links.go and link_<type>.go).
//
// An identity (the keys of a list section) decides what is "the same
// object" twice, both for Validate (within one intent) and Merge (across
// files). It is also a readable description of the object, used in
// messages.
type section struct {
	// path is the section's JSON path ("firewall.chains"), which starts
	// the paths of its objects.
	path string
	// check checks the section's objects, and that no two share an
	// identity, reporting every problem with c.fail.
	check func(c *checker)
	// crossCheck, if set, checks what the section says about the objects
	// of other sections (the interfaces whose IPv6 the sysctls disable).
	// Validate runs it after every section's check.
	crossCheck func(c *checker)
	// merge gathers the section of every file into out, in file order,
	// setting each object's origin and leaving out, and reporting, the
	// objects that several files define.
	merge func(m *merger, files []namedIntent, out *Intent)
	// without leaves the objects that several files define out of every
	// file that defines them (edit returns a file's copy to change), and
	// reports them as merge does.
	without func(m *merger, files []namedIntent, edit func(string) *Intent)
}

// sections is the table of an intent's sections, in the order of the
// schema. Validate checks them in this order, and Merge and
// WithoutConflicts take them in it, so that their errors come in it. The
// interfaces come first: their check indexes the interface names
// (checker.links) that the other sections refer to.
var sections = []section{
	interfacesSection, // section_interfaces.go
	routesSection,     // section_routes.go
	rulesSection,      // section_rules.go
	neighborsSection,  // section_neighbors.go
	sysctlsSection,    // section_sysctls.go
	firewallSection,   // section_firewall.go
	nftablesSection,   // nftables.go
	dnsSection,        // section_dns.go
}

// listSection describes a section that is a list of objects: its JSON
// path, where the list is in an intent, an object's origin, the identities
// an object takes, and the check of the whole list. share says that Merge
// may hand one file's list on as it is (see mergeList): Validate writes
// no derived field into the section's objects.
func listSection[T any](path string, list func(*Intent) *[]T, origin func(*T) *Origin,
	keys func(*T) []string, check func(c *checker), share bool) section {
	return section{
		path:  path,
		check: check,
		merge: func(m *merger, files []namedIntent, out *Intent) {
			*list(out) = mergeList(m, files, path, func(in *Intent) []T { return *list(in) }, origin, keys, share)
		},
		without: func(m *merger, files []namedIntent, edit func(string) *Intent) {
			withoutList(m, files, path, list, keys, edit)
		},
	}
}

// oneKey makes a keys function of a function returning one identity.
func oneKey[T any](key func(*T) string) func(*T) []string {
	return func(x *T) []string { return []string{key(x)} }
}
