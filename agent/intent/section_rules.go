package intent

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// The rules section.
var rulesSection = listSection("rules", func(in *Intent) *[]Rule { return &in.Rules },
	func(x *Rule) *Origin { return &x.Origin }, oneKey(ruleKey), (*checker).rules, true)

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

// ruleActions are the rule actions, for Validate.
var ruleActions = []RuleAction{ActionLookup, ActionGoto, ActionBlackhole, ActionUnreachable, ActionProhibit}

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
	Table                TableID    `json:"table,omitempty"`  // lookup only, required there; a name in JSON (TableID)
	Goto                 uint32     `json:"goto,omitempty"`   // goto only: a later priority
	Family               Family     `json:"family,omitempty"`

	Drift DriftPolicy `json:"drift,omitempty"` // "": the file's (DriftPolicy)

	Origin Origin `json:"-"`
}

// EffectiveAction returns the rule's action, lookup when unset.
func (r *Rule) EffectiveAction() RuleAction { return orDefault(r.Action, ActionLookup) }

// EffectiveFamily returns the rule's family: Family if set, else that of
// From or To, else IPv4 (which Validate does not accept).
func (r *Rule) EffectiveFamily() Family {
	if r.Family != "" {
		return r.Family
	}
	return firstFamily(FamilyIPv4, prefixFamily(r.From), prefixFamily(r.To))
}

// rules checks every rule, and that no two share a priority and selectors.
func (c *checker) rules() {
	seen := map[string]Origin{}
	for i := range c.in.Rules {
		r := &c.in.Rules[i]
		at := c.in.Locate(r.Origin, "rules", i)
		if c.rule(r, at) {
			c.unique(seen, ruleKey(r), at)
			c.gotoTarget(r, at)
		}
	}
}

// gotoTarget checks that a goto rule jumps forward to a priority that a
// rule of the intent of the same family has (the kernel refuses a jump
// back or to itself, and a jump to no rule never matches anything).
func (c *checker) gotoTarget(r *Rule, at Origin) {
	if r.EffectiveAction() != ActionGoto || r.Goto == 0 {
		return
	}
	if r.Goto <= r.Priority {
		c.fail(at.field("goto"), "%d is not after this rule's priority %d (a goto jumps forward)", r.Goto, r.Priority)
		return
	}
	for i := range c.in.Rules {
		if o := &c.in.Rules[i]; o.Priority == r.Goto && o.EffectiveFamily() == r.EffectiveFamily() {
			return
		}
	}
	c.fail(at.field("goto"), "no %s rule of the intent has priority %d", famName(r.EffectiveFamily()), r.Goto)
}

// rule checks one rule; it returns whether its identity is sound.
func (c *checker) rule(r *Rule, at Origin) bool {
	if r.Priority == 0 {
		c.fail(at.field("priority"), "is required (1-4294967295; 0 is the local table's rule)")
	}
	famOK := oneOf(c, at.field("family"), r.Family, families)
	from, fromOK := c.selector(at, "from", r.From)
	to, toOK := c.selector(at, "to", r.To)
	famOK = c.agree(at, familyClaim(r.Family, famOK), from, to) && famOK
	if r.Family == "" && r.From == "" && r.To == "" {
		c.fail(at.field("family"), "is required when neither from nor to is set (ipv4 or ipv6)")
		famOK = false
	}
	if r.FwMask != 0 && r.FwMark&^r.FwMask != 0 {
		c.fail(at.field("fwmark"), "%#x has bits outside fwmask %#x", r.FwMark, r.FwMask)
	}
	c.optIfname(at.field("iif"), r.IIF)
	c.optIfname(at.field("oif"), r.OIF)
	selOK := c.ruleSelectors(r, at)
	return c.ruleAction(r, at) && r.Priority != 0 && famOK && fromOK && toOK && selOK
}

// ruleAction checks the action and what it takes: lookup a table, goto a
// priority, the others neither.
func (c *checker) ruleAction(r *Rule, at Origin) bool {
	if !oneOf(c, at.field("action"), r.Action, ruleActions) {
		return false
	}
	act := r.EffectiveAction()
	if act == ActionLookup {
		c.table(at.field("table"), uint32(r.Table), true)
	} else if r.Table != 0 {
		c.fail(at.field("table"), "not allowed with action %q (only lookup takes a table)", act)
	}
	switch {
	case act == ActionGoto && r.Goto == 0:
		c.fail(at.field("goto"), "is required with action \"goto\" (the priority of a later rule)")
	case act != ActionGoto && r.Goto != 0:
		c.fail(at.field("goto"), "needs action \"goto\"")
	}
	if r.SuppressPrefixlength != nil && act != ActionLookup {
		c.fail(at.field("suppressPrefixlength"), "needs action \"lookup\"")
	}
	return true
}

