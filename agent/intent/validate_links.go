package intent

import (
	"net/netip"
	"slices"
	"strings"

	"github.com/netagent/netagent/items"
)

// interfaces checks every interface, its kind's section, the names it
// refers to and its addresses.
func (c *checker) interfaces() {
	c.defineLinks()
	addrs := map[netip.Addr]assigned{}
	unique := map[string]Origin{}
	matches := map[string]Origin{}
	leaseMetrics := map[int64]string{}
	for i := range c.in.Interfaces {
		ifc := &c.in.Interfaces[i]
		at := c.in.Locate(ifc.Origin, "interfaces", i)
		c.iface(ifc, at, unique)
		c.match(ifc, at.field("match"), matches) // match.go
		c.addresses(ifc, at, addrs)
		c.dhcp4(ifc, at, leaseMetrics) // dhcp4.go
		c.ipv6(ifc, at)                // ipv6.go
	}
	c.linkCycles()
}

// defineLinks checks interface and veth peer names and indexes them,
// reporting duplicates.
func (c *checker) defineLinks() {
	c.links = map[string]linkDef{}
	netnsPeers := map[string]Origin{}
	for i := range c.in.Interfaces {
		ifc := &c.in.Interfaces[i]
		at := c.in.Locate(ifc.Origin, "interfaces", i)
		if c.ifname(at.field("name"), ifc.Name) {
			c.define(ifc.Name, linkDef{ifc: ifc, at: at}, at.field("name"))
		}
		if s, ok := sectionOf(ifc.Type); ok && s.define != nil && s.has(ifc) {
			s.define(c, ifc, at.field(string(s.typ)), netnsPeers)
		}
	}
}

// define indexes the interface name defined by def, reported at o.
func (c *checker) define(name string, def linkDef, o Origin) {
	if prev, ok := c.links[name]; ok {
		c.fail(o, "interface %q is already defined at %s", name, prev.at)
		return
	}
	c.links[name] = def
}

// iface checks one interface's own fields and its kind's section.
func (c *checker) iface(ifc *Interface, at Origin, unique map[string]Origin) {
	typeOK := requiredOneOf(c, at.field("type"), ifc.Type, linkTypes)
	c.mtu(ifc, at.field("mtu"))
	oneOf(c, at.field("state"), ifc.State, linkStates)
	c.ifaceMAC(ifc, at.field("mac"))
	c.alias(at.field("alias"), ifc.Alias)
	c.master(ifc, at.field("master"))
	c.bridgeMembership(ifc, at)
	c.ethtool(ifc, at)
	if typeOK {
		c.notFallbackName(ifc, at.field("name"))
		c.sections(ifc, at)
		c.kind(ifc, at, unique)
		c.refuseUppers(ifc)
		c.mtuUnderParent(ifc, at.field("mtu"))
	}
}

// mtuUnderParent rejects an MTU that the kernel refuses for a link on top
// of another ("invalid argument"): a VLAN's or macvlan's above its parent's,
// a VXLAN's above its parent's less the VXLAN header (the section's
// parent). It can tell only when both MTUs are in the intent.
func (c *checker) mtuUnderParent(ifc *Interface, o Origin) {
	if ifc.MTU == 0 {
		return
	}
	s, ok := sectionOf(ifc.Type)
	if !ok || s.parent == nil || !s.has(ifc) {
		return
	}
	parent, overhead, note := s.parent(ifc)
	if overhead < 0 {
		return
	}
	def, ok := c.links[parent]
	if !ok || def.peer || def.ifc.MTU == 0 {
		return
	}
	if max := def.ifc.MTU - overhead; ifc.MTU > max {
		c.fail(o, "%d is above %d, the mtu of its parent %q%s", ifc.MTU, max, parent, note)
	}
}

// mtu checks the MTU: 0 (unset) or 68-65535 (the type's own bounds, where
// its section has them), and 1280 or more with IPv6 addresses.
func (c *checker) mtu(ifc *Interface, o Origin) {
	most := 65535
	s, ok := sectionOf(ifc.Type)
	if ok && s.maxMTU != 0 {
		most = s.maxMTU
	}
	if ifc.MTU == 0 || !c.inRange(o, ifc.MTU, 68, most) || ifc.MTU >= 1280 {
		return
	}
	if ok && ifc.MTU < s.minMTU {
		c.fail(o, "%d is below %d, the least mtu of a %s", ifc.MTU, s.minMTU, ifc.Type)
		return
	}
	if slices.ContainsFunc(ifc.Addresses, func(s string) bool { return prefixFamily(s) == FamilyIPv6 }) {
		c.fail(o, "%d is below 1280, the minimum for IPv6 addresses", ifc.MTU)
	}
}

// ifaceMAC checks an interface's MAC address, which only virtual interfaces
// may set.
func (c *checker) ifaceMAC(ifc *Interface, o Origin) {
	if ifc.MAC == "" {
		return
	}
	if ifc.Type == LinkPhysical {
		c.fail(o, "can only be set on virtual interfaces, not on physical %q", ifc.Name)
		return
	}
	if s, ok := sectionOf(ifc.Type); ok && s.fixedMAC != "" {
		c.fail(o, "%s", s.fixedMAC)
		return
	}
	c.mac(o, ifc.MAC, false)
}

