package link

import (
	"fmt"
	"net"
	"slices"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netlink/nl"
	"golang.org/x/sys/unix"

	"github.com/netagent/netagent/internal/netnsx"
)

// LoadedLink is one link of another namespace's dump (a snapshot) to
// plant in a FakeKernel with Load.
type LoadedLink struct {
	// Link is the link as a dump returns it: its netlink type, Index,
	// Name, MTU, HardwareAddr, Flags (up), MasterIndex, ParentIndex (a
	// veth's peer, a VLAN's or macvlan's lower link) and the kind's
	// settings the fake models (bridge vlan_filtering, macvlan mode,
	// VXLAN VNI, port, group, local, lower device; bond mode, miimon,
	// min_links, LACP rate, transmit hash policy and primary; VLAN id and
	// protocol; VRF table; a GRE, IPIP, SIT or ip6tnl tunnel's local and
	// remote addresses, lower device (ParentIndex), TTL, path MTU
	// discovery, protocol, encapsulation limit and GRE keys).
	Link netlink.Link
	// Carrier is the link's carrier (lower-up).
	Carrier bool
	// PeerElsewhere: a veth's peer is in another namespace, PeerNetns
	// (under /run/netns; "" when it has no name there), named PeerName
	// ("" when unknown), up when PeerUp.
	PeerElsewhere       bool
	PeerNetns, PeerName string
	PeerUp              bool
	// STP and ForwardDelay (centiseconds) are a bridge's.
	STP          bool
	ForwardDelay uint32
	// PortCost and PortPriority are a bridge port's (0: the kernel's
	// default).
	PortCost     uint32
	PortPriority *uint16
	// Wireguard is a WireGuard device's configuration (nil for another
	// kind).
	Wireguard *LoadedWireguard
	// Fallback: the link is a tunnel module's fallback device
	// (IsFallbackDevice: gre0, gretap0, tunl0, sit0, ...), planted as the
	// module makes it; of the kinds the fake does not model (gretap,
	// erspan, ip6gre, vti) as a device of that kind with no settings.
	Fallback bool
}

// Load plants links, with their indexes, MACs, MTUs and states, in a
// fake that holds lo only (NewFakeKernel), lo's own settings included;
// masters and lower links must be among them. A veth whose peer is not
// among them has its peer in another namespace of the fake's world,
// named after it. Nothing is recorded as written (Take).
func (f *FakeKernel) Load(links []LoadedLink) error {
	if len(f.links) != 1 {
		return fmt.Errorf("loading links: the fake holds %d links, want lo alone", len(f.links))
	}
	pending := slices.Clone(links)
	for len(pending) > 0 {
		var later []LoadedLink
		for _, l := range pending {
			if f.waitsForLower(l.Link) {
				later = append(later, l)
				continue
			}
			if err := f.loadOne(l, links); err != nil {
				return fmt.Errorf("loading link %q: %w", l.Link.Attrs().Name, err)
			}
		}
		if len(later) == len(pending) {
			return fmt.Errorf("loading link %q: its lower link %d is not in the snapshot", later[0].Link.Attrs().Name, later[0].Link.Attrs().ParentIndex)
		}
		pending = later
	}
	return f.loadMasters(links)
}

// waitsForLower reports whether l's lower link is not planted yet.
func (f *FakeKernel) waitsForLower(l netlink.Link) bool {
	switch x := l.(type) {
	case *netlink.Vlan, *netlink.Macvlan, *netlink.IPVlan:
		return f.links[l.Attrs().ParentIndex] == nil
	case *netlink.Vxlan:
		return x.VtepDevIndex != 0 && f.links[x.VtepDevIndex] == nil
	case *netlink.Gretun, *netlink.Iptun, *netlink.Sittun, *netlink.Ip6tnl:
		return l.Attrs().ParentIndex != 0 && f.links[l.Attrs().ParentIndex] == nil
	}
	return false
}

