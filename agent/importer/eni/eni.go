// Package eni imports ifupdown's and ifupdown2's /etc/network/interfaces
// into an intent: `auto` and `allow-hotplug` interfaces with their
// `iface` stanzas (several stanzas of one interface merged, as ifupdown2
// does: every address and gateway counts, of any other option the first
// value), addresses, gateways, MTU, bridges (with their VLANs), 802.1Q
// VLANs, bonds, VXLANs and VRFs, one table of options per kind
// (bridgevlan.go, bond.go, vxlan.go, vrf.go; link.go for any link's
// alias and ethtool link mode, and why the options of features netagent
// has not are refused). A mako template is refused once per construct,
// with the lines it spans (mako.go): netagent evaluates none. `source` and
// `source-directory` read further files (source.go). What the intent
// cannot express (commands such as post-up, mapping stanzas, wireless,
// Open vSwitch, unknown options, an option the intent has not at a value
// other than the kernel's default) is refused with FILE:LINE:COLUMN of
// the file it is in, or left out with a warning under
// importer.Options.SkipUnsupported.
//
// It reads the files it is given or sourced, each bounded by
// importer.MaxFileSize and all by MaxSourceDepth, MaxSourceFiles and
// MaxSourceBytes, and never the kernel.
package eni

import (
	"fmt"
	"net/netip"
	"slices"

	"github.com/netagent/netagent/agent/importer"
	"github.com/netagent/netagent/agent/intent"
	"github.com/netagent/netagent/internal/safefile"
	"golang.org/x/sys/unix"
)

// Import reads the interfaces file at path and returns its intent.
func Import(path string, opts importer.Options) (*importer.Result, error) {
	data, st, err := safefile.ReadNamed(path, importer.MaxFileSize)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	return parse(path, data, st, opts)
}

// Parse imports data, the contents of the interfaces file named file;
// the files it sources are read from the file system.
func Parse(file string, data []byte, opts importer.Options) (*importer.Result, error) {
	var st unix.Stat_t
	if unix.Stat(file, &st) != nil {
		return parse(file, data, nil, opts)
	}
	return parse(file, data, &st, opts)
}

func parse(file string, data []byte, st *unix.Stat_t, opts importer.Options) (*importer.Result, error) {
	p := &parser{c: importer.NewCollector(opts), ifaces: map[string]*iface{}, auto: map[string]bool{}}
	p.readFile(file, data, st)
	in := p.intent()
	p.c.LeaveOutDangling(in, file)
	return p.c.Finish(in, file)
}

// parser walks the logical lines; cur is the stanza options go to.
type parser struct {
	c      *importer.Collector
	order  []string
	ifaces map[string]*iface
	auto   map[string]bool
	cur    *iface
	// inMapping: the lines belong to a refused mapping or vlan stanza,
	// or to a stanza a template opened.
	inMapping bool
	src       sources
}

// line handles one logical line: a stanza's start or an option of the
// current stanza.
func (p *parser) line(l line) {
	switch kw := l.words[0]; {
	case l.mako != nil:
		p.template(l)
	case kw == "auto" || kw == "allow-hotplug" || kw == "allow-auto":
		p.cur, p.inMapping = nil, false
		for _, name := range l.words[1:] {
			p.auto[name] = true
		}
	case kw == "iface":
		p.inMapping = false
		p.stanza(l)
	case kw == "vlan":
		p.cur, p.inMapping = nil, true
		p.c.Unsupported(importer.Refusal{Pos: l.pos[0], Key: "vlan", Why: "ifupdown2's vlan stanza (a VLAN-aware bridge's per-VLAN settings, such as its IGMP querier): netagent has no equivalent"})
	case kw == "mapping":
		p.cur, p.inMapping = nil, true
		p.c.Unsupported(importer.Refusal{Pos: l.pos[0], Key: "mapping", Why: "mapping stanzas run a script to choose the configuration; netagent has no such mapping"})
	case kw == "source":
		p.cur, p.inMapping = nil, false
		p.source(l)
	case kw == "source-directory":
		p.cur, p.inMapping = nil, false
		p.sourceDirectory(l)
	case len(kw) > 6 && kw[:6] == "allow-":
		p.cur, p.inMapping = nil, false
		p.c.Unsupported(importer.Refusal{Pos: l.pos[0], Key: kw, Why: "an allow- class other than hotplug and auto: netagent has no classes of interfaces (ifup --allow=CLASS)"})
	case p.cur != nil:
		p.option(p.cur, l)
	case p.inMapping:
	default:
		p.c.Invalid(importer.Refusal{Pos: l.pos[0], Key: kw, Why: "an option outside any iface stanza"})
	}
}

