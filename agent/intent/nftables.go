package intent

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/netagent/netagent/items"
)

// The nftables section: netagent's own nftables tables, "nftables.tables".
var nftablesSection = listSection("nftables.tables", func(in *Intent) *[]NftablesTable { return &in.Nftables.Tables },
	func(x *NftablesTable) *Origin { return &x.Origin }, nftTableKeys, (*checker).nftables, true)

// Nftables is the nftables tables netagent owns, each wholly: netagent
// writes only into them, never into another table (iptables-nft's,
// firewalld's, Docker's).
type Nftables struct {
	Tables []NftablesTable `json:"tables,omitempty"`
}

// NftablesTable is one table of the section: the typed model of
// items.NftTable (chains, rules, sets), with its place in the files.
type NftablesTable struct {
	items.NftTable
	Origin Origin `json:"-"`
}

func nftTableKeys(t *NftablesTable) []string {
	return []string{fmt.Sprintf("nftables table %s %s", t.Family, t.Table)}
}

// nftName is what netagent accepts as a table, chain or set name: nft's
// identifiers, at most 64 characters (the kernel's limit is 255).
var nftName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_.-]{0,63}$`) })

// nftHooks are the hooks of each family that the kernel offers a filter
// chain; nat and route chains are narrower (nftTypeHooks).
var nftHooks = map[string][]string{
	"inet":   {"prerouting", "input", "forward", "output", "postrouting", "ingress"},
	"ip":     {"prerouting", "input", "forward", "output", "postrouting"},
	"ip6":    {"prerouting", "input", "forward", "output", "postrouting"},
	"bridge": {"prerouting", "input", "forward", "output", "postrouting"},
	"netdev": {"ingress", "egress"},
}

// nftTypeHooks are the hooks of the chain types other than filter, in the
// families that have them (ip, ip6, inet).
var nftTypeHooks = map[string][]string{
	"nat":   {"prerouting", "input", "output", "postrouting"},
	"route": {"output"},
}

// nftNatHooks are the hooks a nat statement may run from (the kernel's
// nft_masq_validate, nft_nat_validate).
var nftNatHooks = map[string][]string{
	"masquerade": {"postrouting"},
	"snat":       {"postrouting", "input"},
	"dnat":       {"prerouting", "output"},
}

var nftSetTypes = []string{"ipv4_addr", "ipv6_addr", "inet_service"}

// nftables checks every table, and that no two share family and name.
func (c *checker) nftables() {
	seen := map[string]Origin{}
	for i := range c.in.Nftables.Tables {
		t := &c.in.Nftables.Tables[i]
		at := c.in.Locate(t.Origin, "nftables.tables", i)
		if c.nftTable(&t.NftTable, at) {
			c.unique(seen, nftTableKeys(t)[0], at)
		}
	}
}

// nftTable checks one table; it returns whether family and name are valid.
func (c *checker) nftTable(t *items.NftTable, at Origin) bool {
	ok := true
	if _, known := nftHooks[t.Family]; !known {
		c.fail(at.field("family"), "%q is not an nftables family (want inet, ip, ip6, bridge, netdev)", t.Family)
		ok = false
	}
	if !nftName().MatchString(t.Table) {
		c.fail(at.field("name"), "%q is not a table name (a letter or '_', then up to 63 letters, digits, '_', '.', '-')", t.Table)
		ok = false
	}
	sets := map[string]*items.NftSet{}
	for i := range t.Sets {
		s := &t.Sets[i]
		sa := at.field("sets").index(i)
		c.nftSet(t.Family, s, sa)
		if _, dup := sets[s.Name]; dup {
			c.fail(sa.field("name"), "set %q is already defined in the table", s.Name)
		}
		sets[s.Name] = s
	}
	chains := map[string]*items.NftChain{}
	for i := range t.Chains {
		ch := &t.Chains[i]
		ca := at.field("chains").index(i)
		if _, dup := chains[ch.Name]; dup {
			c.fail(ca.field("name"), "chain %q is already defined in the table", ch.Name)
		}
		chains[ch.Name] = ch
	}
	vmaps := c.nftMaps(t, at, chains, sets)
	for i := range t.Chains {
		ca := at.field("chains").index(i)
		c.nftChain(t.Family, &t.Chains[i], ca)
		rules := ca.field("rules")
		for j := range t.Chains[i].Rules {
			ra := rules.index(j)
			c.nftRule(t.Family, &t.Chains[i].Rules[j], ra, chains, sets)
			c.nftVmap(&t.Chains[i].Rules[j], ra, vmaps)
		}
	}
	c.nftNatReach(t, at)
	return ok
}

// nftChain checks a chain's own fields.
func (c *checker) nftChain(family string, ch *items.NftChain, at Origin) {
	if !nftName().MatchString(ch.Name) {
		c.fail(at.field("name"), "%q is not a chain name (a letter or '_', then up to 63 letters, digits, '_', '.', '-')", ch.Name)
	} else if ch.Name == items.NftOwnerChain {
		c.fail(at.field("name"), "%q is the chain that marks netagent's tables", ch.Name)
	}
	if !ch.Base() {
		for _, f := range []struct{ name, val string }{{"type", ch.Type}, {"policy", ch.Policy}, {"device", ch.Device}} {
			if f.val != "" {
				c.fail(at.field(f.name), "is only for a base chain (one with a hook)")
			}
		}
		if ch.Priority != nil {
			c.fail(at.field("priority"), "is only for a base chain (one with a hook)")
		}
		return
	}
	c.nftBaseChain(family, ch, at)
}

// nftBaseChain checks type, hook, priority, policy and device of a base
// chain as the kernel would.
func (c *checker) nftBaseChain(family string, ch *items.NftChain, at Origin) {
	hooks := nftHooks[family]
	switch ch.Type {
	case "filter":
	case "nat", "route":
		if family != "inet" && family != "ip" && family != "ip6" {
			c.fail(at.field("type"), "a %s chain is only in the inet, ip and ip6 families, not %s", ch.Type, family)
			return
		}
		hooks = nftTypeHooks[ch.Type]
	case "":
		c.fail(at.field("type"), "is required for a base chain (one of filter, nat, route)")
		return
	default:
		c.fail(at.field("type"), "%q is not a chain type (want filter, nat, route)", ch.Type)
		return
	}
	if hooks != nil && !slices.Contains(hooks, ch.Hook) {
		c.fail(at.field("hook"), "%q is not a hook of a %s chain in family %s (want %s)", ch.Hook, ch.Type, family, strings.Join(hooks, ", "))
		return
	}
	needsDevice := ch.Hook == "ingress" || ch.Hook == "egress"
	if needsDevice && ch.Device == "" {
		c.fail(at.field("device"), "is required for the %s hook", ch.Hook)
	} else if !needsDevice && ch.Device != "" {
		c.fail(at.field("device"), "is only for the ingress and egress hooks")
	} else if ch.Device != "" {
		c.ifname(at.field("device"), ch.Device)
	}
	if ch.Priority == nil {
		c.fail(at.field("priority"), "is required for a base chain (a number or a name: %s)", nftPriorityNames(family))
	} else if v, ok := items.NftPriorityValue(family, ch.Hook, *ch.Priority); !ok {
		c.fail(at.field("priority"), "%q is not a priority nft defines for hook %s in family %s (want a number or %s)",
			ch.Priority.Name, ch.Hook, family, nftPriorityNames(family))
	} else if ch.Type == "nat" && v <= -200 {
		c.fail(at.field("priority"), "%d: a nat chain must run after conntrack (a priority above -200)", v)
	}
	if ch.Policy != "" && ch.Policy != "accept" && ch.Policy != "drop" {
		c.fail(at.field("policy"), "%q is not a policy (want accept, drop)", ch.Policy)
	}
}

func nftPriorityNames(family string) string {
	if family == "bridge" {
		return "dstnat, filter, out, srcnat"
	}
	if family == "netdev" {
		return "filter"
	}
	return "raw, mangle, dstnat, filter, security, srcnat"
}

// nftSet checks a set and its elements.
func (c *checker) nftSet(family string, s *items.NftSet, at Origin) {
	if !nftName().MatchString(s.Name) {
		c.fail(at.field("name"), "%q is not a set name (a letter or '_', then up to 63 letters, digits, '_', '.', '-')", s.Name)
	}
	if !slices.Contains(nftSetTypes, s.Type) {
		c.fail(at.field("type"), "%q is not a set type (want %s)", s.Type, strings.Join(nftSetTypes, ", "))
		return
	}
	if (family == "ip" && s.Type == "ipv6_addr") || (family == "ip6" && s.Type == "ipv4_addr") {
		c.fail(at.field("type"), "a set of %s cannot be matched in family %s", s.Type, family)
	}
	if err := items.CheckNftSetTimeout(*s); errors.Is(err, items.ErrNftTimeoutElements) {
		c.fail(at.field("elements"), "%v", err)
	} else if err != nil {
		c.fail(at.field("timeout"), "%v", err)
	}
	// Elements that all parse, in ascending order of their keys (as
	// netagent writes them), are all valid and none is listed twice: one
	// pass without a map of 100k strings.
	if items.NftElementsAscending(s.Type, s.Interval, s.Elements) {
		return
	}
	seen := make(map[string]bool, len(s.Elements))
	for i, e := range s.Elements {
		if seen[e] {
			c.fail(at.field("elements").index(i), "%q is listed twice", e)
		}
		seen[e] = true
		if err := items.CheckNftElement(s.Type, s.Interval, e); err != nil {
			c.fail(at.field("elements").index(i), "%v", err)
		}
	}
}

// nftRule checks a rule's matches and statements against its table.
func (c *checker) nftRule(family string, r *items.NftRule, at Origin, chains map[string]*items.NftChain, sets map[string]*items.NftSet) {
	for _, f := range []struct{ name, val string }{{"iifname", r.IIfName}, {"oifname", r.OIfName}} {
		if f.val != "" {
			c.ifname(at.field(f.name), f.val)
		}
	}
	for _, f := range []struct{ name, val string }{{"saddr", r.Saddr}, {"daddr", r.Daddr}} {
		if f.val != "" {
			c.nftAddrMatch(family, f.val, at.field(f.name), sets)
		}
	}
	if r.Protocol != "" && items.NftProtoNumber(r.Protocol) < 0 {
		c.fail(at.field("protocol"), "%q is not a protocol (want tcp, udp, icmp, icmpv6, sctp or 0-255)", r.Protocol)
	}
	for _, f := range []struct{ name, val string }{{"sport", r.Sport}, {"dport", r.Dport}} {
		if f.val != "" {
			c.nftPortMatch(r.Protocol, f.val, at.field(f.name), sets)
		}
	}
	if r.ICMPType != "" {
		c.nftICMPTypeMatch(family, r, at.field("icmpType"), sets)
	}
	for i, s := range r.CtState {
		if !slices.Contains(items.NftCtStates, s) {
			c.fail(at.field("ctState").index(i), "%q is not a conntrack state (want %s)", s, strings.Join(items.NftCtStates, ", "))
		}
	}
	c.nftStatements(family, r, at, sets)
	c.nftVerdict(r, at, chains)
}

// nftAddrMatch checks an address match: an address or prefix of the
// table's family, or a set of addresses.
func (c *checker) nftAddrMatch(family, v string, at Origin, sets map[string]*items.NftSet) {
	if name, ok := nftSetRef(v); ok {
		s, found := sets[name]
		if !found {
			c.fail(at, "set %q is not defined in the table", name)
		} else if s.Type != "ipv4_addr" && s.Type != "ipv6_addr" {
			c.fail(at, "set %q holds %s, not addresses", name, s.Type)
		}
		return
	}
	p, err := items.ParseNftPrefix(v)
	if err != nil {
		c.fail(at, "%v", err)
		return
	}
	if (family == "ip" && !p.Addr().Is4()) || (family == "ip6" && !p.Addr().Is6()) || family == "bridge" || family == "netdev" {
		c.fail(at, "%s cannot be matched in family %s", v, family)
	}
}

// nftSetRef returns the set of a match "@set" or "!@set".
func nftSetRef(v string) (string, bool) {
	return strings.CutPrefix(strings.TrimPrefix(v, "!"), "@")
}

// nftPortMatch checks a port match: it needs tcp or udp, and a port, a
// range or a set of inet_service.
func (c *checker) nftPortMatch(proto, v string, at Origin, sets map[string]*items.NftSet) {
	if !nftPortProto(proto) {
		c.fail(at, "a port match needs protocol tcp or udp")
		return
	}
	if name, ok := nftSetRef(v); ok {
		s, found := sets[name]
		if !found {
			c.fail(at, "set %q is not defined in the table", name)
		} else if s.Type != "inet_service" {
			c.fail(at, "set %q holds %s, not inet_service (ports)", name, s.Type)
		}
		return
	}
	if _, _, err := items.ParseNftPorts(v); err != nil {
		c.fail(at, "%v", err)
	}
}

// nftVerdict checks the verdict and its target chain.
func (c *checker) nftVerdict(r *items.NftRule, at Origin, chains map[string]*items.NftChain) {
	switch r.Verdict {
	case "", "accept", "drop", "return":
		if r.Target != "" {
			c.fail(at.field("target"), "is only for verdicts jump and goto")
		}
	case "jump", "goto":
		t, ok := chains[r.Target]
		switch {
		case r.Target == "":
			c.fail(at.field("target"), "is required for verdict %s", r.Verdict)
		case !ok:
			c.fail(at.field("target"), "chain %q is not defined in the table", r.Target)
		case t.Base():
			c.fail(at.field("target"), "chain %q is a base chain: the kernel only lets a rule %s to a regular chain", r.Target, r.Verdict)
		}
	default:
		c.fail(at.field("verdict"), "%q is not a verdict (want accept, drop, return, jump, goto)", r.Verdict)
	}
}

// nftNatReach checks, for each base chain, the chains it reaches by jump
// and goto: a nat, redirect or reject statement in any of them needs a
// base chain (of type nat for the first two) on a hook that allows it,
// and a loop is refused (the kernel's ELOOP).
func (c *checker) nftNatReach(t *items.NftTable, at Origin) {
	index := map[string]int{}
	for i := range t.Chains {
		index[t.Chains[i].Name] = i
	}
	for i := range t.Chains {
		base := &t.Chains[i]
		if !base.Base() {
			c.nftLoop(t, i, index, at)
			continue
		}
		seen := map[int]bool{}
		var walk func(k int)
		walk = func(k int) {
			if seen[k] {
				return
			}
			seen[k] = true
			for j := range t.Chains[k].Rules {
				r := &t.Chains[k].Rules[j]
				// The path only for a refusal: every rule of a large table
				// is looked at.
				c.nftActionAllowed(t.Family, base, r, func() Origin { return at.field("chains").index(k).field("rules").index(j) })
				if r.Verdict == "jump" || r.Verdict == "goto" {
					if next, ok := index[r.Target]; ok && !t.Chains[next].Base() {
						walk(next)
					}
				}
			}
		}
		walk(i)
	}
}

// nftLoop reports a regular chain that reaches itself by jump or goto.
func (c *checker) nftLoop(t *items.NftTable, start int, index map[string]int, at Origin) {
	seen := map[int]bool{}
	stack := []int{start}
	for len(stack) > 0 {
		k := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, r := range t.Chains[k].Rules {
			if r.Verdict != "jump" && r.Verdict != "goto" {
				continue
			}
			next, ok := index[r.Target]
			if !ok || t.Chains[next].Base() {
				continue
			}
			if next == start {
				c.fail(at.field("chains").index(start).field("name"), "chain %q reaches itself by jump or goto: the kernel refuses loops", t.Chains[start].Name)
				return
			}
			if !seen[next] {
				seen[next] = true
				stack = append(stack, next)
			}
		}
	}
}
