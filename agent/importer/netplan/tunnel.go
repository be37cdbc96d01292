package netplan

import (
	"github.com/netagent/netagent/agent/intent"
)

// tunnelKeys are the keys of a tunnel (netplan's tunnels section) netagent
// maps; its type comes from its mode, read first (tunnelType).
var tunnelKeys = map[string]handler{
	"mode":         func(*conv, *intent.Interface, entry) bool { return true },
	"local":        (*conv).tunnelEndpoint,
	"remote":       (*conv).tunnelEndpoint,
	"ttl":          (*conv).tunnelTTL,
	"key":          (*conv).tunnelKey,
	"keys":         (*conv).tunnelKey, // netplan's other name of key
	"id":           (*conv).vxlanID,
	"port":         (*conv).vxlanPort,
	"mark":         (*conv).wgMark,
	"peers":        (*conv).wgPeers,
	"link":         (*conv).tunnelParent,
	"mac-learning": (*conv).vxlanLearning,
}

// tunnelType gives a tunnel its type and section by its mode; false: a
// mode netagent cannot express (refused), or none.
func (c *conv) tunnelType(ifc *intent.Interface, dev *device) bool {
	e, ok := dev.keys["mode"]
	if !ok {
		c.col.Invalid(dev.pos.d.refusal(dev.pos.k, "network.tunnels."+dev.name, "has no mode"))
		return false
	}
	switch e.v.Value {
	case "gre":
		ifc.Type, ifc.GRE = intent.LinkGRE, &intent.Tunnel{}
	case "ipip":
		ifc.Type, ifc.IPIP = intent.LinkIPIP, &intent.Tunnel{}
	case "sit":
		ifc.Type, ifc.SIT = intent.LinkSIT, &intent.Tunnel{}
	case "ip6ip6", "ipip6":
		ifc.Type, ifc.IP6Tnl = intent.LinkIP6Tnl, &intent.IP6Tnl{Mode: intent.IP6TnlMode(e.v.Value)}
	case "vxlan":
		ifc.Type, ifc.VXLAN = intent.LinkVXLAN, &intent.VXLAN{}
	case "wireguard":
		ifc.Type, ifc.Wireguard = intent.LinkWireguard, &intent.Wireguard{}
	default:
		r := e.d.refusal(e.v, "network.tunnels."+dev.name+".mode", "netagent does not import "+e.v.Value+" tunnels")
		r.Object = dev.name
		c.col.Unsupported(r)
		return false
	}
	return true
}

// tunnel is ifc's gre, ipip or sit section (nil for the others).
func tunnel(ifc *intent.Interface) *intent.Tunnel {
	switch {
	case ifc.GRE != nil:
		return ifc.GRE
	case ifc.IPIP != nil:
		return ifc.IPIP
	}
	return ifc.SIT
}

func (c *conv) tunnelEndpoint(ifc *intent.Interface, e entry) bool {
	local := e.k.Value == "local"
	switch {
	case tunnel(ifc) != nil && local:
		tunnel(ifc).Local = e.v.Value
	case tunnel(ifc) != nil:
		tunnel(ifc).Remote = e.v.Value
	case ifc.IP6Tnl != nil && local:
		ifc.IP6Tnl.Local = e.v.Value
	case ifc.IP6Tnl != nil:
		ifc.IP6Tnl.Remote = e.v.Value
	case local:
		ifc.VXLAN.Local = e.v.Value
	default:
		ifc.VXLAN.Remote = e.v.Value
	}
	return true
}

func (c *conv) tunnelParent(ifc *intent.Interface, e entry) bool {
	switch {
	case tunnel(ifc) != nil:
		tunnel(ifc).Parent = e.v.Value
	case ifc.IP6Tnl != nil:
		ifc.IP6Tnl.Parent = e.v.Value
	default:
		ifc.VXLAN.Parent = e.v.Value
	}
	return true
}

func (c *conv) tunnelTTL(ifc *intent.Interface, e entry) bool {
	v, ok := c.number(e, e.v, 0, 255)
	switch {
	case tunnel(ifc) != nil:
		tunnel(ifc).TTL = int(v)
	case ifc.IP6Tnl != nil:
		hl := int(v)
		ifc.IP6Tnl.HopLimit = &hl
	default:
		return c.unsupported(e, e.k, "netagent does not set a vxlan's ttl")
	}
	return ok
}

// tunnelKey is a gre's key, both directions (the mapping form with
// input and output keys is not imported).
func (c *conv) tunnelKey(ifc *intent.Interface, e entry) bool {
	if ifc.Wireguard != nil {
		return c.wgKey(ifc, e)
	}
	if ifc.GRE == nil {
		return c.unsupported(e, e.k, "a key is a gre tunnel's only")
	}
	v, ok := c.number(e, e.v, 1, 1<<32-1)
	ifc.GRE.Key = int(v)
	return ok
}

func (c *conv) vxlanID(ifc *intent.Interface, e entry) bool {
	return c.vxlanNumber(ifc, e, 1<<24-1, func(x *intent.VXLAN, v int) { x.VNI = v })
}

func (c *conv) vxlanPort(ifc *intent.Interface, e entry) bool {
	if ifc.Wireguard != nil {
		v, ok := c.number(e, e.v, 1, 65535)
		ifc.Wireguard.ListenPort = int(v)
		return ok
	}
	return c.vxlanNumber(ifc, e, 65535, func(x *intent.VXLAN, v int) { x.Port = v })
}

// vxlanNumber sets a vxlan's number from 1 to hi.
func (c *conv) vxlanNumber(ifc *intent.Interface, e entry, hi int64, set func(*intent.VXLAN, int)) bool {
	if ifc.VXLAN == nil {
		return c.unsupported(e, e.k, e.k.Value+" is a vxlan's only")
	}
	v, ok := c.number(e, e.v, 1, hi)
	set(ifc.VXLAN, int(v))
	return ok
}

func (c *conv) vxlanLearning(ifc *intent.Interface, e entry) bool {
	if ifc.VXLAN == nil {
		return c.unsupported(e, e.k, "mac-learning is a vxlan's only")
	}
	b, ok := c.boolean(e, e.v)
	ifc.VXLAN.Learning = &b
	return ok
}
