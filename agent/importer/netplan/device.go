package netplan

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/netagent/netagent/agent/intent"
)

// handler maps one key of a device onto the interface; false: the key
// was refused (the device is then left out).
type handler func(c *conv, ifc *intent.Interface, e entry) bool

// common are the keys every device section has.
var common = map[string]handler{
	"addresses":       (*conv).addresses,
	"dhcp4":           (*conv).dhcp4,
	"dhcp4-overrides": (*conv).dhcp4Overrides,
	"dhcp6":           (*conv).dhcp6,
	"dhcp6-overrides": (*conv).dhcp6Overrides,
	"gateway4":        (*conv).gateway,
	"dhcp-identifier": (*conv).dhcpIdentifier,
	"gateway6":        (*conv).gateway,
	"accept-ra":       (*conv).acceptRA,
	"mtu":             (*conv).mtu,
	"macaddress":      (*conv).macaddress,
	"routes":          (*conv).routesKey,
	"nameservers":     (*conv).nameservers,
	"link-local":      (*conv).linkLocal,
	"optional":        (*conv).optional,
	"renderer":        (*conv).devRenderer,
	"routing-policy":  (*conv).routingPolicy,
}

// bySection are each section's own keys.
var bySection = map[string]map[string]handler{
	"ethernets":         {"match": (*conv).match, "set-name": (*conv).setName},
	"bonds":             {"interfaces": (*conv).ports, "parameters": (*conv).bondParameters},
	"bridges":           {"interfaces": (*conv).ports, "parameters": (*conv).bridgeParameters},
	"vlans":             {"id": (*conv).vlanID, "link": (*conv).vlanLink},
	"vrfs":              {"table": (*conv).vrfTable, "interfaces": (*conv).ports},
	"dummy-devices":     {},
	"virtual-ethernets": {"peer": (*conv).vethPeer},
	"tunnels":           tunnelKeys,
}

func init() {
	eth := bySection["ethernets"]
	for k := range offloads {
		eth[k] = (*conv).offload
	}
	eth["wakeonlan"] = (*conv).wakeonlan
}

// linkTypes are the intent's type of each section's devices.
var linkTypes = map[string]intent.LinkType{
	"ethernets": intent.LinkPhysical, "bonds": intent.LinkBond,
	"bridges": intent.LinkBridge, "vlans": intent.LinkVLAN,
	"vrfs": intent.LinkVRF, "dummy-devices": intent.LinkDummy, "virtual-ethernets": intent.LinkVeth,
}

// device is the interface dev means; false: it is left out (refused).
func (c *conv) device(dev *device) (*intent.Interface, bool) {
	ifc := &intent.Interface{Name: dev.name, Type: linkTypes[dev.section]}
	if at, why, ovs := c.ovsDevice(dev); ovs {
		r := at.d.refusal(at.v, "network."+dev.section+"."+dev.name+"."+at.k.Value, why)
		r.Object = dev.name
		c.col.Unsupported(r)
		if e, ok := dev.keys["interfaces"]; ok && dev.section != "ethernets" {
			c.ports(ifc, e) // its ports go with it (portsOf)
		}
		return ifc, false
	}
	switch dev.section {
	case "vlans":
		ifc.VLAN = &intent.VLAN{}
	case "vrfs":
		ifc.VRF = &intent.VRF{}
	case "virtual-ethernets":
		ifc.Veth = &intent.Veth{}
	case "tunnels":
		if !c.tunnelType(ifc, dev) {
			return ifc, false
		}
	}
	ok, firstRule, firstRoute := true, len(c.rules), len(c.routes)
	for _, k := range dev.order {
		e := dev.keys[k]
		h := bySection[dev.section][k]
		if h == nil {
			h = common[k]
		}
		if h == nil {
			c.unknown(dev, e)
			ok = false
			continue
		}
		ok = h(c, ifc, e) && ok
	}
	if ifc.VRF != nil {
		c.vrfTables(uint32(ifc.VRF.Table), firstRule, firstRoute)
	}
	c.gatewayOnLink(ifc, firstRoute)
	c.dhcpFinish(dev, ifc)
	if dev.section == "ethernets" {
		ok = c.nicName(dev, ifc) && ok
	}
	return ifc, ok
}

