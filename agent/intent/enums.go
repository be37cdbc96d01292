package intent

// The enumerated string types of the format. For every optional one, the
// empty string means the documented default. Each has a list of its values
// below, which both Validate and the schema test use.

// LinkType is an interface's type.
type LinkType string

// LinkPhysical is the type of an existing NIC, which netagent configures
// but never creates. Every other type is declared in its file,
// link_<type>.go, and listed in linkSections (link_kinds.go), from which
// the list of valid types (linkTypes) follows.
const LinkPhysical LinkType = "physical"

// LinkState is an interface's administrative state.
type LinkState string

// The administrative states.
const (
	StateUp   LinkState = "up"
	StateDown LinkState = "down"
)

// RouteType is a route's type. Only unicast routes have a via or a dev.
type RouteType string

// The route types.
const (
	RouteUnicast     RouteType = "unicast"
	RouteBlackhole   RouteType = "blackhole"
	RouteUnreachable RouteType = "unreachable"
	RouteProhibit    RouteType = "prohibit"
)

// Scope is a route's scope.
type Scope string

// The route scopes.
const (
	ScopeGlobal Scope = "global"
	ScopeLink   Scope = "link"
	ScopeHost   Scope = "host"
)

// Family is an address family of a route or rule.
type Family string

// The address families.
const (
	FamilyIPv4 Family = "ipv4"
	FamilyIPv6 Family = "ipv6"
)

// ChainFamily says whether a chain goes to iptables, ip6tables or both.
type ChainFamily string

// The chain families.
const (
	ChainIPv4 ChainFamily = "ipv4"
	ChainIPv6 ChainFamily = "ipv6"
	ChainBoth ChainFamily = "both"
)

// FirewallTable is an iptables table.
type FirewallTable string

// The iptables tables a chain may live in.
const (
	TableFilter FirewallTable = "filter"
	TableNAT    FirewallTable = "nat"
	TableMangle FirewallTable = "mangle"
	TableRaw    FirewallTable = "raw"
)

// BuiltinChain is one of iptables' built-in chains.
type BuiltinChain string

// The built-in chains.
const (
	ChainPrerouting  BuiltinChain = "PREROUTING"
	ChainInput       BuiltinChain = "INPUT"
	ChainForward     BuiltinChain = "FORWARD"
	ChainOutput      BuiltinChain = "OUTPUT"
	ChainPostrouting BuiltinChain = "POSTROUTING"
)

var (
	linkStates = []LinkState{StateUp, StateDown}
	routeTypes = []RouteType{RouteUnicast, RouteBlackhole, RouteUnreachable, RouteProhibit}
	scopes     = []Scope{ScopeGlobal, ScopeLink, ScopeHost}
	families   = []Family{FamilyIPv4, FamilyIPv6}
	chainFams  = []ChainFamily{ChainIPv4, ChainIPv6, ChainBoth}
	fwTables   = []FirewallTable{TableFilter, TableNAT, TableMangle, TableRaw}
	builtins   = []BuiltinChain{ChainPrerouting, ChainInput, ChainForward, ChainOutput, ChainPostrouting}
)

// builtinsOf lists the built-in chains of each table.
var builtinsOf = map[FirewallTable][]BuiltinChain{
	TableFilter: {ChainInput, ChainForward, ChainOutput},
	TableNAT:    {ChainPrerouting, ChainInput, ChainOutput, ChainPostrouting},
	TableMangle: {ChainPrerouting, ChainInput, ChainForward, ChainOutput, ChainPostrouting},
	TableRaw:    {ChainPrerouting, ChainOutput},
}
