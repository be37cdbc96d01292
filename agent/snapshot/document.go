package snapshot

import (
	"net"
	"net/netip"
	"slices"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netlink/nl"

	"github.com/netagent/netagent/configurators"
	"github.com/netagent/netagent/configurators/ethtool"
	"github.com/netagent/netagent/configurators/l3"
	"github.com/netagent/netagent/configurators/link"
	"github.com/netagent/netagent/configurators/nftables"
	"github.com/netagent/netagent/internal/statefile"
	"github.com/netagent/netagent/items"
)

// Version is the document format's version: 2 holds nf_tables
// (Nftables); a plan against a version 1 document (none) would be wrong.
const Version = 2

// Document is a namespace's state: its kernel objects and netagent's
// records in its state directory.
type Document struct {
	Version  int      `json:"version"`
	Netns    string   `json:"netns"`
	Identity Identity `json:"identity"`
	Links    []Link   `json:"links"`
	// Addresses, Routes (every table) and Rules, Neighbours: the l3
	// objects; a route or rule is the kernel's dump message (base64).
	Addresses  []Address   `json:"addresses"`
	Routes     [][]byte    `json:"routes"`
	Rules      [][]byte    `json:"rules"`
	Neighbours []Neighbour `json:"neighbours"`
	// IPTables is iptables-save's text per family ("ipv4", "ipv6").
	IPTables map[string]string `json:"iptables"`
	// Sysctls are the files of /proc/sys/net (path → value).
	Sysctls map[string]string `json:"sysctls"`
	// Records are the state directory's files netagent reads (its
	// ownership records), by path inside it.
	Records []Record `json:"records"`
	// Nftables are nf_tables' tables: netagent's decoded as its
	// configurator decodes them, others' as plan's clashes and warnings
	// read them (nftables.State).
	Nftables *nftables.State `json:"nftables"`
}

// Identity is the namespace's identity in the state files.
type Identity struct {
	BootID string `json:"bootId"`
	Netns  string `json:"netns"`
	NsID   string `json:"nsId"`
}

// Link is one link, netagent's or another's.
type Link struct {
	Index int    `json:"index"`
	Name  string `json:"name"`
	// Kind is loopback, physical, bridge, veth, macvlan, vxlan, dummy,
	// bond, vlan, vrf, gre, ipip, sit, ip6tnl, ipvlan, wireguard, a tunnel module's
	// fallback device's kind (Fallback), or another kind's name (which a
	// load refuses).
	Kind    string `json:"kind"`
	MTU     int    `json:"mtu"`
	MAC     string `json:"mac,omitempty"`
	Alias   string `json:"alias,omitempty"`
	Up      bool   `json:"up"`
	Carrier bool   `json:"carrier"`
	Master  int    `json:"master,omitempty"`
	// Port is a bridge port's settings.
	Port *Port `json:"port,omitempty"`
	// Parent is a veth's peer's ifindex, a macvlan's or VLAN's lower
	// link's, a tunnel's lower device's (0: none).
	Parent int `json:"parent,omitempty"`
	// PeerElsewhere: a veth's peer is in another namespace: PeerNetns
	// (its name under /run/netns, "" when it has none), as PeerName, up
	// when PeerUp.
	PeerElsewhere bool     `json:"peerElsewhere,omitempty"`
	PeerNetns     string   `json:"peerNetns,omitempty"`
	PeerName      string   `json:"peerName,omitempty"`
	PeerUp        bool     `json:"peerUp,omitempty"`
	Bridge        *Bridge  `json:"bridge,omitempty"`
	Macvlan       *Macvlan `json:"macvlan,omitempty"`
	Vxlan         *Vxlan   `json:"vxlan,omitempty"`
	Bond          *Bond    `json:"bond,omitempty"`
	Vlan          *Vlan    `json:"vlan,omitempty"`
	Vrf           *Vrf     `json:"vrf,omitempty"`
	Tunnel        *Tunnel  `json:"tunnel,omitempty"`
	// Ipvlan and Wireguard are an ipvlan's and a WireGuard device's
	// settings (document_wireguard.go).
	Ipvlan    *Ipvlan    `json:"ipvlan,omitempty"`
	Wireguard *Wireguard `json:"wireguard,omitempty"`
	// Fallback: a tunnel module's own device (gre0 of kind gre, gretap0,
	// erspan0, tunl0, sit0, ip6tnl0, ip6gre0, ip_vti0, ip6_vti0), which
	// the module makes in every namespace; it has no settings here.
	Fallback bool `json:"fallback,omitempty"`
	// Ethtool is what the link's driver answers to ethtool; nil when it
	// answers nothing.
	Ethtool *Ethtool `json:"ethtool,omitempty"`
}

