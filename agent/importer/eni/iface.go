package eni

import (
	"net/netip"
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
	routes                     []intent.Route
	mtu                        int
	ports                      []string
	bridge, stp                bool
	vlanParent                 string
	mac                        string
	dns, search                []string
}

func (ifc *iface) empty() bool {
	return len(ifc.addrs) == 0 && len(ifc.routes) == 0 && ifc.mtu == 0
}

// option applies one option line of ifc's stanza.
func (p *parser) option(ifc *iface, l line) {
	key, args := l.words[0], l.words[1:]
	if len(args) == 0 {
		p.c.Invalid(importer.Refusal{Pos: l.pos[0], Key: "iface " + ifc.name + ": " + key, Why: "no value"})
		return
	}
	why := ifc.set(key, args)
	if why == "" {
		return
	}
	r := importer.Refusal{Pos: l.pos[0], Key: "iface " + ifc.name + ": " + key, Why: why, Object: ifc.name}
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
		ifc.bridge = true
		if args[0] != "none" {
			ifc.ports = append(ifc.ports, args...)
		}
	case "bridge-stp":
		ifc.stp = args[0] == "on" || args[0] == "yes"
	case "dns-nameservers":
		return ifc.nameservers(args)
	case "dns-search":
		ifc.search = append(ifc.search, args...)
	case "vlan-raw-device":
		ifc.vlanParent = args[0]
	default:
		return whyNot(key)
	}
	return ""
}

// notYet are the options netagent's intent could express that this
// importer does not map yet (by prefix).
var notYet = []string{"bond-", "vxlan-", "vrf", "bridge-vlan-aware", "bridge-vids", "bridge-pvid", "bridge-access"}

// whyNot says why key is refused.
func whyNot(key string) string {
	for _, p := range notYet {
		if strings.HasPrefix(key, p) {
			return "not mapped by netagent's ENI importer yet (the intent has an equivalent; write it by hand)"
		}
	}
	return "netagent has no equivalent of this option"
}

func (ifc *iface) address(s string) string {
	if pfx, err := netip.ParsePrefix(s); err == nil {
		ifc.addrs = append(ifc.addrs, pfx.String())
		return ""
	}
	a, err := netip.ParseAddr(s)
	if err != nil {
		return "invalid address " + strconv.Quote(s)
	}
	bits := 128
	if a.Is4() {
		bits = 32
	}
	ifc.addrs = append(ifc.addrs, netip.PrefixFrom(a, bits).String())
	return ""
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

// build is ifc as an intent interface.
func (ifc *iface) build(name string) intent.Interface {
	out := intent.Interface{Name: name, Type: intent.LinkPhysical, MTU: ifc.mtu, Addresses: ifc.addrs}
	switch {
	case ifc.bridge:
		out.Type, out.Bridge = intent.LinkBridge, &intent.Bridge{STP: ifc.stp}
	case ifc.vlanParent != "" || strings.Contains(name, "."):
		out.Type, out.VLAN = intent.LinkVLAN, vlanOf(name, ifc.vlanParent)
	}
	if out.Type != intent.LinkPhysical {
		out.MAC = ifc.mac
	}
	if ifc.dhcp4 {
		out.DHCP4 = &intent.DHCP4{}
	}
	if ifc.ra {
		out.IPv6 = &intent.IPv6{AcceptRA: true, DHCP6: ifc.dhcp6}
	}
	return out
}

// vlanOf is the VLAN of NAME.VID, or of vlan-raw-device with the id
// after the name's last dot or digits.
func vlanOf(name, parent string) *intent.VLAN {
	base, vid, _ := strings.Cut(name, ".")
	if parent == "" {
		parent = base
	}
	if vid == "" {
		vid = strings.TrimLeft(name, "abcdefghijklmnopqrstuvwxyz")
	}
	id, _ := strconv.Atoi(vid)
	return &intent.VLAN{Parent: parent, ID: id}
}

// addPorts makes each bridge's ports its members, adding the physical
// ports no stanza names.
func (p *parser) addPorts(in *intent.Intent) {
	for _, name := range p.order {
		ifc := p.ifaces[name]
		if ifc.skipped {
			continue
		}
		for _, port := range ifc.ports {
			setMaster(in, port, name)
		}
	}
}

func setMaster(in *intent.Intent, port, master string) {
	for i := range in.Interfaces {
		if in.Interfaces[i].Name == port {
			in.Interfaces[i].Master = master
			return
		}
	}
	in.Interfaces = append(in.Interfaces, intent.Interface{Name: port, Type: intent.LinkPhysical, Master: master})
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
