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
// it is required for vlan, veth, macvlan, vxlan, gre, ipip, sit and ip6tnl.
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
	GRE     *Tunnel  `json:"gre,omitempty"`
	IPIP    *Tunnel  `json:"ipip,omitempty"`
	SIT     *Tunnel  `json:"sit,omitempty"`
	IP6Tnl  *IP6Tnl  `json:"ip6tnl,omitempty"`

	Wireguard *Wireguard `json:"wireguard,omitempty"`

	Origin Origin `json:"-"`
}

// Route is a route. To is "default" or a CIDR prefix; the family comes from
// To, Via, Src, the nexthops' Via or Family, which must agree (IPv4 when
// nothing says). Nexthops makes a multipath (ECMP) route and excludes Via,
// Dev and OnLink.
type Route struct {
	To       string    `json:"to"`
	Via      string    `json:"via,omitempty"`
	Dev      string    `json:"dev,omitempty"`
	OnLink   bool      `json:"onlink,omitempty"` // needs via and dev
	Nexthops []Nexthop `json:"nexthops,omitempty"`
	Table    uint32    `json:"table,omitempty"` // 0: main (254)
	Metric   uint32    `json:"metric,omitempty"`
	Scope    Scope     `json:"scope,omitempty"` // "": the kernel's choice
	Src      string    `json:"src,omitempty"`
	Type     RouteType `json:"type,omitempty"` // "": unicast
	MTU      uint32    `json:"mtu,omitempty"`  // 0: none
	Pref     RoutePref `json:"pref,omitempty"` // IPv6 only; "": medium
	Family   Family    `json:"family,omitempty"`

	Origin Origin `json:"-"`
}

// Nexthop is one path of a multipath route: a via, a dev, or both.
type Nexthop struct {
	Via    string `json:"via,omitempty"`
	Dev    string `json:"dev,omitempty"`
	Weight int    `json:"weight,omitempty"` // 1-256; 0: 1
	OnLink bool   `json:"onlink,omitempty"` // needs via and dev
}

// RoutePref is an IPv6 route's preference (RFC 4191).
type RoutePref string

// The route preferences.
const (
	PrefLow    RoutePref = "low"
	PrefMedium RoutePref = "medium"
	PrefHigh   RoutePref = "high"
)

// RuleAction is what a rule does with the packets it matches.
type RuleAction string

// The rule actions.
const (
	ActionLookup      RuleAction = "lookup"
	ActionGoto        RuleAction = "goto"
	ActionBlackhole   RuleAction = "blackhole"
	ActionUnreachable RuleAction = "unreachable"
	ActionProhibit    RuleAction = "prohibit"
)

var (
	routePrefs  = []RoutePref{PrefLow, PrefMedium, PrefHigh}
	ruleActions = []RuleAction{ActionLookup, ActionGoto, ActionBlackhole, ActionUnreachable, ActionProhibit}
)

// Rule is a routing policy rule. The family comes from From or To; Family
// is required when neither is set. Action (default lookup) says what it
// does: look up Table, jump to the rule at priority Goto, or drop the packet
// (blackhole, unreachable, prohibit: no table).
type Rule struct {
	Priority uint32 `json:"priority"` // 1-4294967295
	Not      bool   `json:"not,omitempty"`
	From     string `json:"from,omitempty"`
	To       string `json:"to,omitempty"`
	FwMark   uint32 `json:"fwmark,omitempty"`
	FwMask   uint32 `json:"fwmask,omitempty"` // 0 with FwMark set: 0xffffffff
	IIF      string `json:"iif,omitempty"`    // may name a foreign interface
	OIF      string `json:"oif,omitempty"`    // may name a foreign interface
	// IPProto is a protocol name (tcp, udp, icmp, ...) or number.
	IPProto  string `json:"ipproto,omitempty"`
	SPort    string `json:"sport,omitempty"`    // "80" or "1000-2000"
	DPort    string `json:"dport,omitempty"`    // "80" or "1000-2000"
	UIDRange string `json:"uidrange,omitempty"` // "1000-1999" or "0"
	// SuppressPrefixlength rejects a lookup's result of this prefix length
	// or less (0: ignore default routes of the table).
	SuppressPrefixlength *int       `json:"suppressPrefixlength,omitempty"`
	Action               RuleAction `json:"action,omitempty"` // "": lookup
	Table                uint32     `json:"table,omitempty"`  // lookup only, required there
	Goto                 uint32     `json:"goto,omitempty"`   // goto only: a later priority
	Family               Family     `json:"family,omitempty"`

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
