package render

import (
	"strings"

	"github.com/netagent/netagent/agent/intent"
	"github.com/netagent/netagent/items"
)

// interfaceToIntent converts an Interface item, its MAC only if it is an
// Ethernet one. An owned veth whose peer
// is out of reach (in a namespace without a name) cannot be declared as a
// veth; it is described as physical: it exists, and is not created.
func interfaceToIntent(it *items.Interface) *intent.Interface {
	ifc := &intent.Interface{
		Name:  it.IfName,
		Type:  intent.LinkType(it.Kind),
		MTU:   it.MTU,
		State: stateOf(it.AdminUp),
		Alias: it.Alias,
	}
	// Only an Ethernet address is a MAC: a tunnel's device address is its
	// local endpoint (4 or 16 bytes), which the intent does not set.
	if len(it.MAC) == 6 && it.Kind != items.KindPhysical {
		ifc.MAC = it.MAC.String()
	}
	if kind, ok := linkKinds[ifc.Type]; ok {
		kind.toIntent(it, ifc)
	}
	return ifc
}

// routeToIntent converts a Route item, leaving out the defaults.
func routeToIntent(r *items.Route) intent.Route {
	ipv6 := r.Family() == items.FamilyIPv6
	out := intent.Route{
		To:     r.Dst.String(),
		Via:    addrString(r.Gw),
		Dev:    r.Dev,
		Metric: r.EffectiveMetric(),
		Src:    addrString(r.Src),
		Type:   routeTypeNames[r.Kind],
	}
	if r.Dst.Bits() == 0 {
		out.To = "default"
		if ipv6 && out.Via == "" && out.Src == "" {
			out.Family = intent.FamilyIPv6
		}
	}
	if t := r.TableID(); t != items.TableMain {
		out.Table = t
	}
	if ipv6 && out.Metric == items.IPv6DefaultMetric {
		out.Metric = 0
	}
	if r.Scope != defaultScope(!ipv6, r.Kind == items.RouteUnicast, r.Gw.IsValid() || len(r.Nexthops) > 0) {
		out.Scope = scopeNames[r.Scope]
	}
	out.OnLink, out.MTU = r.OnLink, r.MTU
	if r.Pref != items.RoutePrefMedium {
		out.Pref = routePrefNames[r.Pref]
	}
	for _, n := range r.Nexthops {
		hop := intent.Nexthop{Via: addrString(n.Gw), Dev: n.Dev, OnLink: n.OnLink}
		if w := n.EffectiveWeight(); w != 1 {
			hop.Weight = int(w)
		}
		out.Nexthops = append(out.Nexthops, hop)
	}
	if len(r.Nexthops) > 0 && r.Dst.Bits() == 0 && ipv6 {
		out.Family = "" // the nexthops' vias say it
	}
	return out
}

var routePrefNames = map[items.RoutePref]intent.RoutePref{
	items.RoutePrefLow:  intent.PrefLow,
	items.RoutePrefHigh: intent.PrefHigh,
}

var routeTypeNames = map[items.RouteType]intent.RouteType{
	items.RouteBlackhole:   intent.RouteBlackhole,
	items.RouteUnreachable: intent.RouteUnreachable,
	items.RouteProhibit:    intent.RouteProhibit,
}

var scopeNames = map[items.Scope]intent.Scope{
	items.ScopeUniverse: intent.ScopeGlobal,
	items.ScopeLink:     intent.ScopeLink,
	items.ScopeHost:     intent.ScopeHost,
}

