package intent

// Version is the only intent format version this package reads.
const Version = 1

// Intent is one intent file, or several merged by Merge: the network state
// the host should have. Fields are described in the package documentation;
// the JSON names are the contract. The type of each section's objects is
// in the section's file (Route in section_routes.go, ...); Interface and
// its types' sections are here and in link_<type>.go.
type Intent struct {
	Version int `json:"version"`
	// Drift is the drift policy of the file's objects that set none.
	Drift      DriftPolicy       `json:"drift,omitempty"`
	Interfaces []Interface       `json:"interfaces,omitempty"`
	Routes     []Route           `json:"routes,omitempty"`
	Rules      []Rule            `json:"rules,omitempty"`
	Neighbors  []Neighbor        `json:"neighbors,omitempty"`
	Sysctls    map[string]string `json:"sysctls,omitempty"`
	Firewall   Firewall          `json:"firewall,omitzero"`
	Nftables   Nftables          `json:"nftables,omitzero"` // nftables.go
	DNS        *DNS              `json:"dns,omitempty"`     // section_dns.go

	// DriftByFile is the "drift" of each merged file that sets one
	// (DriftOf); Merge fills it.
	DriftByFile map[string]DriftPolicy `json:"-"`

	// SysctlOrigins says where each sysctl key was defined; Merge fills it.
	SysctlOrigins map[string]Origin `json:"-"`

	// file is the file of the objects without an Origin, when Merge made
	// the intent from one file and shared its lists (see Locate).
	file string

	// renumber and broken are ParsePartial's: the position in the
	// document of each element of a list it left elements of out, and the
	// names of the interfaces it left out (Merge keeps both).
	renumber map[string][]int
	broken   map[string]bool
}

// Interface is a network interface. Physical interfaces must exist already
// (the agent configures but never creates them); every other type is created.
// Exactly the section matching Type may be set (Bond for "bond", and so on);
// it is required for vlan, veth, macvlan, vxlan, gre, ipip, sit, ip6tnl, ipvlan and vrf.
type Interface struct {
	Name  string    `json:"name"`
	Type  LinkType  `json:"type"`
	MTU   int       `json:"mtu,omitempty"`   // 0: leave the kernel's value
	State LinkState `json:"state,omitempty"` // "": up
	MAC   string    `json:"mac,omitempty"`   // virtual types only
	Alias string    `json:"alias,omitempty"`
	// Match, on a physical interface, finds its NIC by what it is and
	// renames it Name (match.go); nil: the NIC is the one named Name.
	Match     *Match   `json:"match,omitempty"`
	Master    string   `json:"master,omitempty"`    // a bond, bridge or vrf
	Addresses []string `json:"addresses,omitempty"` // CIDR: "192.0.2.10/24"
	// Protected: no apply may disrupt the interface (delete or recreate
	// it, remove its addresses, withdraw the routes through it) without
	// --force; removed from the intent, it is kept as an orphan. Not a
	// kernel attribute: render passes it along beside the graph
	// (render.ProtectedLinks), never in the interface's item.
	Protected bool `json:"protected,omitempty"`
	// Drift is the interface's drift policy (DriftPolicy), and that of
	// its addresses, port and VLANs; "": its file's.
	Drift DriftPolicy `json:"drift,omitempty"`

	Bond    *Bond    `json:"bond,omitempty"`
	VLAN    *VLAN    `json:"vlan,omitempty"`
	Bridge  *Bridge  `json:"bridge,omitempty"`
	Veth    *Veth    `json:"veth,omitempty"`
	Macvlan *Macvlan `json:"macvlan,omitempty"`
	VXLAN   *VXLAN   `json:"vxlan,omitempty"`
	GRE     *Tunnel  `json:"gre,omitempty"`
	IPIP    *Tunnel  `json:"ipip,omitempty"`
	SIT     *Tunnel  `json:"sit,omitempty"`
	IP6Tnl  *IP6Tnl  `json:"ip6tnl,omitempty"`
	Ipvlan  *Ipvlan  `json:"ipvlan,omitempty"`
	VRF     *VRF     `json:"vrf,omitempty"`

	Wireguard *Wireguard `json:"wireguard,omitempty"`

	BridgePort *BridgePort `json:"bridgePort,omitempty"` // a bridge port's settings

	Ethtool *Ethtool `json:"ethtool,omitempty"` // offloads, queues, rings, ... (ethtool.go)

	DHCP4 *DHCP4 `json:"dhcp4,omitempty"` // an IPv4 address from DHCP (dhcp4.go)
	IPv6  *IPv6  `json:"ipv6,omitempty"`  // IPv6 autoconfiguration and DHCPv6 (ipv6.go)

	Origin Origin `json:"-"`
}
