// Package netplan imports netplan's YAML (network: version 2) as an
// intent: files in, intent out, never the kernel.
//
// The files are merged in netplan's order (by base name across /lib,
// /etc and /run/netplan, a file in /run shadowing one of the same name in
// /etc, which shadows /lib; a later file's key wins over an earlier one's
// for the same device). Every key is either mapped to the intent or
// refused with its FILE:LINE:COLUMN: an unknown key is invalid, a key
// netagent cannot express (wifis, modems, Open vSwitch, SR-IOV,
// NetworkManager's keys, ...) is unsupported, which
// importer.Options.SkipUnsupported turns into a warning leaving the
// device (or the key's object) out, and what depended on it with it.
// A WireGuard tunnel is imported when its keys are key files (the intent
// holds no keys: wireguard.go); the keys refused, and why, are in
// refused.go.
//
// A netplan id is a label; what names a NIC in the kernel is set-name,
// or, without it, the kernel's own name. The intent's match always gives
// the NIC it finds the interface's name, so a match without set-name is
// imported only when it is one literal name (that name), and refused
// otherwise. References to ids (routes' devices, ports, links, a bond's
// primary) are given the interfaces' final names. Per-device nameservers
// are merged into the intent's dns, which is the host's, with a warning.
package netplan

import (
	"slices"

	"go.yaml.in/yaml/v3"

	"github.com/netagent/netagent/agent/importer"
	"github.com/netagent/netagent/agent/intent"
)

// entry is one key of a device, from the file that set it last.
type entry struct {
	d    *doc
	k, v *yaml.Node
}

// device is a netplan device merged across the files: its section
// ("ethernets", ...), name and keys.
type device struct {
	section, name string
	pos           entry // where the device was first named
	keys          map[string]entry
	order         []string
}

// sections are netplan's device sections netagent imports, in the order
// the intent lists them (ports before their masters is not needed: the
// intent is declarative).
var sections = []string{"ethernets", "bonds", "bridges", "vlans", "vrfs", "dummy-devices", "virtual-ethernets", "tunnels"}

// unsupportedSections are netplan's sections netagent cannot express, and
// why.
var unsupportedSections = map[string]string{
	"wifis":       "netagent configures no wireless interfaces",
	"modems":      "netagent configures no modems",
	"openvswitch": "netagent does not manage Open vSwitch",
	"nm-devices":  "NetworkManager's own devices are not expressible",
}

// Import reads files (netplan YAML) and returns the intent they mean.
func Import(files []string, opts importer.Options) (*importer.Result, error) {
	c := &conv{col: importer.NewCollector(opts), devs: map[string]*device{}, setNames: map[string]string{}, names: map[string]string{}, ovsPorts: map[string]bool{}}
	var first string
	for _, f := range order(files) {
		d, err := readDoc(f)
		if err != nil {
			return nil, err
		}
		if first == "" {
			first = f
		}
		c.file(d)
	}
	in := &intent.Intent{Version: intent.Version}
	byID := map[string]int{}
	for _, id := range c.devOrder {
		if ifc, ok := c.device(c.devs[id]); ok {
			byID[id] = len(in.Interfaces)
			in.Interfaces = append(in.Interfaces, *ifc)
			c.names[id] = ifc.Name
		}
	}
	c.portsOf(in, byID)
	in.Routes, in.Rules = c.routes, c.rules
	c.rename(in)
	if len(c.ns) > 0 || len(c.search) > 0 {
		in.DNS = &intent.DNS{Nameservers: c.ns, Search: c.search}
	}
	c.col.LeaveOutDangling(in, first)
	return c.col.Finish(in, first)
}

// portRef is a device a bond, bridge or vrf lists as its port, by id.
type portRef struct {
	id, master string
	at         entry
}

// portSet is a bridge's parameter for one of its ports (path-cost,
// port-priority), by the port's id.
type portSet struct {
	id  string
	at  entry
	set func(*intent.BridgePort)
}

