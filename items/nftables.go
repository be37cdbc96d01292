package items

import (
	"bytes"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"

	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/internal/jsonstr"
)

// TypeNftTable is the item type of a whole nftables table netagent owns.
const TypeNftTable = "nft-table"

// NftOwnerChain is the regular chain that marks a table as netagent's: the
// configurator creates it, empty, in every table it makes, and treats a
// table without it as someone else's (a clash, never a takeover). The
// library netagent uses (google/nftables v0.3.0) cannot write a table's
// user data, which would be the quieter mark.
const NftOwnerChain = "netagent-owned"

// NftTable is an nftables table, wholly netagent's, with its chains, their
// rules and its named sets. Its name is "<family>/<name>" ("inet/netagent").
// The configurator writes a table as a whole, in one netlink transaction,
// so every change is a Modify. The same type is the intent's "nftables"
// section (agent/intent), so its JSON names are a contract.
type NftTable struct {
	Family string     `json:"family"` // inet, ip, ip6, bridge, netdev
	Table  string     `json:"name"`
	Chains []NftChain `json:"chains,omitempty"`
	Sets   []NftSet   `json:"sets,omitempty"`
	Maps   []NftMap   `json:"maps,omitempty"`
}

// NftChain is a chain: a base chain when Hook is set (with Type,
// Priority, Policy and, for the ingress and egress hooks, Device), a
// regular chain otherwise.
type NftChain struct {
	Name     string       `json:"name"`
	Type     string       `json:"type,omitempty"` // filter, nat, route
	Hook     string       `json:"hook,omitempty"` // prerouting, input, forward, output, postrouting, ingress, egress
	Priority *NftPriority `json:"priority,omitempty"`
	Policy   string       `json:"policy,omitempty"` // accept (""), drop
	Device   string       `json:"device,omitempty"`
	Rules    []NftRule    `json:"rules,omitempty"`
}

// Base reports whether the chain is a base chain.
func (c *NftChain) Base() bool { return c.Hook != "" }

// NftPriority is a base chain's priority: a number, or one of nft's
// standard names ("filter", "srcnat", ...) plus Offset. In JSON it is a
// number or a name.
type NftPriority struct {
	Name  string // "" for a number
	Value int    // the number, or the offset from the name's value
}

// JSONNumberOrName marks the type as a number or a name in JSON (for the
// intent's shape check).
func (NftPriority) JSONNumberOrName() {}

// MarshalJSON writes a number or a name.
func (p NftPriority) MarshalJSON() ([]byte, error) {
	if p.Name != "" && p.Value == 0 {
		return []byte(strconv.Quote(p.Name)), nil
	}
	if p.Name != "" {
		return nil, fmt.Errorf("priority %s%+d: only a number or a name", p.Name, p.Value)
	}
	return []byte(strconv.Itoa(p.Value)), nil
}

// UnmarshalJSON reads a number or a name.
func (p *NftPriority) UnmarshalJSON(b []byte) error {
	s, n, _, err := jsonstr.NumberOrString(b, "a name")
	if err != nil {
		return fmt.Errorf("priority %w", err)
	}
	*p = NftPriority{Name: s, Value: n}
	return nil
}

// nftPriorities are the values nft gives the standard priority names
// (nft(8), "PRIORITY"), by family class: the bridge family has its own.
var nftPriorities = map[string]map[string]int{
	"ip":     {"raw": -300, "mangle": -150, "dstnat": -100, "filter": 0, "security": 50, "srcnat": 100},
	"bridge": {"dstnat": -300, "filter": -200, "out": 100, "srcnat": 300},
	"netdev": {"filter": 0},
}

// nftPriorityHooks are the hooks a standard name may be used on (nft
// refuses it on others); a name not listed may be used on any hook.
var nftPriorityHooks = map[string][]string{
	"dstnat": {"prerouting", "output"},
	"srcnat": {"postrouting", "input"},
	"out":    {"output"},
}

// NftPriorityValue returns the number a priority stands for in family
// (a table family) on hook, or false for a name nft does not define there.
func NftPriorityValue(family, hook string, p NftPriority) (int, bool) {
	if p.Name == "" {
		return p.Value, true
	}
	class := family
	if family == "inet" || family == "ip6" {
		class = "ip"
	}
	v, ok := nftPriorities[class][p.Name]
	if !ok {
		return 0, false
	}
	if hooks, limited := nftPriorityHooks[p.Name]; limited && !slices.Contains(hooks, hook) {
		return 0, false
	}
	return v + p.Value, true
}

