package intent

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"
)

// The firewall section: the chains, "firewall.chains".
var firewallSection = listSection("firewall.chains", func(in *Intent) *[]Chain { return &in.Firewall.Chains },
	func(x *Chain) *Origin { return &x.Origin }, chainKeys, (*checker).firewall, false) // Validate fills Chain.Args

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

	Drift DriftPolicy `json:"drift,omitempty"` // "": the file's (DriftPolicy)

	Origin Origin `json:"-"`
}

// EffectiveFamily returns the chain's family, ipv4 when unset.
func (c *Chain) EffectiveFamily() ChainFamily { return orDefault(c.Family, ChainIPv4) }

// EffectivePosition returns the jump's position, 1 when unset.
func (c *Chain) EffectivePosition() int { return orDefault(c.Position, 1) }

// Families returns the families the chain goes to: one, or both.
func (c *Chain) Families() []Family {
	switch c.EffectiveFamily() {
	case ChainIPv6:
		return []Family{FamilyIPv6}
	case ChainBoth:
		return []Family{FamilyIPv4, FamilyIPv6}
	}
	return []Family{FamilyIPv4}
}

// firewall checks every chain and splits its rules into Args.
func (c *checker) firewall() {
	seen := map[string]Origin{}
	for i := range c.in.Firewall.Chains {
		ch := &c.in.Firewall.Chains[i]
		at := c.in.Locate(ch.Origin, "firewall.chains", i)
		ok := c.chain(ch, at)
		ch.Args = c.chainRules(ch.Rules, at.field("rules"))
		if ok {
			for _, k := range chainKeys(ch) {
				c.unique(seen, k, at)
			}
		}
	}
	c.jumpPositions()
	defined := chainFamilies(c.in.Firewall.Chains)
	for i := range c.in.Firewall.Chains {
		ch := &c.in.Firewall.Chains[i]
		c.ruleFamilies(ch, c.in.Locate(ch.Origin, "firewall.chains", i).field("rules"), defined)
		c.ruleTargets(ch, c.in.Locate(ch.Origin, "firewall.chains", i).field("rules"))
	}
}

// jumpPositions reports explicit jump positions that two chains claim in
// one built-in chain of one family and table: netagent's jumps there form
// one block ordered by position, so equal positions contradict each other.
// Each claim is reported, naming the others.
func (c *checker) jumpPositions() {
	type claim struct {
		at   Origin
		fams []Family
	}
	claims := map[string][]claim{}
	var order []string
	for i := range c.in.Firewall.Chains {
		ch := &c.in.Firewall.Chains[i]
		if ch.Position <= 0 || ch.JumpFrom == "" {
			continue
		}
		k := fmt.Sprintf("position %d of the jumps from %s in table %s", ch.Position, ch.JumpFrom, ch.Table)
		if len(claims[k]) == 0 {
			order = append(order, k)
		}
		claims[k] = append(claims[k], claim{c.in.Locate(ch.Origin, "firewall.chains", i).field("position"), ch.Families()})
	}
	for _, k := range order {
		for i, cl := range claims[k] {
			var others []string
			for j, o := range claims[k] {
				if j != i && slices.ContainsFunc(o.fams, func(f Family) bool { return slices.Contains(cl.fams, f) }) {
					others = append(others, o.at.String())
				}
			}
			if len(others) > 0 {
				c.fail(cl.at, "%s is also claimed at %s: the jumps from one built-in chain are one block ordered by position, so positions must differ",
					k, strings.Join(others, " and "))
			}
		}
	}
}

// targetTables are the targets the kernel accepts in one table only.
var targetTables = map[string]FirewallTable{
	"DNAT": "nat", "SNAT": "nat", "MASQUERADE": "nat", "REDIRECT": "nat", "NETMAP": "nat",
	"CT": "raw", "NOTRACK": "raw",
}

// targetHooks are the built-in chains from which the kernel lets a NAT
// target be reached.
var targetHooks = map[string][]BuiltinChain{
	"MASQUERADE": {"POSTROUTING"},
	"SNAT":       {"POSTROUTING", "INPUT"},
	"DNAT":       {"PREROUTING", "OUTPUT"},
	"REDIRECT":   {"PREROUTING", "OUTPUT"},
}

