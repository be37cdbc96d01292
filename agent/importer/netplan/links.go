package netplan

import (
	"net/netip"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/netagent/netagent/agent/intent"
)

// ports records each listed interface's master, set once every device is
// made (a port may come before its master).
func (c *conv) ports(ifc *intent.Interface, e entry) bool {
	if e.v.Kind != yaml.SequenceNode {
		return c.bad(e, "is not a list")
	}
	ok := true
	for _, n := range e.v.Content {
		if n.Kind != yaml.ScalarNode {
			ok = c.bad(entry{e.d, e.k, n}, "is not a device's id")
			continue
		}
		c.portRefs = append(c.portRefs, portRef{id: n.Value, master: ifc.Name, at: entry{e.d, e.k, n}})
	}
	return ok
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
			r.To = defaultRoute(r.Via)
		}
		c.routes = append(c.routes, r)
	}
	return ok
}

// routeNotMapped are netplan's route keys the intent's routes have no
// field for.
var routeNotMapped = []string{"congestion-window", "advertised-receive-window"}

// defaultRoute is the default destination of via's family.
func defaultRoute(via string) string {
	if strings.Contains(via, ":") {
		return "::/0"
	}
	return "0.0.0.0/0"
}

// gateway maps the deprecated gateway4 and gateway6: a default route
// through the device, as netplan writes networkd's Gateway=.
func (c *conv) gateway(ifc *intent.Interface, e entry) bool {
	a, err := netip.ParseAddr(e.v.Value)
	if e.v.Kind != yaml.ScalarNode || err != nil || a.Is4() != (e.k.Value == "gateway4") || a.Is4In6() {
		return c.bad(e, "is not an IPv"+e.k.Value[len("gateway"):]+" address")
	}
	c.routes = append(c.routes, intent.Route{To: defaultRoute(e.v.Value), Via: a.String(), Dev: ifc.Name})
	return true
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
			r.Table = intent.TableID(v)
		}
		return ok
	case "mtu":
		v, ok := c.number(e, e.v, 68, 65535)
		r.MTU = uint32(v)
		return ok
	case "type":
		r.Type = intent.RouteType(e.v.Value)
	case "scope":
		r.Scope = intent.Scope(e.v.Value)
	default:
		if slices.Contains(routeNotMapped, e.k.Value) {
			return c.unsupported(e, e.k, "the intent's routes have no such setting")
		}
		return c.bad(entry{e.d, e.k, e.k}, "unknown route key")
	}
	return true
}