// alias checks an interface alias: at most MaxAlias bytes, no control
// characters, and not netagent's ownership mark (see validate_marks.go).
func (c *checker) alias(o Origin, alias string) {
	switch {
	case len(alias) > MaxAlias:
		c.fail(o, "is %d bytes long, longer than %d (the kernel's %d less the %d of netagent's mark %q)",
			len(alias), MaxAlias, maxKernelAlias, len(markAlias+markSep), markAlias+markSep)
	case strings.ContainsFunc(alias, isControl):
		c.fail(o, "contains a control character")
	case carriesLinkMark(alias):
		c.fail(o, "%q is reserved: netagent marks the links it owns with it, so netagent would take the interface for its own", alias)
	}
}

// master checks that an interface's master is a defined bond, bridge or
// vrf (a type whose section is a master), and what the kernel refuses to
// enslave: a bridge to a bridge, a vrf to a vrf, lo to a vrf, and a type
// without a receive handler (notPort) to a bond or bridge.
func (c *checker) master(ifc *Interface, o Origin) {
	if ifc.Master == "" {
		return
	}
	if ifc.Master == ifc.Name {
		c.fail(o, "interface %q cannot be its own master", ifc.Name)
		return
	}
	def, ok := c.ref(o, ifc.Master)
	if !ok {
		return
	}
	s, _ := sectionOf(ifc.Type)
	switch ms, _ := sectionOf(def.ifc.Type); {
	case def.peer || !ms.master:
		c.fail(o, "%q is %s, not a bond, bridge or vrf", ifc.Master, def.describe())
	case def.ifc.Type == LinkBridge && ifc.Type == LinkBridge:
		c.fail(o, "bridge %q cannot be a port of bridge %q", ifc.Name, ifc.Master)
	case def.ifc.Type == LinkVRF && ifc.Type == LinkVRF:
		c.fail(o, "vrf %q cannot be a port of vrf %q (the kernel enslaves no L3 master device to a vrf)", ifc.Name, ifc.Master)
	case def.ifc.Type == LinkVRF && ifc.Name == "lo":
		c.fail(o, "the loopback interface cannot be a port of vrf %q (the kernel refuses it: the vrf is its ports' loopback)", ifc.Master)
	case def.ifc.Type != LinkVRF && s.notPort != "":
		c.fail(o, "%s %q cannot be a port of %s %q: %s", ifc.Type, ifc.Name, def.ifc.Type, ifc.Master, s.notPort)
	}
}

// sections checks that ifc has the section of its type, if that is
// required, and no other.
func (c *checker) sections(ifc *Interface, at Origin) {
	for _, s := range linkSections {
		present := s.has(ifc)
		switch {
		case present && s.typ != ifc.Type:
			c.fail(at.field(string(s.typ)), "not allowed for type %q", ifc.Type)
		case !present && s.typ == ifc.Type && s.required:
			c.fail(at.field(string(s.typ)), "is required for type %q", s.typ)
		}
	}
}

// kind checks the section of ifc's type, if present.
func (c *checker) kind(ifc *Interface, at Origin, unique map[string]Origin) {
	if s, ok := sectionOf(ifc.Type); ok && s.has(ifc) {
		s.check(c, ifc, at.field(string(s.typ)), unique)
	}
}

// notOnLoopback rejects the loopback interface as the parent of a VLAN or
// a macvlan: the kernel refuses both (lo is VLAN-challenged, and a macvlan
// needs an Ethernet parent that is no loopback).
func (c *checker) notOnLoopback(o Origin, parent, what string) {
	if parent == "lo" {
		c.fail(o, "the loopback interface cannot be the parent of %s (the kernel refuses it)", what)
	}
}

// refuseUppers reports every interface of the intent whose section puts
// it on ifc (its parent) while the uppers of ifc's section refuse its
// type there, at that interface's <type>.parent.
func (c *checker) refuseUppers(ifc *Interface) {
	own, ok := sectionOf(ifc.Type)
	if !ok || own.uppers == nil {
		return
	}
	what := "a " + string(ifc.Type)
	if strings.ContainsRune("aeiou", rune(ifc.Type[0])) {
		what = "an " + string(ifc.Type)
	}
	for i := range c.in.Interfaces {
		upper := &c.in.Interfaces[i]
		reason, refused := own.uppers[upper.Type]
		s, ok := sectionOf(upper.Type)
		if !refused || !ok || s.parent == nil || !s.has(upper) {
			continue
		}
		if parent, _, _ := s.parent(upper); parent == ifc.Name {
			at := c.in.Locate(upper.Origin, "interfaces", i)
			c.fail(at.field(string(s.typ)).field("parent"), "%q is %s, %s", ifc.Name, what, reason)
		}
	}
}