// loadOne builds l as a create would, then gives it the dump's state.
func (f *FakeKernel) loadOne(l LoadedLink, all []LoadedLink) error {
	a := l.Link.Attrs()
	if a.Name == "lo" {
		lo := f.links[1]
		lo.attrs().MTU, lo.attrs().Flags = a.MTU, a.Flags
		return nil
	}
	if f.links[a.Index] != nil || a.Index < 2 {
		return fmt.Errorf("ifindex %d is taken or invalid", a.Index)
	}
	var fl *fakeLink
	var err error
	if l.Fallback {
		if fl, err = loadFallback(l.Link); err != nil {
			return err
		}
	} else if d, ok := l.Link.(*netlink.Device); ok {
		fl = &fakeLink{link: &netlink.Device{LinkAttrs: f.base(&d.LinkAttrs, 1500)}, liveMAC: true, maxMTU: 9000}
	} else if fl, err = f.buildLoaded(l.Link); err != nil {
		return err
	}
	fa := fl.attrs()
	fa.Index, fa.NetNsID, fa.Flags, fa.MTU = a.Index, -1, a.Flags, a.MTU
	fa.HardwareAddr = slices.Clone(a.HardwareAddr)
	fa.Alias = a.Alias
	fl.carrier = l.Carrier
	if _, ok := fl.link.(*netlink.Bridge); ok {
		fl.stp, fl.fwdDelay = l.STP, l.ForwardDelay
	}
	if b, ok := l.Link.(*netlink.Bond); ok {
		loadBond(fl, b, all)
	}
	if fl.tunnel != nil && !l.Fallback {
		loadTunnel(fl, l.Link)
	}
	if l.Wireguard != nil && fl.wg != nil {
		loadWireguard(fl, l.Wireguard)
	}
	if fl.tunnel != nil {
		// A tunnel's device address is its local address, which a dump
		// leaves out when it is any (netlink drops an all-zero address).
		fa.HardwareAddr = nil
		if !fl.tunnel.local.IsUnspecified() {
			fa.HardwareAddr = net.HardwareAddr(slices.Clone(fl.tunnel.local))
		}
	}
	if _, ok := l.Link.(*netlink.Veth); ok {
		fa.ParentIndex = a.ParentIndex
		if l.PeerElsewhere || !slices.ContainsFunc(all, func(o LoadedLink) bool { return o.Link.Attrs().Index == a.ParentIndex && o.Link.Type() == "veth" }) {
			f.plantOutsidePeer(fl, l)
		}
	}
	f.links[a.Index] = fl
	f.next = max(f.next, a.Index+1)
	return nil
}

// loadFallback is the fallback device l of a tunnel module.
func loadFallback(l netlink.Link) (*fakeLink, error) {
	name, kind := l.Attrs().Name, l.Type()
	if !IsFallbackDevice(name, kind) {
		return nil, fmt.Errorf("%s of kind %s is no tunnel module's fallback device", name, kind)
	}
	if _, ok := tunnelOverhead[kind]; ok {
		return newFallbackTunnel(kind, name), nil
	}
	return &fakeLink{link: &netlink.GenericLink{LinkAttrs: netlink.LinkAttrs{Name: name}, LinkType: kind}, maxMTU: 65535}, nil
}

// buildLoaded builds l as a create would, without its MTU: the dump's
// MTU is set after (a VRF's 65575 is above what a create request takes).
func (f *FakeKernel) buildLoaded(l netlink.Link) (*fakeLink, error) {
	a := l.Attrs()
	mtu := a.MTU
	a.MTU = 0
	fl, _, err := f.build(creatable(l))
	a.MTU = mtu
	return fl, err
}

