package link

import (
	"fmt"
	"net"

	"github.com/vishvananda/netlink"

	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/internal/netnsx"
	"github.com/netagent/netagent/items"
)

// MaxOthers bounds how many links ReadOthers takes from the namespace:
// they are another writer's, and an import of more is refused.
const MaxOthers = 1 << 14

// ReadOthers reads the links in t's namespace that netagent does not own,
// for an import, as the items that would make them:
//
//   - an Interface of its kind for a link of a kind netagent creates
//     (veth, bridge, bond, vlan, macvlan, vxlan, vrf, dummy, ...), with
//     every setting the kernel reports (no hint masks any);
//   - a physical Interface (its MTU, state and alias) for a link without
//     a kind (a NIC) and for a veth whose peer is in another namespace
//     (the namespace's NIC: a container's uplink);
//   - a Port for every link enslaved to a bond, bridge or vrf that is not
//     netagent's, and its BridgeVLANs when they are not the default;
//   - for a link of any other kind (tun, ifb, ...) and for one whose
//     settings an intent's link of its kind cannot have (the kind's
//     Problem): a physical Interface (it is there, another program made
//     it, and what sits on it is still described) and an items.Foreign
//     whose Why says so;
//   - an items.Foreign for a port of a master that takes none.
//
// The loopback and the tunnel modules' fallback devices (gre0, tunl0,
// sit0, ...) are the kernel's own: left out, or with all the loopback a
// physical Interface and the others Foreign. The links netagent owns, or whose settings it recorded,
// ReadBack describes; they are left out here.
func ReadOthers(t *netnsx.Target, stateDir string, all bool) ([]dg.Item, error) {
	k, err := newKernel(t, stateDir)
	if err != nil {
		return nil, err
	}
	return k.readOthers(all)
}

func (k *kernel) readOthers(all bool) ([]dg.Item, error) {
	r, links, err := k.newReader(nil, true)
	if err != nil {
		return nil, err
	}
	if len(links) > MaxOthers {
		return nil, fmt.Errorf("%d links, more than the %d an import takes", len(links), MaxOthers)
	}
	for _, l := range links {
		if err := r.readOther(l, all); err != nil {
			return nil, err
		}
	}
	return r.out, nil
}

// readOther reads one link for an import (see ReadOthers).
func (r *reader) readOther(l netlink.Link, all bool) error {
	isLo := l.Attrs().Flags&net.FlagLoopback != 0
	if isLo && !all {
		return nil
	}
	if !r.owns(l) && r.st.originalOf(l) == nil {
		if err := r.readOtherInterface(l, isLo, all); err != nil {
			return err
		}
	}
	if err := r.readOtherPort(l); err != nil {
		return err
	}
	return r.readBridgeVLANs(l)
}

func (r *reader) readOtherInterface(l netlink.Link, isLo, all bool) error {
	kind := l.Type()
	if kernelsTunnel(l) {
		if all {
			r.out = append(r.out, &items.Foreign{Kind: items.TypeInterface, Desc: l.Attrs().Name + " kind " + kind,
				Why: "the kernel's own: its tunnel module makes it in every namespace, an intent cannot declare it"})
		}
		return nil
	}
	// A veth whose peer is in another namespace is this one's NIC (a
	// container's uplink): it is there, never made.
	nic := kind == "device" || kind == string(items.KindVeth) && l.Attrs().NetNsID >= 0
	obs, err := r.k.observe(l, r.nameOf, !nic)
	if err != nil {
		return err
	}
	if isLo {
		obs.MTU = 0 // the loopback's own
	}
	why := ""
	switch {
	case !nic && kindOf(l) == "":
		why = "links of kind " + kind + " are not in the intent"
	case obs.Attrs != nil && obs.Attrs.Problem(obs.IfName) != "":
		why = "an intent's " + kind + " cannot have its settings (" + obs.Attrs.Problem(obs.IfName) + ")"
	}
	if why != "" {
		// Described as a link that is there (another program made it),
		// so that what sits on it is still described.
		obs = &items.Interface{IfName: obs.IfName, Kind: items.KindPhysical, MTU: obs.MTU, AdminUp: obs.AdminUp, Alias: obs.Alias}
		r.out = append(r.out, &items.Foreign{Kind: items.TypeInterface, Desc: obs.IfName + " kind " + kind,
			Why: why + ": described as a physical interface, there and not made by netagent"})
	}
	r.out = append(r.out, obs)
	return nil
}

// fallbackTunnels are the devices the tunnel modules make in every
// namespace when they load, by name and kind (items.TunnelFallback and
// the others of the same modules).
var fallbackTunnels = map[string]string{
	"gre0": "gre", "gretap0": "gretap", "erspan0": "erspan", "tunl0": "ipip", "sit0": "sit",
	"ip6tnl0": "ip6tnl", "ip6gre0": "ip6gre", "ip_vti0": "vti", "ip6_vti0": "vti6",
}

// kernelsTunnel reports whether l is a tunnel module's fallback device.
func kernelsTunnel(l netlink.Link) bool { return IsFallbackDevice(l.Attrs().Name, l.Type()) }

// IsFallbackDevice reports whether a link of that name and kind is a
// tunnel module's fallback device (gre0 of kind gre, tunl0 of ipip, ...),
// which the module makes in every namespace and which nobody else can.
func IsFallbackDevice(name, kind string) bool {
	k, ok := fallbackTunnels[name]
	return ok && k == kind
}

// readOtherPort describes l's port of a master that is not netagent's.
func (r *reader) readOtherPort(l netlink.Link) error {
	master, ok := r.byIndex[l.Attrs().MasterIndex]
	if !ok || r.owns(master) {
		return nil
	}
	if !items.TakesPorts(kindOf(master)) {
		r.out = append(r.out, &items.Foreign{Kind: items.TypePort, Desc: l.Attrs().Name + " master " + master.Attrs().Name,
			Why: "a port of a " + master.Type() + " link is not in the intent"})
		return nil
	}
	return r.readPort(l)
}