// unknown refuses a key no handler takes: unsupported if netplan has it,
// else invalid.
func (c *conv) unknown(dev *device, e entry) {
	key := "network." + dev.section + "." + dev.name + "." + e.k.Value
	r := e.d.refusal(e.k, key, "unknown key")
	if why, ok := notImported[e.k.Value]; ok {
		r.Why, r.Object = why, dev.name
		c.col.Unsupported(r)
		return
	}
	c.col.Invalid(r)
}

// each calls f on every entry of mapping n (a key's value), going on
// after a refusal so that all are reported; false: one was refused.
func (c *conv) each(e entry, n *yaml.Node, f func(entry) bool) bool {
	ok := true
	for _, p := range pairs(n) {
		ok = f(entry{e.d, p.k, p.v}) && ok
	}
	return ok
}

// bad records an invalid value at e.
func (c *conv) bad(e entry, why string) bool {
	c.col.Invalid(e.d.refusal(e.v, e.k.Value, why))
	return false
}

// unsupported records a value netagent cannot express at n.
func (c *conv) unsupported(e entry, n *yaml.Node, why string) bool {
	c.col.Unsupported(e.d.refusal(n, e.k.Value, why))
	return false
}

// boolean is e's value as a YAML boolean.
func (c *conv) boolean(e entry, n *yaml.Node) (bool, bool) {
	var b bool
	if n.Kind != yaml.ScalarNode || n.Decode(&b) != nil {
		c.col.Invalid(e.d.refusal(n, e.k.Value, "is not a boolean"))
		return false, false
	}
	return b, true
}

// scalars is e's value as a list of scalars.
func (c *conv) scalars(e entry, n *yaml.Node) ([]string, bool) {
	if n.Kind != yaml.SequenceNode {
		c.col.Invalid(e.d.refusal(n, e.k.Value, "is not a list"))
		return nil, false
	}
	out := make([]string, 0, len(n.Content))
	for _, s := range n.Content {
		if s.Kind != yaml.ScalarNode {
			c.col.Unsupported(e.d.refusal(s, e.k.Value, "only plain values are imported here"))
			return nil, false
		}
		out = append(out, s.Value)
	}
	return out, true
}

// number is n as an integer in [lo, hi].
func (c *conv) number(e entry, n *yaml.Node, lo, hi int64) (int64, bool) {
	v, err := strconv.ParseInt(n.Value, 10, 64)
	if n.Kind != yaml.ScalarNode || err != nil || v < lo || v > hi {
		c.col.Invalid(e.d.refusal(n, e.k.Value, fmt.Sprintf("is not a number from %d to %d", lo, hi)))
		return 0, false
	}
	return v, true
}

func (c *conv) addresses(ifc *intent.Interface, e entry) bool {
	a, ok := c.scalars(e, e.v)
	ifc.Addresses = append(ifc.Addresses, a...)
	return ok
}

func (c *conv) dhcp4(ifc *intent.Interface, e entry) bool {
	on, ok := c.boolean(e, e.v)
	if on && ifc.DHCP4 == nil {
		ifc.DHCP4 = &intent.DHCP4{}
	}
	return ok
}

// dhcp4Overrides maps use-routes, use-dns, route-metric and hostname
// (they count only with dhcp4: dhcpOff drops them without).
func (c *conv) dhcp4Overrides(ifc *intent.Interface, e entry) bool {
	if ifc.DHCP4 == nil {
		ifc.DHCP4 = &intent.DHCP4{}
	}
	return c.each(e, e.v, func(pe entry) bool { return c.dhcp4Override(ifc.DHCP4, pe) })
}

// dhcpOverrideKeys are netplan's override keys (of dhcp4-overrides and
// dhcp6-overrides).
var dhcpOverrideKeys = []string{"use-dns", "use-ntp", "send-hostname", "use-hostname", "use-mtu", "hostname", "use-routes", "route-metric", "use-domains"}