// portsOf gives each port its master and its bridge's settings for it
// (byID: the index of each device's interface); a port that is no device
// is refused (netplan's own error), one left out is skipped with it. A
// port of a master left out names it still, and is left out with it
// (importer.Collector.LeaveOutDangling): it is no NIC of its own.
func (c *conv) portsOf(in *intent.Intent, byID map[string]int) {
	for _, p := range c.portRefs {
		if i, ok := byID[p.id]; ok {
			in.Interfaces[i].Master = p.master
		} else if c.devs[p.id] == nil && !c.ovsPorts[p.id] {
			c.bad(p.at, "names "+p.id+", which is no device")
		}
	}
	for _, p := range c.portSets {
		i, ok := byID[p.id]
		if !ok {
			if c.devs[p.id] == nil {
				c.bad(entry{p.at.d, p.at.k, p.at.k}, "is no device")
			}
			continue
		}
		if in.Interfaces[i].BridgePort == nil {
			in.Interfaces[i].BridgePort = &intent.BridgePort{}
		}
		p.set(in.Interfaces[i].BridgePort)
	}
}

// conv is an import under way.
type conv struct {
	col      *importer.Collector
	devs     map[string]*device // by name
	devOrder []string
	routes   []intent.Route
	rules    []intent.Rule
	ns       []string
	autoPrio uint32 // rules given no priority so far
	search   []string
	nsAt     *entry // the first device's nameservers, for the warning

	portRefs []portRef
	portSets []portSet
	setNames map[string]string // a NIC's set-name, by id
	names    map[string]string // each device's name in the intent, by id
	ovsPorts map[string]bool   // network.openvswitch.ports' patch ports
}

// file merges one document's devices into c.
func (c *conv) file(d *doc) {
	for _, top := range pairs(d.root) {
		if top.k.Value != "network" {
			c.col.Invalid(d.refusal(top.k, top.k.Value, "unknown key (netplan's files hold only network)"))
			continue
		}
		for _, p := range pairs(top.v) {
			c.networkKey(d, p)
		}
	}
}

// networkKey handles a key of network:.
func (c *conv) networkKey(d *doc, p pair) {
	key := "network." + p.k.Value
	switch p.k.Value {
	case "version":
		if p.v.Value != "2" {
			c.col.Invalid(d.refusal(p.v, key, "only version 2 is netplan's format"))
		}
		return
	case "renderer":
		c.renderer(d, p, key)
		return
	}
	if why, ok := unsupportedSections[p.k.Value]; ok {
		if p.k.Value == "openvswitch" {
			c.ovsPatchPorts(p.v)
		}
		for _, dp := range pairs(p.v) {
			r := d.refusal(dp.k, key+"."+dp.k.Value, why)
			r.Object = dp.k.Value
			c.col.Unsupported(r)
		}
		return
	}
	if !slices.Contains(sections, p.k.Value) {
		c.col.Invalid(d.refusal(p.k, key, "unknown key"))
		return
	}
	for _, dp := range pairs(p.v) {
		c.merge(d, p.k.Value, dp)
	}
}

// renderer accepts networkd (what netagent replaces) and refuses
// NetworkManager.
func (c *conv) renderer(d *doc, p pair, key string) {
	switch p.v.Value {
	case "networkd":
	case "NetworkManager":
		c.col.Unsupported(d.refusal(p.v, key, "devices rendered by NetworkManager are not expressible"))
	default:
		c.col.Invalid(d.refusal(p.v, key, "unknown renderer "+p.v.Value))
	}
}

// merge adds a device's keys to what earlier files said of it: a later
// file's key wins.
func (c *conv) merge(d *doc, section string, dp pair) {
	name := dp.k.Value
	dev, ok := c.devs[name]
	switch {
	case !ok:
		dev = &device{section: section, name: name, pos: entry{d, dp.k, dp.v}, keys: map[string]entry{}}
		c.devs[name] = dev
		c.devOrder = append(c.devOrder, name)
	case dev.section != section:
		c.col.Invalid(d.refusal(dp.k, "network."+section+"."+name, "is also one of the "+dev.section))
		return
	}
	if dp.v.Kind != yaml.MappingNode {
		if dp.v.Tag != "!!null" {
			c.col.Invalid(d.refusal(dp.v, "network."+section+"."+name, "is not a mapping"))
		}
		return
	}
	for _, p := range pairs(dp.v) {
		if _, seen := dev.keys[p.k.Value]; !seen {
			dev.order = append(dev.order, p.k.Value)
		}
		dev.keys[p.k.Value] = entry{d, p.k, p.v}
	}
}
