package intent

// Version is the only intent format version this package reads.
const Version = 1

// Intent is one intent file, or several merged by Merge: the network state
// the host should have. Fields are described in the package documentation;
// the JSON names are the contract.
type Intent struct {
	Version    int               `json:"version"`
	Interfaces []Interface       `json:"interfaces,omitempty"`
	Routes     []Route           `json:"routes,omitempty"`
	Rules      []Rule            `json:"rules,omitempty"`
	Neighbors  []Neighbor        `json:"neighbors,omitempty"`
	Sysctls    map[string]string `json:"sysctls,omitempty"`
	Firewall   Firewall          `json:"firewall,omitzero"`

	// SysctlOrigins says where each sysctl key was defined; Merge fills it.
	SysctlOrigins map[string]Origin `json:"-"`
}

// Interface is a network interface. Physical interfaces must exist already
// (the agent configures but never creates them); every other type is created.
// Exactly the section matching Type may be set (Bond for "bond", and so on);
// it is required for vlan, veth, macvlan and vxlan.
type Interface struct {
	Name      string    `json:"name"`
	Type      LinkType  `json:"type"`
	MTU       int       `json:"mtu,omitempty"`   // 0: leave the kernel's value
	State     LinkState `json:"state,omitempty"` // "": up
	MAC       string    `json:"mac,omitempty"`   // virtual types only
	Alias     string    `json:"alias,omitempty"`
	Master    string    `json:"master,omitempty"`    // a bond or bridge
	Addresses []string  `json:"addresses,omitempty"` // CIDR: "192.0.2.10/24"

	Bond    *Bond    `json:"bond,omitempty"`
	VLAN    *VLAN    `json:"vlan,omitempty"`
	Bridge  *Bridge  `json:"bridge,omitempty"`
	Veth    *Veth    `json:"veth,omitempty"`
	Macvlan *Macvlan `json:"macvlan,omitempty"`
	VXLAN   *VXLAN   `json:"vxlan,omitempty"`

	Origin Origin `json:"-"`
}

// Route is a route. To is "default" or a CIDR prefix; the family comes from
// To, Via, Src or Family, which must agree (IPv4 when nothing says).
type Route struct {
	To     string    `json:"to"`
	Via    string    `json:"via,omitempty"`
	Dev    string    `json:"dev,omitempty"`
	Table  uint32    `json:"table,omitempty"` // 0: main (254)
	Metric uint32    `json:"metric,omitempty"`
	Scope  Scope     `json:"scope,omitempty"` // "": the kernel's choice
	Src    string    `json:"src,omitempty"`
	Type   RouteType `json:"type,omitempty"` // "": unicast
	Family Family    `json:"family,omitempty"`

	Origin Origin `json:"-"`
}

// Rule is a routing policy rule that looks up Table. The family comes from
// From or To; Family is required when neither is set.
type Rule struct {
	Priority uint32 `json:"priority"` // 1-4294967295
	From     string `json:"from,omitempty"`
	To       string `json:"to,omitempty"`
	FwMark   uint32 `json:"fwmark,omitempty"`
	FwMask   uint32 `json:"fwmask,omitempty"` // 0 with FwMark set: 0xffffffff
	IIF      string `json:"iif,omitempty"`    // may name a foreign interface
	OIF      string `json:"oif,omitempty"`    // may name a foreign interface
	Table    uint32 `json:"table"`
	Family   Family `json:"family,omitempty"`

	Origin Origin `json:"-"`
}

// Neighbor is a permanent neighbor (ARP or NDP) entry.
type Neighbor struct {
	Dev string `json:"dev"`
	IP  string `json:"ip"`
	MAC string `json:"mac"`

	Origin Origin `json:"-"`
}

// Firewall is the agent's part of the iptables configuration.
type Firewall struct {
	Chains []Chain `json:"chains,omitempty"`
}

// Chain is a user chain the agent owns, with all its rules, and optionally
// a jump to it from a built-in chain of the same table.
type Chain struct {
	Table    FirewallTable `json:"table"`
	Name     string        `json:"name"`
	JumpFrom BuiltinChain  `json:"jumpFrom,omitempty"` // "": no jump
	Position int           `json:"position,omitempty"` // of the jump; 0: 1, first
	Family   ChainFamily   `json:"family,omitempty"`   // "": ipv4
	Rules    []string      `json:"rules,omitempty"`    // as after "-A <name>"

	// Args holds Rules split by SplitRule, one []string per rule. Validate
	// fills it; it is meaningful only when Validate returned nil.
	Args [][]string `json:"-"`

	Origin Origin `json:"-"`
}
