package netplan

import (
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/netagent/netagent/agent/intent"
)

// match maps netplan's match onto the NIC match: macaddress is the NIC's
// permanent address (netplan writes networkd's PermanentMACAddress),
// driver one driver name, name a glob on the kernel's name.
func (c *conv) match(ifc *intent.Interface, e entry) bool {
	if e.v.Kind != yaml.MappingNode {
		return c.bad(e, "is not a mapping")
	}
	m := &intent.Match{}
	ok := c.each(e, e.v, func(pe entry) bool { return c.matchKey(m, pe) })
	ifc.Match = m
	return ok
}

func (c *conv) matchKey(m *intent.Match, e entry) bool {
	switch e.k.Value {
	case "macaddress":
		if e.v.Kind != yaml.ScalarNode {
			return c.bad(e, "is not a MAC address")
		}
		m.PermanentMAC = strings.ToLower(e.v.Value)
	case "driver":
		return c.matchDriver(m, e)
	case "name":
		if e.v.Kind != yaml.ScalarNode {
			return c.bad(e, "is not a name or glob")
		}
		m.Name = e.v.Value
	default:
		return c.unsupported(e, e.k, "netagent does not match NICs by this key (only name, macaddress, driver)")
	}
	return true
}

// matchDriver takes one driver name, alone or as a list of one: the
// intent matches a driver by its exact name, not by globs or a choice.
func (c *conv) matchDriver(m *intent.Match, e entry) bool {
	n := e.v
	if n.Kind == yaml.SequenceNode && len(n.Content) == 1 {
		n = n.Content[0]
	}
	if n.Kind != yaml.ScalarNode {
		return c.unsupported(e, e.v, "netagent matches one driver by its exact name, not a choice of drivers")
	}
	if !literal(n.Value) {
		return c.unsupported(e, n, "netagent matches a driver by its exact name, not by a glob")
	}
	m.Driver = n.Value
	return true
}

// literal reports whether a glob names exactly itself.
func literal(glob string) bool { return glob != "" && !strings.ContainsAny(glob, `*?[\`) }

func (c *conv) setName(ifc *intent.Interface, e entry) bool {
	if e.v.Kind != yaml.ScalarNode || e.v.Value == "" {
		return c.bad(e, "is not a name")
	}
	c.setNames[ifc.Name] = e.v.Value
	return true
}

// nicName settles a NIC's name once all its keys are read. With set-name,
// that is the name (and a match finds the NIC to rename). Without it,
// netplan renames nothing: the NIC keeps its kernel name and the netplan
// id is only a label. The intent's match always names the NIC it finds
// (it renames it to the interface's name), so a match by one literal name
// becomes that name, and any other match without set-name is refused.
// Without a match, the id is the kernel's name.
func (c *conv) nicName(dev *device, ifc *intent.Interface) bool {
	if name, ok := c.setNames[dev.name]; ok {
		if ifc.Match == nil { // netplan: set-name needs a match
			e := dev.keys["set-name"]
			return c.bad(e, "needs a match (netplan renames only a matched NIC)")
		}
		ifc.Name = name
		return true
	}
	m := ifc.Match
	if m == nil {
		return true
	}
	if *m == (intent.Match{Name: m.Name}) && literal(m.Name) {
		ifc.Name, ifc.Match = m.Name, nil
		return true
	}
	e := dev.keys["match"]
	r := e.d.refusal(e.k, "network.ethernets."+dev.name+".match",
		"a match without set-name keeps the kernel's name, which netagent cannot express (its match renames the NIC it finds): add set-name, or match one literal name")
	r.Object = dev.name
	c.col.Unsupported(r)
	return false
}

// rename gives every reference to a netplan id (a route's device, a
// port's master, a VLAN's or tunnel's link, a veth's peer, a bond's
// primary) the name its interface has in the intent.
func (c *conv) rename(in *intent.Intent) {
	n := func(s *string) {
		if v, ok := c.names[*s]; ok {
			*s = v
		}
	}
	for i := range in.Routes {
		n(&in.Routes[i].Dev)
	}
	for i := range in.Interfaces {
		ifc := &in.Interfaces[i]
		n(&ifc.Master)
		for _, p := range linkRefs(ifc) {
			n(p)
		}
	}
}

// linkRefs are the fields of ifc that name another interface.
func linkRefs(ifc *intent.Interface) []*string {
	var out []*string
	switch {
	case ifc.VLAN != nil:
		out = append(out, &ifc.VLAN.Parent)
	case ifc.Veth != nil:
		out = append(out, &ifc.Veth.Peer)
	case ifc.Bond != nil:
		out = append(out, &ifc.Bond.Primary)
	case ifc.VXLAN != nil:
		out = append(out, &ifc.VXLAN.Parent)
	case ifc.IP6Tnl != nil:
		out = append(out, &ifc.IP6Tnl.Parent)
	case tunnel(ifc) != nil:
		out = append(out, &tunnel(ifc).Parent)
	}
	return out
}