// ruleSelectors checks ipproto, sport, dport, uidrange and
// suppressPrefixlength; it returns whether they are sound (they are part of
// the rule's identity).
func (c *checker) ruleSelectors(r *Rule, at Origin) bool {
	ok := true
	proto, protoOK := uint8(0), true
	if r.IPProto != "" {
		proto, protoOK = parseIPProto(r.IPProto)
		if !protoOK {
			c.fail(at.field("ipproto"), "%q is not a protocol (a name: tcp, udp, sctp, dccp, icmp, ipv6-icmp, gre, esp, ah; or a number 1-255)", r.IPProto)
			ok = false
		}
	}
	for _, f := range []struct{ name, value string }{{"sport", r.SPort}, {"dport", r.DPort}} {
		if f.value == "" {
			continue
		}
		if _, _, err := parseRange(f.value, 1, 65535); err != nil {
			c.fail(at.field(f.name), "%q: %v", f.value, err)
			ok = false
		} else if protoOK && proto != 0 && !hasPorts(proto) {
			c.fail(at.field(f.name), "ipproto %s has no ports (tcp, udp, sctp or dccp have)", r.IPProto)
		}
	}
	if r.UIDRange != "" {
		if _, _, err := parseRange(r.UIDRange, 0, 4294967294); err != nil {
			c.fail(at.field("uidrange"), "%q: %v", r.UIDRange, err)
			ok = false
		}
	}
	if p := r.SuppressPrefixlength; p != nil {
		most := 32
		if r.EffectiveFamily() == FamilyIPv6 {
			most = 128
		}
		if *p < 0 || *p > most {
			c.fail(at.field("suppressPrefixlength"), "%d is out of range (0-%d for %s)", *p, most, famName(r.EffectiveFamily()))
			ok = false
		}
	}
	return ok
}

// ipProtos are the protocol names ipproto takes, as iproute2 spells them.
var ipProtos = map[string]uint8{"icmp": 1, "tcp": 6, "udp": 17, "dccp": 33, "gre": 47, "esp": 50,
	"ah": 51, "ipv6-icmp": 58, "icmpv6": 58, "sctp": 132}

// parseIPProto reads a protocol name or number (1-255).
func parseIPProto(s string) (uint8, bool) {
	if p, ok := ipProtos[strings.ToLower(s)]; ok {
		return p, true
	}
	n, err := strconv.ParseUint(s, 10, 8)
	return uint8(n), err == nil && n > 0
}

// ParseIPProto returns the number of an ipproto Validate accepts.
func ParseIPProto(s string) uint8 {
	p, _ := parseIPProto(s)
	return p
}

// hasPorts reports whether the protocol carries ports the kernel matches.
func hasPorts(p uint8) bool { return p == 6 || p == 17 || p == 33 || p == 132 }

// parseRange reads "N" or "N-M" with lo <= N <= M <= hi.
func parseRange(s string, lo, hi uint64) (uint64, uint64, error) {
	a, b, isRange := strings.Cut(s, "-")
	if !isRange {
		b = a
	}
	start, err1 := strconv.ParseUint(a, 10, 32)
	end, err2 := strconv.ParseUint(b, 10, 32)
	switch {
	case err1 != nil || err2 != nil:
		return 0, 0, fmt.Errorf("want a number or a range N-M of numbers %d-%d", lo, hi)
	case start < lo || end > hi:
		return 0, 0, fmt.Errorf("out of range (%d-%d)", lo, hi)
	case start > end:
		return 0, 0, fmt.Errorf("the range ends before it starts")
	}
	return start, end, nil
}

// ParseRange returns the bounds of a sport, dport or uidrange Validate
// accepts.
func ParseRange(s string) (start, end uint32) {
	a, b, _ := parseRange(s, 0, 4294967295)
	return uint32(a), uint32(b)
}

// selector checks a rule's from or to prefix, if set.
func (c *checker) selector(at Origin, field, s string) (famClaim, bool) {
	if s == "" {
		return famClaim{}, true
	}
	p, ok := c.network(at.field(field), s)
	if !ok {
		return famClaim{}, false
	}
	return famClaim{field: field, text: s, fam: familyOf(p.Addr())}, true
}

// optIfname checks the syntax of an interface name, if set, that may name
// an interface the agent does not define.
func (c *checker) optIfname(o Origin, name string) {
	if name != "" {
		c.ifname(o, name)
	}
}

// ruleKey is a rule's priority and selectors; the action (and table) is
// not part of it.
func ruleKey(r *Rule) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s rule at priority %d", famName(r.EffectiveFamily()), r.Priority)
	if r.Not {
		b.WriteString(" not")
	}
	fmt.Fprintf(&b, " from %s to %s", normPrefix(r.From), normPrefix(r.To))
	if r.IPProto != "" {
		fmt.Fprintf(&b, " ipproto %d", ParseIPProto(r.IPProto))
	}
	for _, sel := range []struct{ name, v string }{{"sport", r.SPort}, {"dport", r.DPort}, {"uidrange", r.UIDRange}} {
		if sel.v != "" {
			start, end := ParseRange(sel.v)
			fmt.Fprintf(&b, " %s %d-%d", sel.name, start, end)
		}
	}
	if r.FwMark != 0 || r.FwMask != 0 {
		mask := r.FwMask
		if mask == 0 {
			mask = 0xffffffff
		}
		fmt.Fprintf(&b, " fwmark %#x/%#x", r.FwMark, mask)
	}
	for _, sel := range []struct{ name, dev string }{{"iif", r.IIF}, {"oif", r.OIF}} {
		if sel.dev != "" {
			fmt.Fprintf(&b, " %s %q", sel.name, sel.dev)
		}
	}
	return b.String()
}

// normPrefix returns the canonical form of a rule's selector: "all" for
// none and for a prefix of length 0 (the kernel keeps no selector for it),
// or s itself if it is not a prefix.
func normPrefix(s string) string {
	if s == "" {
		return "all"
	}
	if p, err := netip.ParsePrefix(s); err == nil {
		if p.Bits() == 0 {
			return "all"
		}
		return p.Masked().String()
	}
	return s
}