// Ethtool is a link's ethtool features (the names of those on now, of
// those the driver lets the user change, of those the kernel reports
// fixed) and the groups of settings its driver answers, by name
// (channels, rings, coalesce, pause, link, wake-on-lan).
type Ethtool struct {
	Active     []string                `json:"active"`
	Changeable []string                `json:"changeable"`
	Fixed      []string                `json:"fixed"`
	Groups     map[string]EthtoolGroup `json:"groups"`
}

// EthtoolGroup is one group's values: current, maxima, and set-valued
// settings with the values allowed (link: "advertise").
type EthtoolGroup struct {
	Cur     map[string]uint32   `json:"cur,omitempty"`
	Max     map[string]uint32   `json:"max,omitempty"`
	Sets    map[string][]string `json:"sets,omitempty"`
	Allowed map[string][]string `json:"allowed,omitempty"`
}

// Port is a bridge port's cost and priority.
type Port struct {
	Cost     uint32  `json:"cost"`
	Priority *uint16 `json:"priority,omitempty"`
}

// Bridge is a bridge's settings.
type Bridge struct {
	VLANFiltering bool `json:"vlanFiltering"`
	STP           bool `json:"stp"`
	// ForwardDelay is in centiseconds, as the kernel keeps it.
	ForwardDelay uint32 `json:"forwardDelay"`
}

// Macvlan is a macvlan's settings.
type Macvlan struct {
	Mode string `json:"mode"` // private, vepa, bridge, passthru, source
}

// Vxlan is a VXLAN's settings.
type Vxlan struct {
	VNI      int    `json:"vni"`
	Port     int    `json:"port"`
	Group    string `json:"group,omitempty"`
	Local    string `json:"local,omitempty"`
	Dev      int    `json:"dev,omitempty"`
	Learning bool   `json:"learning"`
}

// Bond is a bond's settings, named as the kernel names them (mode
// "balance-rr", "active-backup", "802.3ad", ...; LACP rate "slow",
// "fast"; transmit hash policy "layer2", "layer3+4", ...); Primary is its
// primary port's ifindex (0: none).
type Bond struct {
	Mode           string `json:"mode"`
	Miimon         int    `json:"miimon"`
	MinLinks       int    `json:"minLinks"`
	LacpRate       string `json:"lacpRate,omitempty"`
	XmitHashPolicy string `json:"xmitHashPolicy,omitempty"`
	Primary        int    `json:"primary,omitempty"`
}

// Vlan is a VLAN's id and protocol ("802.1q", "802.1ad"); its lower
// link is the Link's Parent.
type Vlan struct {
	ID       int    `json:"id"`
	Protocol string `json:"protocol"`
}

// Vrf is a VRF's routing table.
type Vrf struct {
	Table uint32 `json:"table"`
}

// Tunnel is a GRE, IPIP, SIT or ip6tnl tunnel's settings: its local and
// remote addresses ("": any), TTL (0: inherit), path MTU discovery (1:
// on; not of ip6tnl), the inner protocol (IPPROTO_*: ipip, sit, ip6tnl),
// ip6tnl's encapsulation limit and GRE's input and output keys (0: none).
type Tunnel struct {
	Local      string `json:"local,omitempty"`
	Remote     string `json:"remote,omitempty"`
	TTL        uint8  `json:"ttl"`
	PMTUDisc   uint8  `json:"pmtudisc,omitempty"`
	Proto      uint8  `json:"proto,omitempty"`
	EncapLimit uint8  `json:"encapLimit,omitempty"`
	IKey       uint32 `json:"ikey,omitempty"`
	OKey       uint32 `json:"okey,omitempty"`
}

