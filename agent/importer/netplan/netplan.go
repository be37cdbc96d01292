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
// device (or the key's object) out.
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
	c := &conv{col: importer.NewCollector(opts), devs: map[string]*device{}, masters: map[string]string{}}
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
	var ids []string
	for _, key := range c.devOrder {
		if ifc, ok := c.device(c.devs[key]); ok {
			in.Interfaces = append(in.Interfaces, *ifc)
			ids = append(ids, key)
		}
	}
	for i := range in.Interfaces { // ports name their master by its netplan id
		in.Interfaces[i].Master = c.masters[ids[i]]
	}
	in.Routes, in.Rules = c.routes, c.rules
	if len(c.ns) > 0 || len(c.search) > 0 {
		in.DNS = &intent.DNS{Nameservers: c.ns, Search: c.search}
	}
	return c.col.Finish(in, first)
}

// conv is an import under way.
type conv struct {
	col      *importer.Collector
	devs     map[string]*device // by name
	devOrder []string
	routes   []intent.Route
	rules    []intent.Rule
	ns       []string
	autoPrio uint32            // rules given no priority so far
	masters  map[string]string // a port's bond or bridge
	search   []string
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