func (c *conv) dhcp4Override(d *intent.DHCP4, e entry) bool {
	switch e.k.Value {
	case "use-routes", "use-dns":
		b, ok := c.boolean(e, e.v)
		if e.k.Value == "use-routes" {
			d.UseRoutes = &b
		} else {
			d.UseDNS = &b
		}
		return ok
	case "route-metric":
		m, ok := c.number(e, e.v, 0, 1<<32-1)
		d.RouteMetric = m
		return ok
	case "hostname":
		d.Hostname = e.v.Value
		return true
	}
	return c.notMapped(e, dhcpOverrideKeys, "dhcp4")
}

// dhcp6Overrides: the intent's DHCPv6 client (ipv6.dhcp6) has no
// settings; it takes the DNS servers and, as DHCPv6 does, no routes. So
// use-dns and use-routes true, what it does, are accepted; everything
// else is refused.
func (c *conv) dhcp6Overrides(ifc *intent.Interface, e entry) bool {
	return c.each(e, e.v, func(pe entry) bool {
		if !slices.Contains(dhcpOverrideKeys, pe.k.Value) {
			return c.bad(entry{pe.d, pe.k, pe.k}, "unknown dhcp6 override")
		}
		if pe.k.Value == "use-dns" || pe.k.Value == "use-routes" {
			if on, ok := c.boolean(pe, pe.v); !ok || on {
				return ok
			}
		}
		return c.unsupported(pe, pe.k, "the intent's DHCPv6 client (ipv6.dhcp6) has no settings: it takes the DNS servers, and the routes come from router advertisements")
	})
}

// dhcpIdentifier: netagent's DHCPv4 client sends no client identifier
// (option 61), so the server knows it by its MAC address: what netplan's
// "mac" asks for. Its default, a DUID, netagent does not send: an explicit
// "duid" is refused (left out, the key says nothing netagent does not).
func (c *conv) dhcpIdentifier(ifc *intent.Interface, e entry) bool {
	switch e.v.Value {
	case "mac":
		return true
	case "duid":
		return c.unsupported(e, e.v, "netagent's DHCP client sends no DUID: the server knows it by its MAC address (dhcp-identifier: mac)")
	}
	return c.bad(e, "is not duid or mac")
}

// netplanRouteMetric is the metric netplan gives DHCP routes when
// dhcp4-overrides say none (it writes networkd's RouteMetric=100).
const netplanRouteMetric = 100

// dhcpFinish settles a device's dhcp4 once its keys are read: without
// dhcp4 true, dhcp4-overrides do nothing (netplan's); with it, the
// routes' metric is netplan's default unless an override gives one.
func (c *conv) dhcpFinish(dev *device, ifc *intent.Interface) {
	e, ok := dev.keys["dhcp4"]
	var on bool
	if !ok || e.v.Decode(&on) != nil || !on {
		ifc.DHCP4 = nil
		return
	}
	o, ok := dev.keys["dhcp4-overrides"]
	if !ok || !slices.ContainsFunc(pairs(o.v), func(p pair) bool { return p.k.Value == "route-metric" }) {
		ifc.DHCP4.RouteMetric = netplanRouteMetric
	}
}

func (c *conv) dhcp6(ifc *intent.Interface, e entry) bool {
	on, ok := c.boolean(e, e.v)
	if on {
		c.ipv6(ifc).DHCP6 = true
		c.ipv6(ifc).AcceptRA = true // networkd's DHCPv6 starts from the RA
	}
	return ok
}

func (c *conv) ipv6(ifc *intent.Interface) *intent.IPv6 {
	if ifc.IPv6 == nil {
		ifc.IPv6 = &intent.IPv6{}
	}
	return ifc.IPv6
}

func (c *conv) acceptRA(ifc *intent.Interface, e entry) bool {
	on, ok := c.boolean(e, e.v)
	c.ipv6(ifc).AcceptRA = on
	return ok
}

func (c *conv) mtu(ifc *intent.Interface, e entry) bool {
	m, ok := c.number(e, e.v, 68, 65535)
	ifc.MTU = int(m)
	return ok
}