// loadBond gives a bond built from b (which a create request does not
// carry whole) b's LACP rate, transmit hash policy and primary, which the
// kernel keeps by name.
func loadBond(fl *fakeLink, b *netlink.Bond, all []LoadedLink) {
	fb := fl.link.(*netlink.Bond)
	if b.LacpRate >= 0 && b.LacpRate < netlink.BOND_LACP_RATE_UNKNOWN {
		fb.LacpRate = b.LacpRate
	}
	if b.XmitHashPolicy >= 0 && b.XmitHashPolicy < netlink.BOND_XMIT_HASH_POLICY_UNKNOWN {
		fb.XmitHashPolicy = b.XmitHashPolicy
	}
	for _, o := range all {
		if b.Primary > 0 && o.Link.Attrs().Index == b.Primary {
			fl.primary = o.Link.Attrs().Name
		}
	}
}

// loadTunnel gives a tunnel built from l (as a create request, with the
// defaults netlink's request leaves to the kernel) l's TTL, path MTU
// discovery, protocol and encapsulation limit as dumped.
func loadTunnel(fl *fakeLink, l netlink.Link) {
	t := fl.tunnel
	switch x := l.(type) {
	case *netlink.Gretun:
		t.ttl, t.pmtudisc = x.Ttl, x.PMtuDisc
	case *netlink.Iptun:
		t.ttl, t.pmtudisc, t.proto = x.Ttl, x.PMtuDisc, x.Proto
	case *netlink.Sittun:
		t.ttl, t.pmtudisc, t.proto = x.Ttl, x.PMtuDisc, x.Proto
	case *netlink.Ip6tnl:
		t.ttl, t.proto, t.encapLimit = x.Ttl, x.Proto, x.EncapLimit
	}
}

// creatable is l as a create request: a veth's peer gets a placeholder
// name (the peer is planted on its own, and the placeholder dropped); an
// ipvlan has no MAC (the kernel refuses one: its MAC is its parent's,
// which the dump shows and loadOne gives it); a lower link keeps its
// index.
func creatable(l netlink.Link) netlink.Link {
	switch v := l.(type) {
	case *netlink.Veth:
		c := *v
		c.PeerName, c.PeerNamespace = fmt.Sprintf("snp-peer-%d", v.Index%100000), nil
		return &c
	case *netlink.IPVlan:
		c := *v
		c.HardwareAddr = nil
		return &c
	}
	return l
}

// plantOutsidePeer puts a veth's peer in its namespace of the fake's
// world (one of its own when it has no name).
func (f *FakeKernel) plantOutsidePeer(fl *fakeLink, l LoadedLink) {
	nsName, name := l.PeerNetns, l.PeerName
	if nsName == "" {
		nsName = fmt.Sprintf("snapshot-peer-%d", fl.attrs().Index)
	}
	if name == "" {
		name = "peer"
	}
	ns := f.world.byName[nsName]
	if ns == nil {
		ns = f.world.add(nsName)
	}
	peer := &fakeLink{link: &netlink.Veth{LinkAttrs: ns.base(&netlink.LinkAttrs{Name: name, MTU: fl.attrs().MTU}, 1500)}, maxMTU: 65535, liveMAC: true, peerNS: f}
	if l.PeerUp {
		peer.attrs().Flags |= net.FlagUp
	}
	ns.insert(peer)
	fl.peerNS = ns
	peer.attrs().ParentIndex = fl.attrs().Index
	fl.attrs().ParentIndex = peer.attrs().Index
	fl.attrs().NetNsID, peer.attrs().NetNsID = f.nsidOf(ns), ns.nsidOf(f)
}

// loadMasters joins the ports to their masters, then keeps a bridge's
// MTU and MAC as dumped: set by the user when they are not what the
// ports give it.
func (f *FakeKernel) loadMasters(links []LoadedLink) error {
	for _, l := range links {
		a := l.Link.Attrs()
		if a.MasterIndex == 0 {
			continue
		}
		fl, m := f.links[a.Index], f.links[a.MasterIndex]
		if m == nil {
			return fmt.Errorf("loading link %q: its master %d is not in the snapshot", a.Name, a.MasterIndex)
		}
		fl.attrs().MasterIndex = m.attrs().Index
		if m.kind() == "bridge" {
			f.joinBridge(fl, m)
			fl.cost = l.PortCost
			if l.PortPriority != nil {
				fl.bm.priority = *l.PortPriority
			}
		}
	}
	want := map[int]netlink.LinkAttrs{}
	for _, l := range links {
		want[l.Link.Attrs().Index] = *l.Link.Attrs()
	}
	f.refresh()
	for i, fl := range f.links {
		if fl.kind() != "bridge" {
			continue
		}
		w := want[i]
		if fl.attrs().MTU != w.MTU {
			fl.mtuSetByUser, fl.attrs().MTU = true, w.MTU
		}
		if !slices.Equal(fl.attrs().HardwareAddr, w.HardwareAddr) {
			fl.macSetByUser, fl.attrs().HardwareAddr = true, net.HardwareAddr(slices.Clone(w.HardwareAddr))
		}
	}
	f.writes = nil
	return nil
}