// NftRule is one rule: every match set must hold (an empty rule matches
// every packet), then its statements run in the order limit, counter,
// log, one action (masquerade, snat, dnat, redirect, reject), verdict.
//
// An address match is an address, a prefix or "@set" (a named set of
// ipv4_addr or ipv6_addr elements); a port match is a port, a range
// "lo-hi" or "@set" (of inet_service elements), and needs Protocol tcp or
// udp. "!@set" matches what the set does not hold.
type NftRule struct {
	IIfName  string   `json:"iifname,omitempty"`
	OIfName  string   `json:"oifname,omitempty"`
	Saddr    string   `json:"saddr,omitempty"`
	Daddr    string   `json:"daddr,omitempty"`
	Protocol string   `json:"protocol,omitempty"` // tcp, udp, icmp, icmpv6, sctp, or a number
	Sport    string   `json:"sport,omitempty"`
	Dport    string   `json:"dport,omitempty"`
	ICMPType string   `json:"icmpType,omitempty"` // with Protocol icmp or icmpv6: a type name nft knows, or a number
	CtState  []string `json:"ctState,omitempty"`  // new, established, related, invalid, untracked: any of them
	Mark     *uint32  `json:"mark,omitempty"`     // the packet's mark (meta mark)
	Vmap     *NftVmap `json:"vmap,omitempty"`     // the verdict, from a verdict map (no Verdict then)

	Limit      *NftLimit    `json:"limit,omitempty"`
	Counter    bool         `json:"counter,omitempty"`
	Log        *NftLog      `json:"log,omitempty"`
	Masquerade bool         `json:"masquerade,omitempty"`
	SNAT       string       `json:"snat,omitempty"` // address or range a-b, with :port or :lo-hi ([ipv6]:port)
	DNAT       string       `json:"dnat,omitempty"`
	Redirect   *NftRedirect `json:"redirect,omitempty"`
	Reject     *NftReject   `json:"reject,omitempty"`
	Verdict    string       `json:"verdict,omitempty"` // accept, drop, return, jump, goto; "": none
	Target     string       `json:"target,omitempty"`  // the chain of jump and goto
}

// NftSet is a named set of typed elements.
type NftSet struct {
	Name     string `json:"name"`
	Type     string `json:"type"` // ipv4_addr, ipv6_addr, inet_service
	Interval bool   `json:"interval,omitempty"`
	// Timeout, when set, is the set's timeout flag (NFT_SET_TIMEOUT) and
	// its default element timeout, a duration ("1h", "90s"; "0s": the
	// flag alone, elements kept until deleted): see NftSetTimeout.
	Timeout  string   `json:"timeout,omitempty"`
	Elements []string `json:"elements,omitempty"` // addresses (prefixes and ranges with Interval), ports (ranges with Interval)
}

var _ dg.Item = (*NftTable)(nil)

// Type returns TypeNftTable.
func (t *NftTable) Type() string { return TypeNftTable }

// Name returns "<family>/<name>".
func (t *NftTable) Name() string { return t.Family + "/" + t.Table }

// External returns false.
func (t *NftTable) External() bool { return false }

// Dependencies: none (nftables accepts names of absent interfaces).
func (t *NftTable) Dependencies() []dg.Dependency { return nil }

// Equal compares the tables as the kernel holds them: priorities by
// value, an unset policy as accept, empty lists as absent.
func (t *NftTable) Equal(other dg.Item) bool {
	o, ok := other.(*NftTable)
	if !ok || o == nil {
		return false
	}
	if t.Family != o.Family || t.Table != o.Table || len(t.Chains) != len(o.Chains) || len(t.Sets) != len(o.Sets) || len(t.Maps) != len(o.Maps) {
		return false
	}
	// Chains, sets and maps in the order of their names: their order has no
	// meaning (the kernel keeps them in creation order, which a
	// fine-grained modify does not keep). Part by part, the canonical
	// form only of what differs as written: a set of 100k elements costs
	// its parse.
	tc, oc := sortedBy(t.Chains, chainName), sortedBy(o.Chains, chainName)
	for i := range tc {
		if !tc[i].Same(&oc[i]) && !sameChain(canonicalChain(t.Family, tc[i]), canonicalChain(o.Family, oc[i])) {
			return false
		}
	}
	ts, us := sortedBy(t.Sets, setName), sortedBy(o.Sets, setName)
	for i := range ts {
		// The canonical form keeps the number of elements.
		if len(ts[i].Elements) != len(us[i].Elements) {
			return false
		}
		if !reflect.DeepEqual(ts[i], us[i]) && !reflect.DeepEqual(canonicalSet(ts[i]), canonicalSet(us[i])) {
			return false
		}
	}
	tm, um := sortedBy(t.Maps, mapName), sortedBy(o.Maps, mapName)
	for i := range tm {
		if !reflect.DeepEqual(tm[i], um[i]) && !reflect.DeepEqual(canonicalMap(tm[i]), canonicalMap(um[i])) {
			return false
		}
	}
	return true
}