// stanza starts `iface NAME FAMILY METHOD`, merging into an earlier
// stanza of the same interface.
func (p *parser) stanza(l line) {
	p.cur = nil
	if len(l.words) < 2 {
		p.c.Invalid(importer.Refusal{Pos: l.pos[0], Key: "iface", Why: "no interface name"})
		return
	}
	name := l.words[1]
	ifc := p.ifaces[name]
	if ifc == nil {
		ifc = &iface{name: name, pos: l.pos[1]}
		p.ifaces[name] = ifc
		p.order = append(p.order, name)
	}
	p.cur = ifc
	if len(l.words) == 2 {
		return // ifupdown2: family and method may be left out
	}
	if len(l.words) > 4 {
		p.c.Invalid(importer.Refusal{Pos: l.pos[0], Key: "iface " + name, Why: "want iface NAME [inet|inet6 [METHOD]]"})
		return
	}
	method := "manual" // ifupdown2: the method may be left out
	if len(l.words) == 4 {
		method = l.words[3]
	}
	if name == "lo" && method == "manual" {
		method = "loopback"
	}
	p.method(ifc, l.words[2], method, l.pos[2])
}

// method records a stanza's family and method.
func (p *parser) method(ifc *iface, family, method string, pos importer.Position) {
	key := "iface " + ifc.name + " " + family + " " + method
	switch family + " " + method {
	case "inet static", "inet manual", "inet6 static", "inet6 manual":
	case "inet loopback", "inet6 loopback":
		ifc.loopback = true
	case "inet dhcp":
		ifc.dhcp4 = true
	case "inet6 auto":
		ifc.ra = true
	case "inet6 dhcp":
		ifc.ra, ifc.dhcp6 = true, true
	default:
		p.refuse(ifc, pos, key, "netagent has no such method")
	}
}

// refuse records what the intent cannot express in ifc's stanza; under
// --skip-unsupported the interface is left out.
func (p *parser) refuse(ifc *iface, pos importer.Position, key, why string) {
	if p.c.Unsupported(importer.Refusal{Pos: pos, Key: key, Why: why, Object: ifc.name}) {
		ifc.skipped = true
	}
}

// intent builds the intent of the auto interfaces.
func (p *parser) intent() *intent.Intent {
	in := &intent.Intent{Version: intent.Version}
	aware := p.vlanAwarePorts()
	p.vxlanLocal()
	p.autoVRFTables()
	p.sharedAddresses()
	for _, name := range p.order {
		ifc := p.ifaces[name]
		p.checkVLANOptions(ifc, aware[name])
		p.checkVXLAN(ifc)
		p.checkVLAN(ifc)
		p.checkBond(ifc)
		p.checkBroadcasts(ifc)
		p.checkPeers(ifc)
		if !p.auto[name] {
			p.refuse(ifc, ifc.pos, "iface "+name, "not auto or allow-hotplug: ifup -a leaves it down, and netagent has no interface brought up only on demand")
		}
		if ifc.mac != "" && ifc.build(name).Type == intent.LinkPhysical {
			p.refuse(ifc, ifc.pos, "iface "+name+": hwaddress", "netagent sets the MAC only of the interfaces it creates, not of a NIC")
		}
		if ifc.skipped || ifc.loopback && ifc.empty() {
			continue
		}
		out := ifc.build(name)
		if l := p.ethtoolLink(ifc); l != nil {
			out.Ethtool = &intent.Ethtool{Link: l}
		}
		in.Interfaces = append(in.Interfaces, out)
		in.Routes = append(in.Routes, p.gatewayRoutes(ifc)...)
		addDNS(in, ifc)
	}
	p.addPorts(in)
	p.addSVIs(in)
	p.addParents(in)
	p.defaultMTUs(in)
	return in
}

// gatewayRoutes are ifc's gateway routes, in its VRF's table when it is a
// VRF's member (ifupdown2 adds them with `ip route add table VRF`).
func (p *parser) gatewayRoutes(ifc *iface) []intent.Route {
	vrf := p.ifaces[ifc.vrf]
	if ifc.vrf == "" || vrf == nil || vrf.vrfTable == 0 {
		return ifc.routes
	}
	out := slices.Clone(ifc.routes)
	for i := range out {
		out[i].Table = intent.TableID(vrf.vrfTable)
	}
	return out
}

// sharedAddresses refuses an address given to a second interface (but a
// host address, /32 or /128, which the intent lets several share): the
// kernel takes it, ifupdown2 gives it, and the intent has an address on
// one interface only. The second interface is the one left out.
func (p *parser) sharedAddresses() {
	type first struct {
		name string
		at   importer.Position
	}
	seen := map[netip.Addr]first{}
	for _, name := range p.order {
		ifc := p.ifaces[name]
		for i, s := range ifc.addrs {
			pfx := netip.MustParsePrefix(s)
			if pfx.Bits() == pfx.Addr().BitLen() || ifc.skipped {
				continue
			}
			if f, ok := seen[pfx.Addr()]; ok && f.name != name {
				p.refuse(ifc, ifc.addrAt[i], "iface "+name+": address", fmt.Sprintf("%s is also %s's (%s): the intent gives an address (but a /32 or /128) to one interface only", s, f.name, f.at))
				continue
			}
			seen[pfx.Addr()] = first{name, ifc.addrAt[i]}
		}
	}
}
