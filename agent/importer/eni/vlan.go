package eni

import (
	"strconv"
	"strings"

	"github.com/netagent/netagent/agent/importer"
	"github.com/netagent/netagent/agent/intent"
)

// vlanOptions: an interface with vlan-raw-device, or a dot in its name,
// is an 802.1Q VLAN (ifupdown2's vlan addon).
var vlanOptions = map[string]setter{
	"vlan-raw-device": func(ifc *iface, a []string) string { ifc.vlanParent = a[0]; return "" },
	"vlan-id":         func(ifc *iface, a []string) string { return setInt(&ifc.vlanID, a, 1, 4094, "VLAN id") },
	"vlan-protocol": func(ifc *iface, a []string) string {
		switch p := intent.VLANProtocol(strings.ToLower(a[0])); p {
		case intent.VLAN8021Q:
		case intent.VLAN8021AD:
			ifc.vlanProtocol = p
		default:
			return "invalid vlan-protocol " + strconv.Quote(a[0]) + " (want 802.1q or 802.1ad)"
		}
		return ""
	},
}

func (ifc *iface) isVLAN() bool {
	return ifc.vlanParent != "" || strings.Contains(ifc.name, ".")
}

// vlanOf is ifc's VLAN as ifupdown2 finds it: the parent is vlan-raw-device
// or the name before its last dot (of at most two: eth0.1.100 is on
// eth0.1); the id is vlan-id, or the name's after that dot, or a vlanVID
// name's number. ID 0: not found.
func (ifc *iface) vlanOf() *intent.VLAN {
	parts := strings.SplitN(ifc.name, ".", 3)
	parent, vid := ifc.vlanParent, ""
	switch len(parts) {
	case 2, 3:
		if parent == "" {
			parent = strings.Join(parts[:len(parts)-1], ".")
		}
		vid = parts[len(parts)-1]
	default:
		vid, _ = strings.CutPrefix(ifc.name, "vlan")
	}
	id := ifc.vlanID
	if id == 0 {
		if n, err := strconv.Atoi(vid); err == nil && n >= 1 && n <= 4094 {
			id = n
		}
	}
	return &intent.VLAN{Parent: parent, ID: id, Protocol: ifc.vlanProtocol}
}

// checkVLAN refuses a VLAN whose id is not found (ifupdown2: "could not
// determine vlanid").
func (p *parser) checkVLAN(ifc *iface) {
	if ifc.build(ifc.name).Type == intent.LinkVLAN && ifc.vlanOf().ID == 0 {
		p.c.Invalid(importer.Refusal{Pos: ifc.pos, Key: "iface " + ifc.name, Why: "cannot determine the VLAN id (ifupdown2 takes vlan-id, or NAME.VID, or vlanVID)"})
	}
}

// addSVIs gives each VLAN-aware bridge the VLANs of the VLAN interfaces on
// it (ifupdown2: bridge vlan add vid VID dev BRIDGE self), with the
// kernel's own PVID 1 kept.
func (p *parser) addSVIs(in *intent.Intent) {
	for i := range in.Interfaces {
		v := in.Interfaces[i].VLAN
		br := p.ifaces[parentName(v)]
		if v == nil || br == nil || !br.bridge || !br.vlanAware {
			continue
		}
		b := bridgeOf(in, br.name)
		if b == nil {
			continue
		}
		if b.VLANs == nil {
			b.VLANs = []intent.BridgeVLAN{{VID: 1, PVID: true, Untagged: true}}
		}
		if v.ID != 1 {
			b.VLANs = append(b.VLANs, intent.BridgeVLAN{VID: v.ID})
		}
	}
}

// addParents adds the NICs that VLANs and VXLANs sit on and no stanza
// names (ifupdown2 needs them to exist; they are the host's). One left out
// under SkipUnsupported stays out.
func (p *parser) addParents(in *intent.Intent) {
	have := map[string]bool{}
	for _, ifc := range in.Interfaces {
		have[ifc.Name] = true
	}
	for i := 0; i < len(in.Interfaces); i++ {
		parent := parentName(in.Interfaces[i].VLAN)
		if v := in.Interfaces[i].VXLAN; v != nil {
			parent = v.Parent
		}
		if parent != "" && !have[parent] && p.ifaces[parent] == nil {
			have[parent] = true
			in.Interfaces = append(in.Interfaces, intent.Interface{Name: parent, Type: intent.LinkPhysical})
		}
	}
}

func parentName(v *intent.VLAN) string {
	if v == nil {
		return ""
	}
	return v.Parent
}

// bridgeOf is the bridge section of the intent's interface name.
func bridgeOf(in *intent.Intent, name string) *intent.Bridge {
	for i := range in.Interfaces {
		if in.Interfaces[i].Name == name {
			return in.Interfaces[i].Bridge
		}
	}
	return nil
}