// ruleTargets rejects a rule whose target the kernel refuses in the
// chain's table, or from the built-in chain the chain is jumped to from
// (iptables-nft only says "Invalid argument" at apply time).
func (c *checker) ruleTargets(ch *Chain, o Origin) {
	for j, args := range ch.Args {
		for i := 0; i+1 < len(args); i++ {
			if args[i] != "-j" && args[i] != "--jump" {
				continue
			}
			target := args[i+1]
			if table, ok := targetTables[target]; ok && table != ch.Table {
				c.fail(o.index(j), "target %s is only valid in table %s, not %s", target, table, ch.Table)
				continue
			}
			hooks, ok := targetHooks[target]
			if ok && ch.JumpFrom != "" && !slices.Contains(hooks, ch.JumpFrom) {
				names := make([]string, len(hooks))
				for k, h := range hooks {
					names[k] = string(h)
				}
				c.fail(o.index(j), "target %s is only valid from %s, but the chain is jumped to from %s",
					target, strings.Join(names, ", "), ch.JumpFrom)
			}
		}
	}
}

// chainFamilies maps "<table> <name>" of every chain to the families the
// intent defines it in.
func chainFamilies(chains []Chain) map[string][]Family {
	out := map[string][]Family{}
	for i := range chains {
		k := string(chains[i].Table) + " " + chains[i].Name
		for _, f := range chains[i].Families() {
			if !slices.Contains(out[k], f) {
				out[k] = append(out[k], f)
			}
		}
	}
	return out
}

// ruleFamilies checks that every rule of a chain can be written in each of
// the chain's families (a "both" chain goes to iptables and ip6tables
// alike): its addresses (-s, -d, --to-source, --to-destination) are of
// that family, and the chains of the intent it jumps or goes to exist in
// it. The kernel would refuse the rule when the chain is applied.
func (c *checker) ruleFamilies(ch *Chain, o Origin, defined map[string][]Family) {
	fams := ch.Families()
	for j, args := range ch.Args {
		for i := 0; i+1 < len(args); i++ {
			opt, val := args[i], args[i+1]
			switch opt {
			case "-s", "--source", "--src", "-d", "--destination", "--dst", "--to-source", "--to-destination":
				for _, a := range ruleAddrs(val) {
					if f := familyOf(a); len(fams) > 1 || !slices.Contains(fams, f) {
						c.fail(o.index(j), "%s %s is %s, but the chain is %s", opt, val, famName(f), chainFamName(ch))
						break
					}
				}
			case "-j", "--jump", "-g", "--goto":
				have, ok := defined[string(ch.Table)+" "+val]
				if !ok {
					continue
				}
				for _, f := range fams {
					if !slices.Contains(have, f) {
						c.fail(o.index(j), "%s %s: chain %q of table %s is not defined for %s", opt, val, val, ch.Table, famName(f))
					}
				}
			}
		}
	}
}

// chainFamName describes a chain's families for an error message.
func chainFamName(ch *Chain) string {
	if ch.EffectiveFamily() == ChainBoth {
		return `for both families (family "both" writes every rule to iptables and ip6tables)`
	}
	return famName(ch.Families()[0]) + " only"
}

// ruleAddrs returns the addresses of an address option's value: a
// comma-separated list of addresses or prefixes, and for NAT targets an
// address or range with a port ("192.0.2.1-192.0.2.9:80", "[2001:db8::1]:80").
// Host names and anything else it cannot read are left out.
func ruleAddrs(val string) []netip.Addr {
	var out []netip.Addr
	for _, part := range strings.Split(val, ",") {
		if strings.HasPrefix(part, "[") {
			if end := strings.Index(part, "]"); end > 0 {
				part = part[1:end]
			}
		} else if strings.Count(part, ":") == 1 && strings.Contains(part, ".") {
			part = part[:strings.Index(part, ":")] // IPv4 with a port
		}
		for _, one := range strings.Split(part, "-") {
			if p, err := netip.ParsePrefix(one); err == nil {
				out = append(out, p.Addr())
			} else if a, err := netip.ParseAddr(one); err == nil {
				out = append(out, a)
			}
		}
	}
	return out
}