// Same reports whether c and o are the same chain as written (a nil and
// an empty list alike): Equal's and the differ's comparison of what
// needs no canonical form, without reflection (a table of 10k rules is
// compared on every read-back).
func (c *NftChain) Same(o *NftChain) bool {
	return c.Name == o.Name && c.Type == o.Type && c.Hook == o.Hook && c.Policy == o.Policy && c.Device == o.Device &&
		ptrEqual(c.Priority, o.Priority) && slices.EqualFunc(c.Rules, o.Rules, func(a, b NftRule) bool { return a.Same(&b) })
}

// Same reports whether r and o are the same rule as written (a nil and
// an empty list alike).
func (r *NftRule) Same(o *NftRule) bool {
	return r.IIfName == o.IIfName && r.OIfName == o.OIfName && r.Saddr == o.Saddr && r.Daddr == o.Daddr &&
		r.Protocol == o.Protocol && r.Sport == o.Sport && r.Dport == o.Dport && r.ICMPType == o.ICMPType &&
		slices.Equal(r.CtState, o.CtState) && ptrEqual(r.Mark, o.Mark) && ptrEqual(r.Vmap, o.Vmap) &&
		ptrEqual(r.Limit, o.Limit) && r.Counter == o.Counter && ptrEqual(r.Log, o.Log) &&
		r.Masquerade == o.Masquerade && r.SNAT == o.SNAT && r.DNAT == o.DNAT &&
		ptrEqual(r.Redirect, o.Redirect) && ptrEqual(r.Reject, o.Reject) && r.Verdict == o.Verdict && r.Target == o.Target
}

func sameChain(a, b NftChain) bool { return a.Same(&b) }

func chainName(c NftChain) string { return c.Name }
func setName(s NftSet) string     { return s.Name }
func mapName(m NftMap) string     { return m.Name }

// sortedBy is a copy of list in the order of name (stable).
func sortedBy[T any](list []T, name func(T) string) []T {
	out := slices.Clone(list)
	slices.SortStableFunc(out, func(a, b T) int { return strings.Compare(name(a), name(b)) })
	return out
}

// Canonical returns a copy of t in the form the configurator's read-back
// returns: priorities as numbers, the policy of base chains spelled out,
// nil for empty lists.
func (t *NftTable) Canonical() NftTable {
	out := NftTable{Family: t.Family, Table: t.Table}
	for _, c := range t.Chains {
		out.Chains = append(out.Chains, canonicalChain(t.Family, c))
	}
	for _, s := range t.Sets {
		out.Sets = append(out.Sets, canonicalSet(s))
	}
	for _, m := range t.Maps {
		out.Maps = append(out.Maps, canonicalMap(m))
	}
	return out
}

// canonicalChain is chain c of a table of family in canonical form.
func canonicalChain(family string, c NftChain) NftChain {
	c.Rules = canonicalRules(family, c.Rules)
	if c.Base() {
		v, _ := NftPriorityValue(family, c.Hook, derefPriority(c.Priority))
		c.Priority = &NftPriority{Value: v}
		if c.Policy == "" {
			c.Policy = "accept"
		}
	}
	return c
}

// CanonicalSets is sets with their elements in canonical form (spelled
// as the read-back does, in the order of their keys), the rest as is: the
// render gives an intent's table its sets in this form, so that Equal of
// the table read back is a comparison, not the parse of every element.
func CanonicalSets(sets []NftSet) []NftSet {
	if sets == nil {
		return nil
	}
	out := make([]NftSet, len(sets))
	for i, s := range sets {
		s.Elements = canonicalElements(s)
		out[i] = s
	}
	return out
}

func canonicalSet(s NftSet) NftSet {
	s.Elements = canonicalElements(s)
	s.Timeout = canonicalTimeout(s.Timeout)
	return s
}

func canonicalRules(family string, rules []NftRule) []NftRule {
	if len(rules) == 0 {
		return nil
	}
	// Copied only from the first rule not canonical already: an intent's
	// rules mostly are (and items are not changed, so they can be shared).
	var out []NftRule
	for i := range rules {
		r := canonicalRule(family, rules[i])
		if out == nil && (!r.Same(&rules[i]) || rules[i].CtState != nil && len(rules[i].CtState) == 0) { // Same: nil and empty alike
			out = make([]NftRule, len(rules))
			copy(out, rules[:i])
		}
		if out != nil {
			out[i] = r
		}
	}
	if out == nil {
		return rules
	}
	return out
}