// Address is one address, on the link of that name.
type Address struct {
	Dev    string `json:"dev"`
	Prefix string `json:"prefix"`
	Peer   string `json:"peer,omitempty"`
	Label  string `json:"label,omitempty"`
	Scope  uint8  `json:"scope"`
	Flags  uint32 `json:"flags"`
	Proto  uint8  `json:"proto"`
}

// Neighbour is one neighbour entry.
type Neighbour struct {
	Dev   string `json:"dev"`
	IP    string `json:"ip"`
	MAC   string `json:"mac,omitempty"`
	State uint16 `json:"state"`
	Flags uint8  `json:"flags"`
	Proto uint8  `json:"proto"`
}

// Record is one file of the state directory.
type Record struct {
	Path    string `json:"path"`
	Content []byte `json:"content"`
}

var macvlanModes = map[netlink.MacvlanMode]string{
	netlink.MACVLAN_MODE_PRIVATE: "private", netlink.MACVLAN_MODE_VEPA: "vepa", netlink.MACVLAN_MODE_BRIDGE: "bridge",
	netlink.MACVLAN_MODE_PASSTHRU: "passthru", netlink.MACVLAN_MODE_SOURCE: "source",
}

var familyNames = map[items.Family]string{items.FamilyIPv4: "ipv4", items.FamilyIPv6: "ipv6"}

// fromKernel is the document of s.
func fromKernel(netns string, s *configurators.KernelState) *Document {
	d := &Document{Version: Version, Netns: netns, Identity: Identity(s.Identity), Sysctls: s.Sysctls,
		IPTables: map[string]string{}, Routes: s.L3.RouteMsgs, Rules: s.L3.RuleMsgs, Nftables: s.Nft}
	for _, l := range s.Links {
		x := linkOf(l)
		if n := s.Ethtool[x.Name]; n != nil {
			x.Ethtool = ethtoolOf(n)
		}
		d.Links = append(d.Links, x)
	}
	for _, a := range s.L3.Addresses {
		x := Address{Dev: a.Dev, Prefix: a.Prefix.String(), Label: a.Label, Scope: a.Scope, Flags: a.Flags, Proto: a.Proto}
		if a.Peer.IsValid() {
			x.Peer = a.Peer.String()
		}
		d.Addresses = append(d.Addresses, x)
	}
	for _, n := range s.L3.Neighbours {
		d.Neighbours = append(d.Neighbours, Neighbour{Dev: n.Dev, IP: n.IP.String(), MAC: macString(n.MAC), State: n.State, Flags: n.Flags, Proto: n.Proto})
	}
	for fam, save := range s.IPTables {
		d.IPTables[familyNames[fam]] = save
	}
	return d
}

func macString(m net.HardwareAddr) string {
	if len(m) == 0 {
		return ""
	}
	return m.String()
}