// chain checks a chain's own fields; it returns whether its identity is
// sound.
func (c *checker) chain(ch *Chain, at Origin) bool {
	tableOK := requiredOneOf(c, at.field("table"), ch.Table, fwTables)
	nameOK := c.chainName(at.field("name"), ch.Name)
	famOK := oneOf(c, at.field("family"), ch.Family, chainFams)
	if oneOf(c, at.field("jumpFrom"), ch.JumpFrom, builtins) && tableOK {
		c.jumpFrom(ch, at.field("jumpFrom"))
	}
	switch {
	case ch.Position < 0:
		c.fail(at.field("position"), "%d is out of range (1 or more)", ch.Position)
	case ch.Position > 0 && ch.JumpFrom == "":
		c.fail(at.field("position"), "only allowed with jumpFrom")
	}
	return tableOK && nameOK && famOK
}

// jumpFrom checks that the chain jumped from is a built-in of the table.
func (c *checker) jumpFrom(ch *Chain, o Origin) {
	valid := builtinsOf[ch.Table]
	if ch.JumpFrom != "" && !slices.Contains(valid, ch.JumpFrom) {
		c.fail(o, "%q is not a built-in chain of table %s (want %s)", ch.JumpFrom, ch.Table, joinValues(valid))
	}
}

// builtinTargets are the targets iptables reserves besides chain names.
var builtinTargets = []string{"ACCEPT", "DROP", "QUEUE", "RETURN"}

// chainName checks a user chain name: 1-28 bytes of printable ASCII without
// spaces, not starting with '-' or '!', and not a built-in chain or target.
func (c *checker) chainName(o Origin, name string) bool {
	switch {
	case name == "":
		c.fail(o, "is required")
	case len(name) > 28:
		c.fail(o, "%q is longer than 28 bytes", name)
	case strings.ContainsFunc(name, func(r rune) bool { return r <= ' ' || r > '~' }):
		c.fail(o, "%q contains a space or a character that is not printable ASCII", name)
	case name[0] == '-' || name[0] == '!':
		c.fail(o, "%q cannot start with %q", name, name[0])
	case slices.Contains(builtins, BuiltinChain(name)):
		c.fail(o, "%q is the name of a built-in chain", name)
	case slices.Contains(builtinTargets, name):
		c.fail(o, "%q is the name of a built-in target", name)
	default:
		return true
	}
	return false
}

// chainRules splits each rule into arguments, reporting rules that do not
// split, are empty, or try to choose the table or a command themselves.
func (c *checker) chainRules(rules []string, o Origin) [][]string {
	args := make([][]string, len(rules))
	for j, rule := range rules {
		a, err := SplitRule(rule)
		switch {
		case err != nil:
			c.fail(o.index(j), "%v", err)
		case len(a) == 0:
			c.fail(o.index(j), "is empty")
		default:
			if bad := slices.IndexFunc(a, isCommandOption); bad >= 0 {
				c.fail(o.index(j), "%q is not allowed in a rule: the agent chooses the table, chain and command", a[bad])
			}
			c.markedRule(o.index(j), a)
			args[j] = a
		}
	}
	return args
}

// commandLongOptions are iptables' options that pick the table or the
// command, which a rule must leave to the agent.
var commandLongOptions = []string{
	"table", "append", "check", "delete", "insert", "replace", "list", "list-rules",
	"flush", "zero", "new-chain", "delete-chain", "policy", "rename-chain",
}

// commandShortOptions are the one-letter forms of commandLongOptions.
const commandShortOptions = "tACDIRLSFZNXPE"

// isCommandOption reports whether arg is one of the command or table
// options: "-A", "--append", "--append=X", or "-t" with its value attached
// ("-tnat"). Abbreviated long options ("--app") are not caught here; iptables
// itself refuses a second command or table.
func isCommandOption(arg string) bool {
	if name, ok := strings.CutPrefix(arg, "--"); ok {
		name, _, _ = strings.Cut(name, "=")
		return slices.Contains(commandLongOptions, name)
	}
	if len(arg) < 2 || arg[0] != '-' || strings.IndexByte(commandShortOptions, arg[1]) < 0 {
		return false
	}
	return len(arg) == 2 || arg[1] == 't'
}

// chainKeys returns a chain's identity in each family it goes to.
func chainKeys(ch *Chain) []string {
	var keys []string
	for _, f := range ch.Families() {
		keys = append(keys, fmt.Sprintf("%s chain %q in table %s", famName(f), ch.Name, ch.Table))
	}
	return keys
}