// canonicalRule is r in canonical form.
func canonicalRule(family string, r NftRule) NftRule {
	r.CtState = canonicalCtState(r.CtState)
	r.Saddr, r.Daddr = canonicalAddr(r.Saddr), canonicalAddr(r.Daddr)
	r.SNAT, r.DNAT = canonicalNatTo(r.SNAT), canonicalNatTo(r.DNAT)
	if _, named := nftProtos[r.Protocol]; !named && r.Protocol != "" {
		if n := NftProtoNumber(r.Protocol); n >= 0 {
			r.Protocol = NftProtoName(n)
		}
	}
	if r.ICMPType != "" {
		if n := NftICMPType(r.Protocol, r.ICMPType); n >= 0 {
			r.ICMPType = NftICMPTypeName(r.Protocol, n)
		}
	}
	if r.Log != nil && r.Log.Level == "" {
		r.Log = &NftLog{Prefix: r.Log.Prefix, Level: "warn"}
	}
	if r.Limit != nil && r.Limit.Burst == 0 {
		l := *r.Limit
		l.Burst = NftLimitBurstDefault
		r.Limit = &l
	}
	r.Reject = canonicalReject(family, r.Reject)
	return r
}

// canonicalNatTo spells a nat statement's range as the read-back does.
func canonicalNatTo(s string) string {
	if s == "" { // most rules: no need to make the parse's error
		return s
	}
	if r, err := ParseNftNatTo(s); err == nil {
		return NftNatToString(r)
	}
	return s
}

// NftCtStates are the conntrack states a rule may match, in the order of
// their bits (NF_CT_STATE_*), which is the canonical order.
var NftCtStates = []string{"invalid", "established", "related", "new", "untracked"}

func canonicalCtState(states []string) []string {
	var out []string
	for _, s := range NftCtStates {
		if slices.Contains(states, s) {
			out = append(out, s)
		}
	}
	return out
}

// canonicalAddr spells an address match as the read-back does.
func canonicalAddr(s string) string {
	if s == "" || s[0] == '@' || s[0] == '!' { // no address: no need to make the parse's error
		return s
	}
	if p, err := ParseNftPrefix(s); err == nil {
		// The spelling as the read-back's, without an allocation when s
		// is it already (as an intent mostly writes it).
		var buf [64]byte
		b := p.Addr().AppendTo(buf[:0])
		if !p.IsSingleIP() {
			b = strconv.AppendInt(append(b, '/'), int64(p.Bits()), 10)
		}
		if string(b) != s {
			return string(b)
		}
	}
	return s
}

// canonicalElements spells a set's elements as the read-back does, in
// the order of their keys (stable; an element that does not parse first,
// as written). Elements already in that form and order (a read-back's,
// or an intent's rendered) are returned as they are, shared (items are
// not changed): a set of 100k is compared on every Equal.
func canonicalElements(s NftSet) []string {
	if len(s.Elements) == 0 {
		return nil
	}
	if canonicalAlready(s) {
		return s.Elements
	}
	type elem struct {
		key nftElemKey
		bad bool
		i   int
		s   string
	}
	els := make([]elem, len(s.Elements))
	var buf []byte
	for i, e := range s.Elements {
		k, err := parseNftElementKey(s.Type, s.Interval, e)
		if err != nil {
			els[i] = elem{bad: true, i: i, s: e}
			continue
		}
		els[i] = elem{key: k, i: i, s: e}
		if buf = appendNftElement(buf[:0], s.Type, &k); string(buf) != e {
			els[i].s = string(buf)
		}
	}
	slices.SortFunc(els, func(a, b elem) int {
		if c := compareElem(&a.key, a.bad, &b.key, b.bad); c != 0 {
			return c
		}
		return a.i - b.i // stable
	})
	out := make([]string, len(els))
	for i := range els {
		out[i] = els[i].s
	}
	return out
}