// macaddress sets a virtual link's MAC; the intent sets no NIC's
// address (a NIC is matched by its address instead).
func (c *conv) macaddress(ifc *intent.Interface, e entry) bool {
	if ifc.Type == intent.LinkPhysical {
		return c.unsupported(e, e.k, "the intent sets the MAC of virtual interfaces only, not a NIC's (match the NIC by its own macaddress instead)")
	}
	ifc.MAC = strings.ToLower(e.v.Value)
	return true
}

// linkLocal accepts netplan's default, [ipv6]: the kernel's too.
func (c *conv) linkLocal(ifc *intent.Interface, e entry) bool {
	v, ok := c.scalars(e, e.v)
	if ok && !(len(v) == 1 && v[0] == "ipv6") {
		return c.unsupported(e, e.v, "netagent keeps the kernel's link-local addressing (netplan's [ipv6])")
	}
	return ok
}

// optional only tells netplan's boot not to wait for the device;
// netagent never waits, so both values mean the same.
func (c *conv) optional(ifc *intent.Interface, e entry) bool {
	_, ok := c.boolean(e, e.v)
	return ok
}

func (c *conv) devRenderer(ifc *intent.Interface, e entry) bool {
	if e.v.Value != "networkd" {
		return c.unsupported(e, e.v, "devices rendered by "+e.v.Value+" are not expressible")
	}
	return true
}

// nameservers are the intent's global DNS, which has no per-link
// servers: every device's are merged, in order, once each, and the first
// device's say so in a warning (systemd-resolved would ask each link's
// servers for names of its search domains; resolv.conf asks them all).
// Past resolv.conf's limits, the device's nameservers are refused.
func (c *conv) nameservers(ifc *intent.Interface, e entry) bool {
	if e.v.Kind != yaml.MappingNode {
		return c.bad(e, "is not a mapping")
	}
	if c.nsAt == nil {
		c.nsAt = &e
		c.col.Warn(e.d.refusal(e.k, e.k.Value, "netagent's dns is the host's, not a link's: every device's nameservers and search domains are merged into it"))
	}
	ok := c.each(e, e.v, func(pe entry) bool {
		v, good := c.scalars(pe, pe.v)
		switch pe.k.Value {
		case "addresses":
			c.ns = appendNew(c.ns, v)
		case "search":
			c.search = appendNew(c.search, v)
		default:
			return c.bad(entry{pe.d, pe.k, pe.k}, "unknown key")
		}
		return good
	})
	if len(c.ns) > intent.MaxNameservers {
		return c.unsupported(e, e.k, fmt.Sprintf("merged with the other devices', more than %d name servers, resolv.conf's limit", intent.MaxNameservers))
	}
	return ok
}

func appendNew(list, add []string) []string {
	for _, a := range add {
		if !containsString(list, a) {
			list = append(list, a)
		}
	}
	return list
}

func containsString(list []string, s string) bool {
	for _, l := range list {
		if l == s {
			return true
		}
	}
	return false
}

// vrfTables puts a VRF's routes and rules (those from firstRule and
// firstRoute on) that name no table in its table, as netplan does.
func (c *conv) vrfTables(table uint32, firstRule, firstRoute int) {
	for i := firstRule; i < len(c.rules); i++ {
		if c.rules[i].Table == 0 {
			c.rules[i].Table = intent.TableID(table)
		}
	}
	for i := firstRoute; i < len(c.routes); i++ {
		if c.routes[i].Table == 0 {
			c.routes[i].Table = intent.TableID(table)
		}
	}
}

// gatewayOnLink marks the device's routes with a gateway (those from
// firstRoute on) onlink when the device has no static address, as
// systemd-networkd does to what netplan renders: netplan writes
// GatewayOnLink= only for on-link: true, and networkd turns it on by
// itself for a [Route] with a Gateway= and no GatewayOnLink= in a
// .network file without any static address ("Gateway= without static
// address configured. Enabling GatewayOnLink= option."), since the
// gateway could not be reached otherwise. So such a route is onlink even
// with on-link: false, and a DHCP address does not count.
func (c *conv) gatewayOnLink(ifc *intent.Interface, firstRoute int) {
	if len(ifc.Addresses) > 0 {
		return
	}
	for i := firstRoute; i < len(c.routes); i++ {
		if c.routes[i].Via != "" {
			c.routes[i].OnLink = true
		}
	}
}
