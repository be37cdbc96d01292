package eni

import (
	"maps"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"github.com/netagent/netagent/agent/importer"
	"github.com/netagent/netagent/agent/intent"
)

// iface is one interface's merged stanzas.
type iface struct {
	name                       string
	pos                        importer.Position
	loopback, dhcp4, ra, dhcp6 bool
	skipped                    bool
	addrs                      []string
	addrAt                     []importer.Position // where each of addrs is
	broadcasts                 []broadcast
	peers                      []pointopoint // pointopoint.go
	routes                     []intent.Route
	mtu                        int
	ports                      []string
	bridge, stp                bool
	vlanParent                 string
	vlanID                     int
	vlanProtocol               intent.VLANProtocol
	mac                        string
	dns, search                []string
	// at is where each single-valued option was first given (ifupdown2
	// takes an option's first value, of all the stanzas merged).
	at map[string]importer.Position
	bridgeVLANs
	vxlan    *intent.VXLAN
	bond     *intent.Bond
	slaves   []string
	vrfTable uint32
	vrfAuto  bool // vrf-table auto
	vrf      string
	alias    string
	link     linkMode
}

func (ifc *iface) empty() bool {
	return len(ifc.addrs) == 0 && len(ifc.routes) == 0 && ifc.mtu == 0
}

// option applies one option line of ifc's stanza.
func (p *parser) option(ifc *iface, l line) {
	// ifupdown2 reads bond_mode as bond-mode.
	orig, key, args := l.words[0], strings.ReplaceAll(l.words[0], "_", "-"), l.words[1:]
	if len(args) == 0 {
		p.c.Invalid(importer.Refusal{Pos: l.pos[0], Key: "iface " + ifc.name + ": " + orig, Why: "no value"})
		return
	}
	if key == "alias" {
		args = []string{valueOf(ifc, l)}
	}
	if _, ok := ifc.at[key]; ok && singleValued(key) {
		return // ifupdown2 takes the first value
	}
	if ifc.at == nil {
		ifc.at = map[string]importer.Position{}
	}
	ifc.at[key] = l.pos[0]
	if key == "address" && p.loopbackAddress(ifc, args[0], l.pos[0]) {
		return
	}
	var why string
	switch key {
	case "broadcast":
		why = ifc.setBroadcast(args, l.pos[0]) // the nth is the nth address's
	case "pointopoint":
		why = ifc.setPointopoint(args, l.pos[0]) // the same
	default:
		why = ifc.set(key, args)
	}
	if why == "" {
		if key == "address" {
			ifc.addrAt = append(ifc.addrAt, l.pos[0])
		}
		return
	}
	r := importer.Refusal{Pos: l.pos[0], Key: "iface " + ifc.name + ": " + orig, Why: why, Object: ifc.name}
	if strings.HasPrefix(why, "invalid") {
		p.c.Invalid(r)
	} else if p.c.Unsupported(r) {
		ifc.skipped = true
	}
}

// set applies key's args to ifc, or says why not ("invalid ...": a bad
// value; otherwise something netagent cannot express).
func (ifc *iface) set(key string, args []string) string {
	switch key {
	case "address":
		return ifc.address(args[0])
	case "netmask":
		return ifc.netmask(args[0])
	case "gateway":
		return ifc.gateway(args[0])
	case "mtu":
		n, err := strconv.Atoi(args[0])
		if err != nil || n <= 0 {
			return "invalid mtu " + strconv.Quote(args[0])
		}
		ifc.mtu = n
	case "hwaddress":
		ifc.mac = args[len(args)-1]
	case "bridge-ports":
		ports, why := portList(args)
		ifc.bridge, ifc.ports = true, ports
		return why
	case "bridge-stp":
		ifc.stp = args[0] == "on" || args[0] == "yes"
	case "dns-nameservers":
		return ifc.nameservers(args)
	case "dns-search":
		ifc.search = append(ifc.search, args...)
	default:
		if set, ok := kindOptions[key]; ok {
			return set(ifc, args)
		}
		return refusedWhy(key)
	}
	return ""
}

// valueOf is an option's value as ifupdown2 reads it: the rest of the
// line, $IFACE replaced by the interface's name (networkinterfaces.py).
func valueOf(ifc *iface, l line) string {
	return strings.ReplaceAll(l.rest(), "$IFACE", ifc.name)
}

// singleValued reports whether only key's first line counts (ifupdown2
// reads its first value): the options of a kind and the base ones below;
// of the others (address, gateway, dns-*, and any refused) every line does.
func singleValued(key string) bool {
	_, ok := kindOptions[key]
	return ok || key == "mtu" || key == "hwaddress" || key == "bridge-ports" || key == "bridge-stp"
}

