package render

import (
	"maps"
	"slices"

	"github.com/netagent/netagent/agent/intent"
	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/items"
)

// ToIntent turns items (typically read back from the kernel) into an
// intent in the format's own schema, so that `netagent show --json` prints
// a document that Parse and Validate accept and that, applied, describes
// the same objects. It is the inverse of Render: Render(ToIntent(Render(x)))
// renders the same items as Render(x).
//
//   - Interface items become interfaces; Port items their master; Address
//     items their addresses. An external Link becomes a physical interface
//     (state down when it is down), so that everything that names it is
//     valid; "lo" only when something names it.
//   - Of a veth pair whose two ends are both items, the end that carries
//     no master and no address (or, if both or neither do, the one whose
//     name sorts last) is left out: the other end creates it.
//   - Defaults are left out where the intent has a spelling for "default"
//     (table main, an IPv6 metric of 1024, the route scope `ip route`
//     picks, VXLAN port 4789, learning on, ...), and options that the
//     intent does not allow in a bond's mode are dropped.
//   - Two iptables chains of the same table and name, in ipv4 and ipv6,
//     with the same jump and rules, become one chain of family "both".
//   - An interface's IPv6 sysctls that an ipv6 acceptRA section renders
//     become that section (ipv6ToIntent).
//
// Items of other types are ignored. The output is sorted by name, so the
// same items give the same document.
func ToIntent(list []dg.Item) *intent.Intent {
	inv := newInverter(list)
	out := &intent.Intent{Version: intent.Version}
	for _, s := range sections {
		s.toIntent(inv, out)
	}
	ipv6ToIntent(out) // ipv6.go: the sysctls an ipv6 section renders
	return out
}

// inverter holds the items of one ToIntent, sorted by ref.
type inverter struct {
	sorted []dg.Item
	ifaces map[string]*items.Interface
	links  map[string]*items.Link
	ports  map[string]*items.Port
	bvlans map[string]*items.BridgeVLANs
	ethtl  map[string]*items.Ethtool
	addrs  map[string][]string
	// named holds the interface names that other items refer to.
	named map[string]bool
}

func newInverter(list []dg.Item) *inverter {
	inv := &inverter{
		sorted: slices.Clone(list),
		ifaces: map[string]*items.Interface{}, links: map[string]*items.Link{},
		ports: map[string]*items.Port{}, bvlans: map[string]*items.BridgeVLANs{}, ethtl: map[string]*items.Ethtool{}, addrs: map[string][]string{}, named: map[string]bool{},
	}
	slices.SortStableFunc(inv.sorted, func(a, b dg.Item) int { return dg.Ref(a).Compare(dg.Ref(b)) })
	for _, it := range inv.sorted {
		inv.index(it)
	}
	return inv
}

// index files one item of the interfaces section and notes the interface
// names any item refers to (section.refs).
func (inv *inverter) index(it dg.Item) {
	switch it := it.(type) {
	case *items.Interface:
		inv.ifaces[it.IfName] = it
		inv.name(items.ParentOf(it))
	case *items.Link:
		inv.links[it.IfName] = it
	case *items.Port:
		inv.ports[it.IfName] = it
		inv.name(it.IfName, it.Master)
	case *items.BridgeVLANs:
		inv.bvlans[it.IfName] = it
	case *items.Ethtool:
		inv.ethtl[it.Interface] = it
		inv.name(it.Interface)
	case *items.Address:
		inv.addrs[it.Dev] = append(inv.addrs[it.Dev], intent.FormatAddress(it.Prefix, it.Peer))
		inv.name(it.Dev)
	}
	for _, s := range sections {
		if s.refs != nil {
			inv.name(s.refs(it)...)
		}
	}
}

func (inv *inverter) name(names ...string) {
	for _, n := range names {
		if n != "" {
			inv.named[n] = true
		}
	}
}

// interfaces builds the interface list: the Interface items (less the
// redundant veth ends), then the Links that no Interface item describes,
// then any name a port or address needs that neither gave, sorted by name.
func (inv *inverter) interfaces() []intent.Interface {
	byName := map[string]*intent.Interface{}
	for name, it := range inv.ifaces {
		if !inv.redundantVethEnd(it) {
			byName[name] = interfaceToIntent(it)
		}
	}
	for name, l := range inv.links {
		if _, ok := byName[name]; ok || inv.isPeerOfKept(name, byName) || (name == "lo" && !inv.named[name]) {
			continue
		}
		byName[name] = &intent.Interface{Name: name, Type: intent.LinkPhysical, State: stateOf(l.AdminUp)}
	}
	for name := range inv.named {
		if _, ok := byName[name]; !ok && !inv.isPeerOfKept(name, byName) {
			byName[name] = &intent.Interface{Name: name, Type: intent.LinkPhysical}
		}
	}
	out := make([]intent.Interface, 0, len(byName))
	for _, name := range slices.Sorted(maps.Keys(byName)) {
		ifc := byName[name]
		if p, ok := inv.ports[name]; ok {
			ifc.Master = p.Master
		}
		inv.bridgePortToIntent(ifc, inv.ports[name], inv.bvlans[name])
		ifc.Ethtool = ethtoolToIntent(inv.ethtl[name]) // ethtool.go
		ifc.Addresses = inv.addrs[name]
		out = append(out, *ifc)
	}
	return out
}

// redundantVethEnd reports whether it is the end of a veth pair to leave
// out because its peer, also an item, is kept and creates it.
func (inv *inverter) redundantVethEnd(it *items.Interface) bool {
	name := items.LocalPeer(it)
	if name == "" {
		return false
	}
	peer, ok := inv.ifaces[name]
	if !ok || items.LocalPeer(peer) != it.IfName {
		return false
	}
	mine, theirs := inv.configured(it.IfName), inv.configured(peer.IfName)
	if mine != theirs {
		return theirs
	}
	return it.IfName > peer.IfName
}

// configured reports whether an interface has a master or addresses.
func (inv *inverter) configured(name string) bool {
	_, port := inv.ports[name]
	return port || len(inv.addrs[name]) > 0
}

// isPeerOfKept reports whether name is the peer of a kept veth.
func (inv *inverter) isPeerOfKept(name string, kept map[string]*intent.Interface) bool {
	for _, ifc := range kept {
		if ifc.Veth != nil && ifc.Veth.PeerNetns == "" && ifc.Veth.Peer == name {
			return true
		}
	}
	return false
}

func stateOf(up bool) intent.LinkState {
	if up {
		return ""
	}
	return intent.StateDown
}