// linkOf is the document's link of a dumped one.
func linkOf(l link.LoadedLink) Link {
	a := l.Link.Attrs()
	x := Link{Index: a.Index, Name: a.Name, Kind: l.Link.Type(), MTU: a.MTU, MAC: macString(a.HardwareAddr), Alias: a.Alias,
		Up: a.Flags&net.FlagUp != 0, Carrier: l.Carrier, Master: a.MasterIndex, Fallback: l.Fallback}
	if l.PortCost != 0 || l.PortPriority != nil {
		x.Port = &Port{Cost: l.PortCost, Priority: l.PortPriority}
	}
	if l.Fallback {
		x.MAC = "" // a tunnel's device address is its local address (none), not a MAC
		return x
	}
	switch v := l.Link.(type) {
	case *netlink.Device:
		x.Kind = "physical"
		if a.Flags&net.FlagLoopback != 0 {
			x.Kind = "loopback"
		}
	case *netlink.Veth:
		x.Parent, x.PeerElsewhere, x.PeerNetns, x.PeerName, x.PeerUp = a.ParentIndex, l.PeerElsewhere, l.PeerNetns, l.PeerName, l.PeerUp
	case *netlink.Bridge:
		x.Bridge = &Bridge{VLANFiltering: v.VlanFiltering != nil && *v.VlanFiltering, STP: l.STP, ForwardDelay: l.ForwardDelay}
	case *netlink.Macvlan:
		x.Parent = a.ParentIndex
		x.Macvlan = &Macvlan{Mode: macvlanModes[v.Mode]}
	case *netlink.Bond:
		x.Bond = bondOf(v)
	case *netlink.Vlan:
		x.Parent = a.ParentIndex
		x.Vlan = &Vlan{ID: v.VlanId, Protocol: v.VlanProtocol.String()}
	case *netlink.Vrf:
		x.Vrf = &Vrf{Table: v.Table}
	case *netlink.IPVlan:
		x.Parent = a.ParentIndex
		mode, flag := link.IpvlanNames(v)
		x.Ipvlan = &Ipvlan{Mode: mode, Flag: flag}
	case *netlink.Wireguard:
		x.MAC = "" // ARPHRD_NONE
		if l.Wireguard != nil {
			x.Wireguard = wireguardOf(l.Wireguard)
		}
	case *netlink.Gretun, *netlink.Iptun, *netlink.Sittun, *netlink.Ip6tnl:
		x.Parent, x.MAC, x.Tunnel = a.ParentIndex, "", tunnelOf(v) // a tunnel's device address is its local address
	case *netlink.Vxlan:
		x.Vxlan = &Vxlan{VNI: v.VxlanId, Port: v.Port, Dev: v.VtepDevIndex, Learning: v.Learning}
		if len(v.Group) != 0 {
			x.Vxlan.Group = v.Group.String()
		}
		if len(v.SrcAddr) != 0 {
			x.Vxlan.Local = v.SrcAddr.String()
		}
	}
	return x
}

// kernelState is the fakes' state of a checked document.
func (d *Document) kernelState() *configurators.KernelState {
	s := &configurators.KernelState{Identity: statefile.NsIdentity(d.Identity), Sysctls: d.Sysctls, IPTables: map[items.Family]string{},
		L3: l3.LoadedState{RouteMsgs: d.Routes, RuleMsgs: d.Rules}, Nft: d.Nftables}
	s.Ethtool = map[string]*ethtool.FakeNIC{}
	for i := range d.Links {
		l := &d.Links[i]
		s.Links = append(s.Links, l.loaded())
		if l.Ethtool != nil {
			s.Ethtool[l.Name] = l.Ethtool.nic(l.Index)
		}
	}
	for _, a := range d.Addresses {
		p, _ := netip.ParsePrefix(a.Prefix)
		peer, _ := netip.ParseAddr(a.Peer)
		s.L3.Addresses = append(s.L3.Addresses, l3.LoadedAddress{Dev: a.Dev, Prefix: p, Peer: peer, Label: a.Label, Scope: a.Scope, Flags: a.Flags, Proto: a.Proto})
	}
	for _, n := range d.Neighbours {
		ip, _ := netip.ParseAddr(n.IP)
		mac, _ := parseLLAddr(n.MAC)
		s.L3.Neighbours = append(s.L3.Neighbours, l3.LoadedNeighbour{Dev: n.Dev, IP: ip, MAC: mac, State: n.State, Flags: n.Flags, Proto: n.Proto})
	}
	for fam, name := range familyNames {
		if save, ok := d.IPTables[name]; ok {
			s.IPTables[fam] = save
		}
	}
	return s
}