// setter applies an option's values to an interface, or says why not
// (as iface.set).
type setter func(ifc *iface, args []string) string

// kindOptions are the options of each kind of link, one table per kind
// (vlan.go, bridgevlan.go, vxlan.go, bond.go, vrf.go).
var kindOptions = joinOptions(linkOptions, vlanOptions, bridgeVLANOptions, vxlanOptions, bondOptions, vrfOptions)

func joinOptions(tables ...map[string]setter) map[string]setter {
	out := map[string]setter{}
	for _, t := range tables {
		maps.Copy(out, t)
	}
	return out
}

func (ifc *iface) address(s string) string {
	pfx, err := netip.ParsePrefix(s)
	if err != nil {
		a, err := netip.ParseAddr(s)
		if err != nil {
			return "invalid address " + strconv.Quote(s)
		}
		pfx = netip.PrefixFrom(a, a.BitLen())
	}
	ifc.addrs = append(ifc.addrs, pfx.String())
	return ""
}

// loopbackAddress refuses a loopback address on an interface other than
// lo (the intent's addresses are unicast ones); under --skip-unsupported
// only the address is left out, the interface stays. It reports whether
// s was one.
func (p *parser) loopbackAddress(ifc *iface, s string, at importer.Position) bool {
	pfx, err := netip.ParsePrefix(s)
	if err != nil {
		a, err := netip.ParseAddr(s)
		if err != nil {
			return false
		}
		pfx = netip.PrefixFrom(a, a.BitLen())
	}
	if !pfx.Addr().IsLoopback() || ifc.name == "lo" {
		return false
	}
	p.c.Unsupported(importer.Refusal{Pos: at, Key: "iface " + ifc.name + ": address", Object: "address " + pfx.String() + " of " + ifc.name,
		Why: pfx.String() + " is a loopback address: the intent's addresses are unicast ones, so it cannot give one to " + ifc.name +
			" (ifupdown2's management VRF has 127.0.0.1/8, for services bound to the VRF)"})
	return true
}

// netmask sets the prefix length of the last address without one.
func (ifc *iface) netmask(s string) string {
	m, err := netip.ParseAddr(s)
	if len(ifc.addrs) == 0 || err != nil || !m.Is4() {
		return "invalid netmask " + strconv.Quote(s) + " (an IPv4 mask after an address)"
	}
	b := m.As4()
	ones := 0
	for _, x := range b {
		for i := 7; i >= 0; i-- {
			if x&(1<<i) != 0 {
				ones++
			}
		}
	}
	last := ifc.addrs[len(ifc.addrs)-1]
	a := netip.MustParsePrefix(last).Addr()
	ifc.addrs[len(ifc.addrs)-1] = netip.PrefixFrom(a, ones).String()
	return ""
}

func (ifc *iface) gateway(s string) string {
	a, err := netip.ParseAddr(s)
	if err != nil {
		return "invalid gateway " + strconv.Quote(s)
	}
	to := "0.0.0.0/0"
	if a.Is6() {
		to = "::/0"
	}
	ifc.routes = append(ifc.routes, intent.Route{To: to, Via: a.String(), Dev: ifc.name, OnLink: true}) // ifupdown2 adds its gateways onlink
	return ""
}

// firstOf is a refusal (why) at the first option of ifc whose name starts
// with prefix.
func (ifc *iface) firstOf(prefix, why string) importer.Refusal {
	r := importer.Refusal{Why: why, Object: ifc.name}
	for _, k := range slices.Sorted(maps.Keys(ifc.at)) {
		pos := ifc.at[k]
		if strings.HasPrefix(k, prefix) && (r.Key == "" || before(pos, r.Pos)) {
			r.Pos, r.Key = pos, k
		}
	}
	r.Key = "iface " + ifc.name + ": " + r.Key
	return r
}

func before(a, b importer.Position) bool {
	return a.File == b.File && (a.Line < b.Line || a.Line == b.Line && a.Column < b.Column)
}