// canonicalAlready says whether every element of s parses, is spelled
// as the read-back does and comes after the one before it.
func canonicalAlready(s NftSet) bool {
	var prev nftElemKey
	var buf []byte
	for i, e := range s.Elements {
		var k nftElemKey
		if a, ok := canonicalIPv4(e); ok && s.Type == "ipv4_addr" { // spelled as the read-back does
			k.n, k.lo[0], k.lo[1], k.lo[2], k.lo[3] = 4, byte(a>>24), byte(a>>16), byte(a>>8), byte(a)
		} else {
			var err error
			if k, err = parseNftElementKey(s.Type, s.Interval, e); err != nil {
				return false
			}
			if buf = appendNftElement(buf[:0], s.Type, &k); string(buf) != e {
				return false
			}
		}
		if i > 0 && compareElem(&prev, false, &k, false) > 0 {
			return false
		}
		prev = k
	}
	return true
}

// NftElementsAscending says whether every element of a set of type typ
// parses and each one's key is above the one before it (so that no two
// are equal).
func NftElementsAscending(typ string, interval bool, elems []string) bool {
	var prev nftElemKey
	for i, e := range elems {
		k, err := parseNftElementKey(typ, interval, e)
		if err != nil || i > 0 && compareElem(&prev, false, &k, false) >= 0 {
			return false
		}
		prev = k
	}
	return true
}

// NftElementsDiff returns the elements of have that want lacks (del) and
// those of want that have lacks (add), in one walk along both, when both
// are in strictly ascending order of their keys (ok; false otherwise).
// Two elements of the same start are equal only as the same string (an
// interval of another end is deleted and added).
func NftElementsDiff(typ string, interval bool, have, want []string) (del, add []string, ok bool) {
	var hp, wp nftElemKey
	i, j := 0, 0
	for i < len(have) || j < len(want) {
		var hk, wk nftElemKey
		var err error
		if i < len(have) {
			if hk, err = parseNftElementKey(typ, interval, have[i]); err != nil || i > 0 && compareElem(&hp, false, &hk, false) >= 0 {
				return nil, nil, false
			}
		}
		if j < len(want) {
			if wk, err = parseNftElementKey(typ, interval, want[j]); err != nil || j > 0 && compareElem(&wp, false, &wk, false) >= 0 {
				return nil, nil, false
			}
		}
		c := 0
		switch {
		case i == len(have):
			c = 1
		case j == len(want):
			c = -1
		default:
			c = compareElem(&hk, false, &wk, false)
		}
		switch {
		case c < 0:
			del = append(del, have[i])
		case c > 0:
			add = append(add, want[j])
		case have[i] != want[j]:
			del, add = append(del, have[i]), append(add, want[j])
		}
		if c <= 0 {
			hp, i = hk, i+1
		}
		if c >= 0 {
			wp, j = wk, j+1
		}
	}
	return del, add, true
}

// compareElem orders elements by their low keys, one that does not parse
// (bad) first.
func compareElem(a *nftElemKey, aBad bool, b *nftElemKey, bBad bool) int {
	switch {
	case aBad || bBad:
		if aBad == bBad {
			return 0
		}
		if aBad {
			return -1
		}
		return 1
	}
	return bytes.Compare(a.lo[:a.n], b.lo[:b.n])
}

func derefPriority(p *NftPriority) NftPriority {
	if p == nil {
		return NftPriority{}
	}
	return *p
}

// String describes the table in one line.
func (t *NftTable) String() string {
	rules := 0
	for _, c := range t.Chains {
		rules += len(c.Rules)
	}
	return fmt.Sprintf("nft-table %s %d chains, %d rules, %d sets", t.Name(), len(t.Chains), rules, len(t.Sets))
}

// Validate checks what the configurator relies on: a known family, a
// name, a priority on every base chain and parseable set elements (the
// intent's Validate checks the rest, with JSON paths).
func (t *NftTable) Validate() error {
	if _, ok := nftPriorities[t.Family]; !ok && t.Family != "inet" && t.Family != "ip6" {
		return invalid(t, "family is not inet, ip, ip6, bridge or netdev")
	}
	if t.Table == "" {
		return invalid(t, "no name")
	}
	for _, c := range t.Chains {
		if c.Base() && c.Priority == nil {
			return invalid(t, "base chain %s has no priority", c.Name)
		}
	}
	for _, s := range t.Sets {
		if err := CheckNftSetTimeout(s); err != nil {
			return invalid(t, "set %s: %v", s.Name, err)
		}
		for _, e := range s.Elements {
			if err := CheckNftElement(s.Type, s.Interval, e); err != nil {
				return invalid(t, "set %s: %v", s.Name, err)
			}
		}
	}
	for _, m := range t.Maps {
		for _, e := range m.Elements {
			if err := CheckNftMapElement(m, e); err != nil {
				return invalid(t, "map %s: %v", m.Name, err)
			}
		}
	}
	return nil
}