// loaded is the fake's link of a checked document link.
func (l *Link) loaded() link.LoadedLink {
	mac, _ := net.ParseMAC(l.MAC)
	a := netlink.LinkAttrs{Index: l.Index, Name: l.Name, MTU: l.MTU, HardwareAddr: mac, Alias: l.Alias, MasterIndex: l.Master, ParentIndex: l.Parent, NetNsID: -1}
	if l.Up {
		a.Flags |= net.FlagUp
	}
	out := link.LoadedLink{Carrier: l.Carrier, PeerElsewhere: l.PeerElsewhere, PeerNetns: l.PeerNetns, PeerName: l.PeerName, PeerUp: l.PeerUp,
		Fallback: l.Fallback}
	if l.Port != nil {
		out.PortCost, out.PortPriority = l.Port.Cost, l.Port.Priority
	}
	switch {
	case l.Fallback:
		out.Link = &netlink.GenericLink{LinkAttrs: a, LinkType: l.Kind}
		return out
	}
	switch l.Kind {
	case "loopback", "physical":
		out.Link = &netlink.Device{LinkAttrs: a}
	case "veth":
		out.Link = &netlink.Veth{LinkAttrs: a}
	case "dummy":
		out.Link = &netlink.Dummy{LinkAttrs: a}
	case "bridge":
		vf := l.Bridge.VLANFiltering
		out.Link = &netlink.Bridge{LinkAttrs: a, VlanFiltering: &vf}
		out.STP, out.ForwardDelay = l.Bridge.STP, l.Bridge.ForwardDelay
	case "macvlan":
		out.Link = &netlink.Macvlan{LinkAttrs: a, Mode: modeOf(l.Macvlan.Mode)}
	case "bond":
		out.Link = l.Bond.link(a)
	case "vlan":
		out.Link = &netlink.Vlan{LinkAttrs: a, VlanId: l.Vlan.ID, VlanProtocol: netlink.StringToVlanProtocol(l.Vlan.Protocol)}
	case "vrf":
		out.Link = &netlink.Vrf{LinkAttrs: a, Table: l.Vrf.Table}
	case "ipvlan":
		mode, flag, _ := link.IpvlanOf(l.Ipvlan.Mode, l.Ipvlan.Flag)
		out.Link = &netlink.IPVlan{LinkAttrs: a, Mode: mode, Flag: flag}
	case "wireguard":
		out.Link, out.Wireguard = &netlink.Wireguard{LinkAttrs: a}, l.Wireguard.loaded()
	case "gre", "ipip", "sit", "ip6tnl":
		out.Link = l.Tunnel.link(l.Kind, a)
	case "vxlan":
		v := l.Vxlan
		out.Link = &netlink.Vxlan{LinkAttrs: a, VxlanId: v.VNI, Port: v.Port, VtepDevIndex: v.Dev, Learning: v.Learning,
			Group: net.ParseIP(v.Group), SrcAddr: net.ParseIP(v.Local)}
	}
	return out
}

// bondOf is the document's bond of a dumped one.
func bondOf(b *netlink.Bond) *Bond {
	x := &Bond{Mode: b.Mode.String(), Miimon: max(b.Miimon, 0), MinLinks: max(b.MinLinks, 0), Primary: max(b.Primary, 0)}
	if b.LacpRate >= 0 && b.LacpRate < netlink.BOND_LACP_RATE_UNKNOWN {
		x.LacpRate = b.LacpRate.String()
	}
	if b.XmitHashPolicy >= 0 && b.XmitHashPolicy < netlink.BOND_XMIT_HASH_POLICY_UNKNOWN {
		x.XmitHashPolicy = b.XmitHashPolicy.String()
	}
	return x
}

// link is the fake's bond of a checked document bond.
func (b *Bond) link(a netlink.LinkAttrs) *netlink.Bond {
	out := netlink.NewLinkBond(a)
	out.Mode, out.Miimon, out.MinLinks, out.Primary = netlink.StringToBondMode(b.Mode), b.Miimon, b.MinLinks, b.Primary
	out.LacpRate, out.XmitHashPolicy = netlink.BOND_LACP_RATE_UNKNOWN, netlink.BOND_XMIT_HASH_POLICY_UNKNOWN
	if b.LacpRate != "" {
		out.LacpRate = netlink.StringToBondLacpRate(b.LacpRate)
	}
	if b.XmitHashPolicy != "" {
		out.XmitHashPolicy = netlink.StringToBondXmitHashPolicy(b.XmitHashPolicy)
	}
	return out
}