// build is ifc as an intent interface.
func (ifc *iface) build(name string) intent.Interface {
	out := intent.Interface{Name: name, Type: intent.LinkPhysical, MTU: ifc.mtu, Addresses: ifc.addresses(), Master: ifc.vrf}
	switch {
	case ifc.vrfTable != 0:
		out.Type, out.VRF = intent.LinkVRF, &intent.VRF{Table: intent.TableID(ifc.vrfTable)}
	case ifc.vxlan != nil:
		out.Type, out.VXLAN = intent.LinkVXLAN, ifc.vxlan
	case ifc.bond != nil:
		out.Type, out.Bond = intent.LinkBond, ifc.bond
		if *ifc.bond == (intent.Bond{}) {
			out.Bond = nil
		}
	case ifc.bridge:
		out.Type, out.Bridge = intent.LinkBridge, &intent.Bridge{STP: ifc.stp, VLANFiltering: ifc.vlanAware}
	case ifc.isVLAN():
		out.Type, out.VLAN = intent.LinkVLAN, ifc.vlanOf()
	}
	if out.Type != intent.LinkPhysical {
		out.MAC = ifc.mac
	}
	out.Alias = ifc.alias
	if ifc.dhcp4 {
		out.DHCP4 = &intent.DHCP4{}
	}
	if ifc.ra {
		out.IPv6 = &intent.IPv6{AcceptRA: true, DHCP6: ifc.dhcp6}
	}
	return out
}

// addPorts makes each bridge's and bond's ports its members (with the
// VLANs of a VLAN-aware bridge's ports), adding the physical ports no
// stanza names.
func (p *parser) addPorts(in *intent.Intent) {
	for _, name := range p.order {
		ifc := p.ifaces[name]
		if ifc.skipped {
			leftOutMaster(in, name, slices.Concat(ifc.slaves, ifc.ports))
			continue
		}
		for _, port := range ifc.slaves {
			setMaster(in, port, name)
		}
		for _, port := range ifc.ports {
			m := setMaster(in, port, name)
			if ifc.vlanAware {
				if vlans := portVLANs(ifc, p.ifaces[port]); vlans != nil {
					m.BridgePort = &intent.BridgePort{VLANs: vlans}
				}
			}
		}
	}
}

// leftOutMaster makes the ports of a master left out (under
// --skip-unsupported) that have stanzas of their own name it still, so
// that they are left out with it (importer.Collector.LeaveOutDangling):
// none is an interface of its own in the file.
func leftOutMaster(in *intent.Intent, master string, ports []string) {
	for i := range in.Interfaces {
		if slices.Contains(ports, in.Interfaces[i].Name) {
			in.Interfaces[i].Master = master
		}
	}
}

// setMaster makes port (added as a NIC if the intent has it not) a member
// of master, and returns it.
func setMaster(in *intent.Intent, port, master string) *intent.Interface {
	for i := range in.Interfaces {
		if in.Interfaces[i].Name == port {
			in.Interfaces[i].Master = master
			return &in.Interfaces[i]
		}
	}
	in.Interfaces = append(in.Interfaces, intent.Interface{Name: port, Type: intent.LinkPhysical, Master: master})
	return &in.Interfaces[len(in.Interfaces)-1]
}

// nameservers records dns-nameservers (resolvconf's; netagent's dns
// section is the host's).
func (ifc *iface) nameservers(args []string) string {
	for _, s := range args {
		a, err := netip.ParseAddr(s)
		if err != nil {
			return "invalid nameserver " + strconv.Quote(s)
		}
		ifc.dns = append(ifc.dns, a.String())
	}
	return ""
}

// addDNS adds ifc's servers and domains to the intent's dns section.
func addDNS(in *intent.Intent, ifc *iface) {
	if len(ifc.dns)+len(ifc.search) == 0 {
		return
	}
	if in.DNS == nil {
		in.DNS = &intent.DNS{}
	}
	in.DNS.Nameservers = append(in.DNS.Nameservers, ifc.dns...)
	in.DNS.Search = append(in.DNS.Search, ifc.search...)
}

// DefaultMTU is the MTU ifupdown2 sets where no mtu option is given
// (address.py's DEFAULT_MTU_STRING).
const DefaultMTU = 1500

// defaultMTUs gives the interfaces ifupdown2 sets to DefaultMTU when their
// stanzas say no mtu that MTU: bridges and bonds (a bridge keeps it then,
// instead of taking its smallest port's), and NICs that are no bond's
// ports (ifupdown2 resets them). VLANs and VXLANs keep the kernel's
// (their lower's, which ifupdown2 cannot raise them above).
func (p *parser) defaultMTUs(in *intent.Intent) {
	bonds := map[string]bool{}
	for _, ifc := range in.Interfaces {
		bonds[ifc.Name] = ifc.Type == intent.LinkBond
	}
	for i := range in.Interfaces {
		ifc := &in.Interfaces[i]
		if ifc.MTU != 0 || p.ifaces[ifc.Name] == nil || ifc.Name == "lo" {
			continue
		}
		switch ifc.Type {
		case intent.LinkBridge, intent.LinkBond:
			ifc.MTU = DefaultMTU
		case intent.LinkPhysical:
			if !bonds[ifc.Master] {
				ifc.MTU = DefaultMTU
			}
		}
	}
}
