package netplan

import (
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/netagent/netagent/agent/intent"
)

// match maps netplan's match (macaddress, driver, name) onto the NIC
// match; without set-name, a literal match.name is the interface's name.
func (c *conv) match(ifc *intent.Interface, e entry) bool {
	m := &intent.Match{}
	ok := true
	for _, p := range pairs(e.v) {
		switch p.k.Value {
		case "macaddress":
			m.MAC = strings.ToLower(p.v.Value)
		case "driver":
			m.Driver = p.v.Value
		case "name":
			m.Name = p.v.Value
		default:
			ok = c.unsupported(entry{e.d, p.k, p.v}, p.k, "netagent does not match NICs by this key") && ok
		}
	}
	if m.Name != "" && !strings.ContainsAny(m.Name, "*?[") && ifc.Match == nil && m.MAC == "" && m.Driver == "" {
		ifc.Name = m.Name // netplan's id is a label: the NIC keeps its name
		return ok
	}
	ifc.Match = m
	return ok
}

func (c *conv) setName(ifc *intent.Interface, e entry) bool {
	ifc.Name = e.v.Value
	return true
}

// ports records each listed interface's master, set once every device is
// made (a port may come before its master).
func (c *conv) ports(ifc *intent.Interface, e entry) bool {
	names, ok := c.scalars(e, e.v)
	for _, n := range names {
		c.masters[n] = ifc.Name
	}
	return ok
}

func (c *conv) bondParameters(ifc *intent.Interface, e entry) bool {
	ifc.Bond = &intent.Bond{}
	return c.each(e, e.v, func(pe entry) bool { return c.bondParameter(ifc.Bond, pe) })
}

func (c *conv) bondParameter(b *intent.Bond, e entry) bool {
	switch e.k.Value {
	case "mode":
		b.Mode = intent.BondMode(e.v.Value)
	case "lacp-rate":
		b.LACPRate = intent.LACPRate(e.v.Value)
	case "transmit-hash-policy":
		b.XmitHashPolicy = intent.XmitHashPolicy(e.v.Value)
	case "primary":
		b.Primary = e.v.Value
	case "mii-monitor-interval", "min-links":
		v, ok := c.number(e, e.v, 0, 1<<31-1)
		if e.k.Value == "min-links" {
			b.MinLinks = int(v)
		} else {
			b.MIIMon = int(v)
		}
		return ok
	default:
		return c.unsupported(e, e.k, "netagent does not import this bond parameter")
	}
	return true
}

func (c *conv) bridgeParameters(ifc *intent.Interface, e entry) bool {
	ifc.Bridge = &intent.Bridge{}
	return c.each(e, e.v, func(pe entry) bool { return c.bridgeParameter(ifc.Bridge, pe) })
}

func (c *conv) bridgeParameter(br *intent.Bridge, e entry) bool {
	switch e.k.Value {
	case "stp":
		b, ok := c.boolean(e, e.v)
		br.STP = b
		return ok
	case "forward-delay":
		v, ok := c.number(e, e.v, 0, 30)
		br.ForwardDelay = int(v)
		return ok
	}
	return c.unsupported(e, e.k, "netagent does not import this bridge parameter")
}

func (c *conv) vlanID(ifc *intent.Interface, e entry) bool {
	v, ok := c.number(e, e.v, 1, 4094)
	ifc.VLAN.ID = int(v)
	return ok
}

func (c *conv) vlanLink(ifc *intent.Interface, e entry) bool {
	ifc.VLAN.Parent = e.v.Value
	return true
}

// routesKey maps a device's routes (to, via, metric, table, on-link,
// type, scope, from) onto the intent's routes through the device.
func (c *conv) routesKey(ifc *intent.Interface, e entry) bool {
	if e.v.Kind != yaml.SequenceNode {
		return c.bad(e, "is not a list")
	}
	ok := true
	for _, rn := range e.v.Content {
		r := intent.Route{Dev: ifc.Name}
		ok = c.each(e, rn, func(pe entry) bool { return c.routeKey(&r, pe) }) && ok
		if r.To == "default" {
			r.To = "0.0.0.0/0"
			if strings.Contains(r.Via, ":") {
				r.To = "::/0"
			}
		}
		c.routes = append(c.routes, r)
	}
	return ok
}

func (c *conv) routeKey(r *intent.Route, e entry) bool {
	switch e.k.Value {
	case "to":
		r.To = e.v.Value
	case "via":
		r.Via = e.v.Value
	case "from":
		r.Src = e.v.Value
	case "on-link":
		b, ok := c.boolean(e, e.v)
		r.OnLink = b
		return ok
	case "metric", "table":
		v, ok := c.number(e, e.v, 0, 1<<32-1)
		if e.k.Value == "metric" {
			r.Metric = uint32(v)
		} else {
			r.Table = uint32(v)
		}
		return ok
	case "type":
		r.Type = intent.RouteType(e.v.Value)
	case "scope":
		r.Scope = intent.Scope(e.v.Value)
	default:
		return c.unsupported(e, e.k, "netagent does not import this route key")
	}
	return true
}