// tunnelOf is the document's tunnel of a dumped one.
func tunnelOf(l netlink.Link) *Tunnel {
	switch v := l.(type) {
	case *netlink.Gretun:
		t := &Tunnel{Local: ipString(v.Local), Remote: ipString(v.Remote), TTL: v.Ttl, PMTUDisc: v.PMtuDisc}
		if v.IFlags&nl.GRE_KEY != 0 {
			t.IKey = v.IKey
		}
		if v.OFlags&nl.GRE_KEY != 0 {
			t.OKey = v.OKey
		}
		return t
	case *netlink.Iptun:
		return &Tunnel{Local: ipString(v.Local), Remote: ipString(v.Remote), TTL: v.Ttl, PMTUDisc: v.PMtuDisc, Proto: v.Proto}
	case *netlink.Sittun:
		return &Tunnel{Local: ipString(v.Local), Remote: ipString(v.Remote), TTL: v.Ttl, PMTUDisc: v.PMtuDisc, Proto: v.Proto}
	case *netlink.Ip6tnl:
		return &Tunnel{Local: ipString(v.Local), Remote: ipString(v.Remote), TTL: v.Ttl, Proto: v.Proto, EncapLimit: v.EncapLimit}
	}
	return nil
}

// ipString is ip, "" for none or any.
func ipString(ip net.IP) string {
	if len(ip) == 0 || ip.IsUnspecified() {
		return ""
	}
	return ip.String()
}

// link is the fake's tunnel of kind of a checked document tunnel: a
// create request (the fake builds it as the kernel does) whose lower
// device is a's ParentIndex.
func (t *Tunnel) link(kind string, a netlink.LinkAttrs) netlink.Link {
	local, remote := net.ParseIP(t.Local), net.ParseIP(t.Remote)
	parent := uint32(a.ParentIndex)
	switch kind {
	case "gre":
		if local == nil {
			local = net.IPv4zero // netlink's Gretun without an IPv4 local address is ip6gre
		}
		g := &netlink.Gretun{LinkAttrs: a, Link: parent, Local: local.To4(), Remote: remote.To4(), Ttl: t.TTL, PMtuDisc: t.PMTUDisc, IKey: t.IKey, OKey: t.OKey}
		return g
	case "ipip":
		return &netlink.Iptun{LinkAttrs: a, Link: parent, Local: local.To4(), Remote: remote.To4(), Ttl: t.TTL, PMtuDisc: t.PMTUDisc, Proto: t.Proto}
	case "sit":
		return &netlink.Sittun{LinkAttrs: a, Link: parent, Local: local.To4(), Remote: remote.To4(), Ttl: t.TTL, PMtuDisc: t.PMTUDisc, Proto: t.Proto}
	}
	return &netlink.Ip6tnl{LinkAttrs: a, Link: parent, Local: local, Remote: remote, Ttl: t.TTL, Proto: t.Proto, EncapLimit: t.EncapLimit}
}

func modeOf(name string) netlink.MacvlanMode {
	for m, n := range macvlanModes {
		if n == name {
			return m
		}
	}
	return netlink.MACVLAN_MODE_DEFAULT
}

// ethtoolOf is the document's form of a NIC's ethtool answers.
func ethtoolOf(n *ethtool.FakeNIC) *Ethtool {
	e := &Ethtool{Active: trueKeys(n.Features.Active), Changeable: trueKeys(n.Features.HW), Fixed: trueKeys(n.Features.NoChange),
		Groups: map[string]EthtoolGroup{}}
	for g, v := range n.Groups {
		e.Groups[g] = EthtoolGroup(v)
	}
	return e
}

// nic is the fake's NIC of e.
func (e *Ethtool) nic(index int) *ethtool.FakeNIC {
	n := &ethtool.FakeNIC{Index: index, Groups: map[string]ethtool.Values{},
		Features: ethtool.Features{Active: set(e.Active), HW: set(e.Changeable), NoChange: set(e.Fixed)}}
	for g, v := range e.Groups {
		n.Groups[g] = ethtool.Values(v)
	}
	return n
}

func trueKeys(m map[string]bool) []string {
	out := []string{}
	for k, v := range m {
		if v {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

func set(names []string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}
