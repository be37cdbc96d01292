package intent

import (
	"fmt"
	"math"
	"net/netip"
	"slices"
	"strings"
)

// interfaces checks every interface, its kind's section, the names it
// refers to and its addresses.
func (c *checker) interfaces() {
	c.defineLinks()
	addrs := map[netip.Addr]assigned{}
	vlans := map[string]Origin{}
	for i := range c.in.Interfaces {
		ifc := &c.in.Interfaces[i]
		at := locate(ifc.Origin, "interfaces", i)
		c.iface(ifc, at, vlans)
		c.addresses(ifc, at, addrs)
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
		at := locate(ifc.Origin, "interfaces", i)
		if c.ifname(at.field("name"), ifc.Name) {
			c.define(ifc.Name, linkDef{ifc: ifc, at: at}, at.field("name"))
		}
		if ifc.Type == LinkVeth && ifc.Veth != nil {
			c.definePeer(ifc, at.field("veth"), netnsPeers)
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

// definePeer checks a veth's peer and indexes its name: in the host
// namespace with the interfaces, or among the peers of its namespace.
func (c *checker) definePeer(ifc *Interface, o Origin, netnsPeers map[string]Origin) {
	v := ifc.Veth
	po := o.field("peer")
	switch {
	case !c.ifname(po, v.Peer):
	case v.Peer == ifc.Name:
		c.fail(po, "%q is the veth's own name", v.Peer)
	case v.PeerNetns == "":
		c.define(v.Peer, linkDef{ifc: ifc, at: po, peer: true}, po)
	case c.netnsName(o.field("peerNetns"), v.PeerNetns):
		key := fmt.Sprintf("interface %q in netns %q", v.Peer, v.PeerNetns)
		c.unique(netnsPeers, key, po)
	}
}

// netnsName checks the name of a network namespace under /var/run/netns.
func (c *checker) netnsName(o Origin, name string) bool {
	switch {
	case len(name) > 255:
		c.fail(o, "%q is longer than 255 bytes", name)
		return false
	case name == "." || name == "..":
		c.fail(o, "%q is not a valid namespace name", name)
		return false
	}
	if i := strings.IndexFunc(name, func(r rune) bool { return r <= ' ' || r > '~' || r == '/' }); i >= 0 {
		c.fail(o, "%q contains %q, which a namespace name cannot", name, rune(name[i]))
		return false
	}
	return true
}

// iface checks one interface's own fields and its kind's section.
func (c *checker) iface(ifc *Interface, at Origin, vlans map[string]Origin) {
	typeOK := requiredOneOf(c, at.field("type"), ifc.Type, linkTypes)
	c.mtu(ifc, at.field("mtu"))
	oneOf(c, at.field("state"), ifc.State, linkStates)
	c.ifaceMAC(ifc, at.field("mac"))
	c.alias(at.field("alias"), ifc.Alias)
	c.master(ifc, at.field("master"))
	if typeOK {
		c.sections(ifc, at)
		c.kind(ifc, at, vlans)
		c.mtuUnderParent(ifc, at.field("mtu"))
	}
}

// mtuUnderParent rejects an MTU that the kernel refuses for a link on top
// of another ("invalid argument"): a VLAN's or macvlan's above its parent's,
// a VXLAN's above its parent's less the VXLAN header. It can tell only
// when both MTUs are in the intent.
func (c *checker) mtuUnderParent(ifc *Interface, o Origin) {
	if ifc.MTU == 0 {
		return
	}
	var parent, note string
	overhead := 0
	switch {
	case ifc.VLAN != nil && ifc.Type == LinkVLAN:
		parent = ifc.VLAN.Parent
	case ifc.Macvlan != nil && ifc.Type == LinkMacvlan:
		parent = ifc.Macvlan.Parent
	case ifc.VXLAN != nil && ifc.Type == LinkVXLAN:
		parent, overhead, note = ifc.VXLAN.Parent, 50, " less the IPv4 VXLAN header (50)"
		if vxlanIPv6(ifc.VXLAN) {
			overhead, note = 70, " less the IPv6 VXLAN header (70)"
		}
	}
	def, ok := c.links[parent]
	if !ok || def.peer || def.ifc.MTU == 0 {
		return
	}
	if max := def.ifc.MTU - overhead; ifc.MTU > max {
		c.fail(o, "%d is above %d, the mtu of its parent %q%s", ifc.MTU, max, parent, note)
	}
}

// vxlanIPv6 reports whether a VXLAN's addresses are IPv6.
func vxlanIPv6(v *VXLAN) bool {
	for _, s := range []string{v.Local, v.Remote, v.Group} {
		if f := addrFamily(s); f != "" {
			return f == FamilyIPv6
		}
	}
	return false
}

// mtu checks the MTU: 0 (unset) or 68-65535, and 1280 or more with IPv6
// addresses.
func (c *checker) mtu(ifc *Interface, o Origin) {
	if ifc.MTU == 0 || !c.inRange(o, ifc.MTU, 68, 65535) || ifc.MTU >= 1280 {
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

// master checks that an interface's master is a defined bond or bridge.
func (c *checker) master(ifc *Interface, o Origin) {
	if ifc.Master == "" {
		return
	}
	if ifc.Master == ifc.Name {
		c.fail(o, "interface %q cannot be its own master", ifc.Name)
		return
	}
	def, ok := c.ref(o, ifc.Master)
	switch {
	case !ok:
	case def.peer || (def.ifc.Type != LinkBond && def.ifc.Type != LinkBridge):
		c.fail(o, "%q is %s, not a bond or bridge", ifc.Master, def.describe())
	case def.ifc.Type == LinkBridge && ifc.Type == LinkBridge:
		c.fail(o, "bridge %q cannot be a port of bridge %q", ifc.Name, ifc.Master)
	}
}

// section is a kind's settings section and whether an interface has it.
type section struct {
	kind    LinkType
	present bool
}

// sectionsOf lists the kind sections of ifc.
func sectionsOf(ifc *Interface) []section {
	return []section{
		{LinkBond, ifc.Bond != nil},
		{LinkVLAN, ifc.VLAN != nil},
		{LinkBridge, ifc.Bridge != nil},
		{LinkVeth, ifc.Veth != nil},
		{LinkMacvlan, ifc.Macvlan != nil},
		{LinkVXLAN, ifc.VXLAN != nil},
	}
}

// sectionRequired lists the kinds that cannot do without their section.
var sectionRequired = map[LinkType]bool{LinkVLAN: true, LinkVeth: true, LinkMacvlan: true, LinkVXLAN: true}

// sections checks that ifc has the section of its type, if that is
// required, and no other.
func (c *checker) sections(ifc *Interface, at Origin) {
	for _, s := range sectionsOf(ifc) {
		switch {
		case s.present && s.kind != ifc.Type:
			c.fail(at.field(string(s.kind)), "not allowed for type %q", ifc.Type)
		case !s.present && s.kind == ifc.Type && sectionRequired[s.kind]:
			c.fail(at.field(string(s.kind)), "is required for type %q", s.kind)
		}
	}
}

// kind checks the section of ifc's type, if present.
func (c *checker) kind(ifc *Interface, at Origin, vlans map[string]Origin) {
	switch {
	case ifc.Type == LinkBond && ifc.Bond != nil:
		c.bond(ifc, at.field("bond"))
	case ifc.Type == LinkVLAN && ifc.VLAN != nil:
		c.vlan(ifc, at.field("vlan"), vlans)
	case ifc.Type == LinkBridge && ifc.Bridge != nil:
		c.bridge(ifc.Bridge, at.field("bridge"))
	case ifc.Type == LinkMacvlan && ifc.Macvlan != nil:
		c.parent(ifc, at.field("macvlan").field("parent"), ifc.Macvlan.Parent, true)
		c.notOnLoopback(at.field("macvlan").field("parent"), ifc.Macvlan.Parent, "a macvlan")
		c.macvlanParentNotPort(ifc.Macvlan.Parent, at.field("macvlan").field("parent"))
		oneOf(c, at.field("macvlan").field("mode"), ifc.Macvlan.Mode, macvlanModes)
	case ifc.Type == LinkVXLAN && ifc.VXLAN != nil:
		c.vxlan(ifc, at.field("vxlan"), vlans)
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

// macvlanParentNotPort rejects a macvlan on a bond or bridge port: a link
// has one receive handler, which the bond or bridge, or the macvlans, take
// (the kernel answers "device or resource busy", for ever).
func (c *checker) macvlanParentNotPort(parent string, o Origin) {
	if def, ok := c.links[parent]; ok && !def.peer && def.ifc.Master != "" {
		c.fail(o, "%q is a port of %q: the kernel lets a link be a bond or bridge port or the parent of macvlans, not both",
			parent, def.ifc.Master)
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

// bond checks a bond's settings.
func (c *checker) bond(ifc *Interface, o Origin) {
	b := ifc.Bond
	if !oneOf(c, o.field("mode"), b.Mode, bondModes) {
		return // the mode-dependent checks would only add noise
	}
	mode := b.EffectiveMode()
	c.inRange(o.field("miimon"), b.MIIMon, 0, math.MaxInt32)
	if oneOf(c, o.field("lacpRate"), b.LACPRate, lacpRates) {
		c.onlyInModes(o.field("lacpRate"), b.LACPRate != "", mode, LACPRateModes)
	}
	if oneOf(c, o.field("xmitHashPolicy"), b.XmitHashPolicy, hashPolicies) {
		c.onlyInModes(o.field("xmitHashPolicy"), b.XmitHashPolicy != "", mode, XmitHashPolicyModes)
	}
	if c.inRange(o.field("minLinks"), b.MinLinks, 0, math.MaxInt32) {
		c.onlyInModes(o.field("minLinks"), b.MinLinks != 0, mode, MinLinksModes)
	}
	if b.Primary != "" && c.onlyInModes(o.field("primary"), true, mode, PrimaryModes) {
		c.primary(ifc, o.field("primary"))
	}
}

// onlyInModes checks that an option that is set is allowed in mode.
func (c *checker) onlyInModes(o Origin, set bool, mode BondMode, modes []BondMode) bool {
	if !set || slices.Contains(modes, mode) {
		return true
	}
	noun := "mode"
	if len(modes) > 1 {
		noun = "modes"
	}
	c.fail(o, "only allowed in %s %s, not %s", noun, joinValues(modes), mode)
	return false
}

// primary checks that a bond's primary is one of its ports.
func (c *checker) primary(ifc *Interface, o Origin) {
	name := ifc.Bond.Primary
	def, ok := c.ref(o, name)
	if ok && (def.peer || def.ifc.Master != ifc.Name) {
		c.fail(o, "%q is not a port of bond %q", name, ifc.Name)
	}
}

// vlan checks a VLAN's settings, and that no other VLAN has the same parent,
// protocol and id.
func (c *checker) vlan(ifc *Interface, o Origin, seen map[string]Origin) {
	v := ifc.VLAN
	c.parent(ifc, o.field("parent"), v.Parent, true)
	c.notOnLoopback(o.field("parent"), v.Parent, "a VLAN")
	idOK := c.inRange(o.field("id"), v.ID, 1, 4094)
	protoOK := oneOf(c, o.field("protocol"), v.Protocol, vlanProtos)
	if idOK && protoOK && v.Parent != "" {
		key := fmt.Sprintf("%s VLAN %d on %q", v.EffectiveProtocol(), v.ID, v.Parent)
		c.unique(seen, key, o.field("id"))
	}
}

// bridge checks a bridge's settings. The forward delay is in centiseconds;
// with STP on, the kernel takes only 2 to 30 seconds.
func (c *checker) bridge(b *Bridge, o Origin) {
	fd := b.ForwardDelay
	switch {
	case fd == 0:
	case b.STP && (fd < 200 || fd > 3000):
		c.fail(o.field("forwardDelay"), "%d is out of range 200-3000 (centiseconds) with stp on", fd)
	default:
		c.inRange(o.field("forwardDelay"), fd, 0, 3000)
	}
}

// vxlan checks a VXLAN's settings.
func (c *checker) vxlan(ifc *Interface, o Origin, seen map[string]Origin) {
	v := ifc.VXLAN
	vniOK := c.inRange(o.field("vni"), v.VNI, 1, 1<<24-1)
	portOK := c.inRange(o.field("port"), v.Port, 0, 65535)
	c.parent(ifc, o.field("parent"), v.Parent, false)
	claims := []famClaim{c.vxlanAddr(o, "local", v.Local, false)}
	if v.Remote != "" && v.Group != "" {
		c.fail(o.field("group"), "not allowed together with remote")
	} else {
		claims = append(claims, c.vxlanAddr(o, "remote", v.Remote, false), c.vxlanAddr(o, "group", v.Group, true))
	}
	if c.agree(o, claims...) && vniOK && portOK {
		c.unique(seen, vxlanKey(v, claims), o.field("vni"))
	}
}

// vxlanKey is what the kernel keeps unique among the VXLANs of a namespace
// (vxlan_vni_in_use): the family, the VNI, the UDP port and the parent
// link. A second VXLAN with the same is refused ("file exists").
func vxlanKey(v *VXLAN, claims []famClaim) string {
	fam := FamilyIPv4
	for _, cl := range claims {
		if cl.fam != "" {
			fam = cl.fam
			break
		}
	}
	key := fmt.Sprintf("%s VXLAN %d on UDP port %d", famName(fam), v.VNI, v.EffectivePort())
	if v.Parent != "" {
		key += fmt.Sprintf(" over %q", v.Parent)
	}
	return key
}

// vxlanAddr checks one of a VXLAN's addresses, if set: unicast, or multicast
// for the group.
func (c *checker) vxlanAddr(o Origin, field, s string, multicast bool) famClaim {
	if s == "" {
		return famClaim{}
	}
	a, ok := c.addr(o.field(field), s)
	switch {
	case !ok:
		return famClaim{}
	case multicast && !a.IsMulticast():
		c.fail(o.field(field), "%s is not a multicast address", a)
		return famClaim{}
	case !multicast && !isUnicast(a):
		c.fail(o.field(field), "%s is not a unicast address", a)
		return famClaim{}
	}
	return famClaim{field: field, text: s, fam: familyOf(a)}
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
	p, err := netip.ParsePrefix(s)
	switch {
	case err != nil:
		c.fail(o, "%q is not a valid CIDR address (like 192.0.2.10/24)", s)
	case p.Addr().Is4In6():
		c.fail(o, "%s is an IPv4-mapped IPv6 address; write the IPv4 address", p)
	case !isUnicast(p.Addr()):
		c.fail(o, "%s is not a unicast address", p.Addr())
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
				at := locate(ifc.Origin, "interfaces", i)
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
	if ifc.VLAN != nil {
		add("vlan.parent", ifc.VLAN.Parent)
	}
	if ifc.Macvlan != nil {
		add("macvlan.parent", ifc.Macvlan.Parent)
	}
	if ifc.VXLAN != nil {
		add("vxlan.parent", ifc.VXLAN.Parent)
	}
	return edges
}