// parent checks a lower interface reference of ifc.
func (c *checker) parent(ifc *Interface, o Origin, name string, required bool) {
	switch {
	case name == "":
		if required {
			c.fail(o, "is required")
		}
	case name == ifc.Name:
		c.fail(o, "interface %q cannot be its own parent", name)
	default:
		c.ref(o, name)
	}
}

// assigned is where an address was first assigned.
type assigned struct {
	at   Origin
	host bool // a host prefix: /32 or /128
}

// addresses checks an interface's addresses, and that no address is
// assigned twice, here or on another interface, but for host addresses
// (/32, /128) on different interfaces: the kernel allows the same address
// on several links, and unnumbered point-to-point links (a router's
// loopback address reused on each of its links, as ifupdown2 and FRR
// configurations do) rely on it.
func (c *checker) addresses(ifc *Interface, at Origin, seen map[netip.Addr]assigned) {
	o := at.field("addresses")
	if len(ifc.Addresses) > 0 && c.isBondPort(ifc) {
		c.fail(o, "%q is a port of bond %q and cannot have addresses", ifc.Name, ifc.Master)
	}
	own := map[netip.Addr]Origin{}
	for j, s := range ifc.Addresses {
		p, ok := c.ifaddr(o.index(j), s)
		if !ok {
			continue
		}
		host := p.Bits() == p.Addr().BitLen()
		if prev, dup := own[p.Addr()]; dup {
			c.fail(o.index(j), "address %s is already assigned at %s", p.Addr(), prev)
			continue
		}
		own[p.Addr()] = o.index(j)
		if prev, dup := seen[p.Addr()]; dup {
			if !host || !prev.host {
				c.fail(o.index(j), "address %s is already assigned at %s", p.Addr(), prev.at)
			}
			continue
		}
		seen[p.Addr()] = assigned{at: o.index(j), host: host}
	}
}

// isBondPort reports whether ifc's master is a bond.
func (c *checker) isBondPort(ifc *Interface) bool {
	def, ok := c.links[ifc.Master]
	return ok && !def.peer && def.ifc.Type == LinkBond
}

// ifaddr parses an interface address: a unicast address with a prefix
// length.
func (c *checker) ifaddr(o Origin, s string) (netip.Prefix, bool) {
	p, peer, err := ParseAddress(s)
	switch {
	case err != nil && strings.Contains(s, peerSep):
		c.fail(o, "%q is not a valid point-to-point address (like 10.0.0.1 peer 10.0.0.2/32): %v", s, err)
	case err != nil:
		c.fail(o, "%q is not a valid CIDR address (like 192.0.2.10/24)", s)
	case p.Addr().Is4In6() || peer.Is4In6():
		c.fail(o, "%s is an IPv4-mapped IPv6 address; write the IPv4 address", s)
	case !items.IsUnicast(p.Addr()):
		c.fail(o, "%s is not a unicast address", p.Addr())
	case peer.IsValid() && !items.IsUnicast(peer):
		c.fail(o, "peer %s is not a unicast address", peer)
	case peer == p.Addr():
		c.fail(o, "peer %s is the address itself: write %s without a peer", peer, p)
	default:
		return p, true
	}
	return p, false
}

// linkCycles reports interfaces whose masters and parents lead back to
// them. Each cycle is reported once, on the field of its member whose name
// sorts first.
func (c *checker) linkCycles() {
	for i := range c.in.Interfaces {
		ifc := &c.in.Interfaces[i]
		for _, e := range upEdges(ifc) {
			cycle := c.pathBack(ifc, e.to, []string{ifc.Name, e.to}, map[string]bool{})
			if cycle != nil && slices.Min(cycle) == ifc.Name {
				at := c.in.Locate(ifc.Origin, "interfaces", i)
				c.fail(at.field(e.field), "interfaces form a cycle: %s", strings.Join(cycle, " -> "))
				break
			}
		}
	}
}

// pathBack returns the trail extended to a path from name back to start,
// or nil if there is none.
func (c *checker) pathBack(start *Interface, name string, trail []string, seen map[string]bool) []string {
	if name == start.Name {
		return trail
	}
	def, ok := c.links[name]
	if !ok || def.peer || seen[name] {
		return nil
	}
	seen[name] = true
	for _, e := range upEdges(def.ifc) {
		if p := c.pathBack(start, e.to, append(trail, e.to), seen); p != nil {
			return p
		}
	}
	return nil
}

// linkEdge is a reference from an interface to one it sits on or in.
type linkEdge struct {
	field string // "master", "vlan.parent", ...
	to    string
}

// upEdges lists ifc's master and parent, leaving out self-references,
// which are reported on their own.
func upEdges(ifc *Interface) []linkEdge {
	var edges []linkEdge
	add := func(field, to string) {
		if to != "" && to != ifc.Name {
			edges = append(edges, linkEdge{field, to})
		}
	}
	add("master", ifc.Master)
	for _, s := range linkSections {
		if s.parent != nil && s.has(ifc) {
			name, _, _ := s.parent(ifc)
			add(string(s.typ)+".parent", name)
		}
	}
	return edges
}
