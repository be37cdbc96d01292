package netplan

import (
	"net/netip"

	"go.yaml.in/yaml/v3"

	"github.com/netagent/netagent/agent/intent"
)

// prefix is a bare address as its host prefix (netplan allows both).
func prefix(s string) string {
	if a, err := netip.ParseAddr(s); err == nil {
		return netip.PrefixFrom(a, a.BitLen()).String()
	}
	return s
}

// offloads are netplan's offload keys and the ethtool feature each turns
// on or off (networkd's .link keys of the same meaning).
var offloads = map[string]string{
	"receive-checksum-offload":     "rx",
	"transmit-checksum-offload":    "tx",
	"tcp-segmentation-offload":     "tso",
	"tcp6-segmentation-offload":    "tx-tcp6-segmentation",
	"generic-segmentation-offload": "gso",
	"generic-receive-offload":      "gro",
	"large-receive-offload":        "lro",
}

// offload sets the ethtool feature of an offload key.
func (c *conv) offload(ifc *intent.Interface, e entry) bool {
	on, ok := c.boolean(e, e.v)
	if ifc.Ethtool == nil {
		ifc.Ethtool = &intent.Ethtool{}
	}
	if ifc.Ethtool.Features == nil {
		ifc.Ethtool.Features = map[string]bool{}
	}
	ifc.Ethtool.Features[offloads[e.k.Value]] = on
	return ok
}

// wakeonlan true is Wake-on-LAN by magic packet; false, netplan's
// default, leaves the NIC's setting alone (netplan writes nothing).
func (c *conv) wakeonlan(ifc *intent.Interface, e entry) bool {
	on, ok := c.boolean(e, e.v)
	if on {
		if ifc.Ethtool == nil {
			ifc.Ethtool = &intent.Ethtool{}
		}
		ifc.Ethtool.WakeOnLan = []intent.WakeOnLanMode{"magic"}
	}
	return ok
}

func (c *conv) vrfTable(ifc *intent.Interface, e entry) bool {
	v, ok := c.number(e, e.v, 1, 1<<32-1)
	ifc.VRF.Table = intent.TableID(v)
	return ok
}

func (c *conv) vethPeer(ifc *intent.Interface, e entry) bool {
	ifc.Veth.Peer = e.v.Value
	return true
}

// routingPolicy maps a device's rules (from, to, table, priority, mark)
// onto the intent's rules.
func (c *conv) routingPolicy(ifc *intent.Interface, e entry) bool {
	if e.v.Kind != yaml.SequenceNode {
		return c.bad(e, "is not a list")
	}
	ok := true
	for _, rn := range e.v.Content {
		r := intent.Rule{}
		ok = c.each(e, rn, func(pe entry) bool { return c.ruleKey(&r, pe) }) && ok
		if r.Priority == 0 { // the kernel's choice: one below the last it chose
			c.autoPrio++
			r.Priority = 32766 - c.autoPrio
		}
		r.From, r.To = prefix(r.From), prefix(r.To)
		c.rules = append(c.rules, r)
	}
	return ok
}

func (c *conv) ruleKey(r *intent.Rule, e entry) bool {
	switch e.k.Value {
	case "from":
		r.From = e.v.Value
	case "to":
		r.To = e.v.Value
	case "table", "priority", "mark":
		v, ok := c.number(e, e.v, 0, 1<<32-1)
		switch e.k.Value {
		case "table":
			r.Table = intent.TableID(v)
		case "priority":
			r.Priority = uint32(v)
		default:
			r.FwMark = uint32(v)
		}
		return ok
	default:
		return c.unsupported(e, e.k, "netagent does not import this rule key")
	}
	return true
}