// ruleToIntent converts a Rule item, leaving out the defaults.
func ruleToIntent(r *items.Rule) intent.Rule {
	out := intent.Rule{
		Priority: r.Priority,
		From:     addrString(r.From),
		To:       addrString(r.To),
		FwMark:   r.Mark,
		FwMask:   r.EffectiveMask(),
		IIF:      r.IifName,
		OIF:      r.OifName,
		Table:    r.Table,
		Not:      r.Invert,
		Goto:     r.Goto,
	}
	if r.Mark != 0 && out.FwMask == 0xffffffff {
		out.FwMask = 0
	}
	if r.Action != items.RuleLookup {
		out.Action = ruleActionNames[r.Action]
	}
	if r.IPProto != 0 {
		out.IPProto = items.IPProtoName(r.IPProto)
	}
	if r.SPort.IsSet() {
		out.SPort = r.SPort.String()
	}
	if r.DPort.IsSet() {
		out.DPort = r.DPort.String()
	}
	if r.UIDs != nil {
		out.UIDRange = r.UIDs.String()
	}
	if p := r.SuppressPrefixlen; p != nil {
		v := int(*p)
		out.SuppressPrefixlength = &v
	}
	if out.From == "" && out.To == "" {
		out.Family = intent.FamilyIPv4
		if r.Family == items.FamilyIPv6 {
			out.Family = intent.FamilyIPv6
		}
	}
	return out
}

var ruleActionNames = map[items.RuleAction]intent.RuleAction{
	items.RuleGoto:        intent.ActionGoto,
	items.RuleBlackhole:   intent.ActionBlackhole,
	items.RuleUnreachable: intent.ActionUnreachable,
	items.RuleProhibit:    intent.ActionProhibit,
}

// chainsToIntent converts iptables chains, merging the ipv4 and ipv6
// versions of a chain into one of family "both" when they are the same.
func chainsToIntent(chains []*items.IptablesChain) []intent.Chain {
	var out []intent.Chain
	merged := map[*items.IptablesChain]bool{}
	for _, c := range chains {
		if merged[c] {
			continue
		}
		ch := chainToIntent(c)
		if c.Family == items.FamilyIPv4 {
			if twin := findTwin(chains, c); twin != nil {
				ch.Family, merged[twin] = intent.ChainBoth, true
			}
		}
		out = append(out, ch)
	}
	return out
}

// findTwin returns the ipv6 chain of c's table and name if it is otherwise
// the same as c.
func findTwin(chains []*items.IptablesChain, c *items.IptablesChain) *items.IptablesChain {
	for _, o := range chains {
		if o.Family != items.FamilyIPv6 {
			continue
		}
		v6 := *o
		v6.Family = c.Family
		if v6.Equal(c) {
			return o
		}
	}
	return nil
}

func chainToIntent(c *items.IptablesChain) intent.Chain {
	ch := intent.Chain{Table: intent.FirewallTable(c.Table), Name: c.Chain, JumpFrom: intent.BuiltinChain(c.JumpFrom)}
	if c.Family == items.FamilyIPv6 {
		ch.Family = intent.ChainIPv6
	}
	if c.JumpFrom != "" && c.EffectivePosition() != 1 {
		ch.Position = c.EffectivePosition()
	}
	for _, args := range c.Rules {
		ch.Rules = append(ch.Rules, JoinRule(args))
	}
	return ch
}

// JoinRule writes a rule's arguments as one string that intent.SplitRule
// splits back into the same arguments: plain arguments as they are, the
// others in single quotes.
func JoinRule(args []string) string {
	quoted := make([]string, len(args))
	for i, a := range args {
		quoted[i] = quoteArg(a)
	}
	return strings.Join(quoted, " ")
}

// quoteArg quotes a when it holds anything but letters, digits and
// -_./:,=+@%!. A single quote inside closes the quotes, is written with
// a backslash, and opens them again.
func quoteArg(a string) string {
	if a != "" && strings.IndexFunc(a, func(r rune) bool { return !isPlain(r) }) < 0 {
		return a
	}
	return "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
}

func isPlain(r rune) bool {
	return ('a' <= r && r <= 'z') || ('A' <= r && r <= 'Z') || ('0' <= r && r <= '9') ||
		strings.ContainsRune("-_./:,=+@%!", r)
}

// optional is a netip.Addr or netip.Prefix.
type optional interface {
	IsValid() bool
	String() string
}

// addrString returns a's text, or "" for the zero value.
func addrString(a optional) string {
	if !a.IsValid() {
		return ""
	}
	return a.String()
}