// Dump reads every link of t's namespace as Load plants them: the link
// dump, each link's carrier, a bridge's STP and forward delay, a
// WireGuard device's configuration (without its keys) with the key files
// of its link record in stateDir ("": none) that hold them. It writes
// nothing.
func Dump(t *netnsx.Target, stateDir string) ([]LoadedLink, error) {
	list, err := t.NL.LinkList()
	if err != nil {
		return nil, fmt.Errorf("listing links: %w", err)
	}
	raw := rawNL{ns: t.NsHandle()}
	out := make([]LoadedLink, 0, len(list))
	for _, l := range list {
		a := l.Attrs()
		ll := LoadedLink{Link: l, Carrier: a.RawFlags&unix.IFF_LOWER_UP != 0, PeerElsewhere: a.NetNsID >= 0, Fallback: kernelsTunnel(l)}
		if _, ok := l.(*netlink.Veth); ok && ll.PeerElsewhere {
			if err := peerOf(t, &ll); err != nil {
				return nil, fmt.Errorf("reading the peer of %q: %w", a.Name, err)
			}
		}
		if err := portOf(raw, &ll, list); err != nil {
			return nil, fmt.Errorf("reading bridge port %q: %w", a.Name, err)
		}
		if _, ok := l.(*netlink.Bridge); ok {
			info, err := raw.linkInfo(a.Index)
			if err != nil {
				return nil, fmt.Errorf("reading bridge %q: %w", a.Name, err)
			}
			stp, _ := info.dataU32(nl.IFLA_BR_STP_STATE)
			ll.STP = stp != 0
			ll.ForwardDelay, _ = info.dataU32(nl.IFLA_BR_FORWARD_DELAY)
		}
		out = append(out, ll)
	}
	if err := dumpWireguard(t, stateDir, out); err != nil {
		return nil, err
	}
	return out, nil
}

// peerOf finds where a veth's peer is: its namespace's name and its
// name there; up as its carrier tells (or up, when the veth is down).
func peerOf(t *netnsx.Target, ll *LoadedLink) error {
	a := ll.Link.Attrs()
	ns := namedNamespaces{nl: t.NL}
	name, err := ns.namespaceByID(a.NetNsID)
	if err != nil || name == "" {
		return err
	}
	ll.PeerNetns = name
	ll.PeerName, err = ns.linkNameIn(name, a.ParentIndex)
	ll.PeerUp = ll.Carrier || a.Flags&net.FlagUp == 0
	return err
}

// portOf reads a bridge port's cost and priority.
func portOf(raw rawNL, ll *LoadedLink, list []netlink.Link) error {
	a := ll.Link.Attrs()
	if a.MasterIndex == 0 || !slices.ContainsFunc(list, func(m netlink.Link) bool { return m.Attrs().Index == a.MasterIndex && m.Type() == "bridge" }) {
		return nil
	}
	info, err := raw.linkInfo(a.Index)
	if err != nil {
		return err
	}
	ll.PortCost, _ = info.slaveU32(nl.IFLA_BRPORT_COST)
	if p, ok := u16Of(info.slaveData.get(nl.IFLA_BRPORT_PRIORITY)); ok {
		ll.PortPriority = &p
	}
	return nil
}
