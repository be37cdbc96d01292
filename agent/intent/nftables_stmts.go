package intent

import (
	"slices"
	"strings"
	"unicode"

	"github.com/netagent/netagent/items"
)

// nftAction is a statement that decides what happens to the packet short
// of a verdict (one per rule), with where the kernel lets it run.
type nftAction struct {
	name string
	set  func(r *items.NftRule) bool
	nat  bool     // only in a nat chain
	hook []string // the hooks of the base chains that may reach it
}

// nftActions are the kernel's rules for each action: nft_masq_validate,
// nft_nat_validate, nft_redir_validate, nft_reject_validate (and
// nft_reject_inet_validate, which adds ingress).
var nftActions = []nftAction{
	{"masquerade", func(r *items.NftRule) bool { return r.Masquerade }, true, []string{"postrouting"}},
	{"snat", func(r *items.NftRule) bool { return r.SNAT != "" }, true, []string{"postrouting", "input"}},
	{"dnat", func(r *items.NftRule) bool { return r.DNAT != "" }, true, []string{"prerouting", "output"}},
	{"redirect", func(r *items.NftRule) bool { return r.Redirect != nil }, true, []string{"prerouting", "output"}},
	{"reject", func(r *items.NftRule) bool { return r.Reject != nil }, false, []string{"prerouting", "input", "forward", "output"}},
}

// actionHooks returns the hooks a's base chains may be on in family.
func (a nftAction) actionHooks(family string) []string {
	if a.name == "reject" && family == "inet" {
		return append(slices.Clone(a.hook), "ingress")
	}
	return a.hook
}

// nftRuleFamily returns "ip" or "ip6" when r's addresses (or their sets)
// say which, or "".
func nftRuleFamily(r *items.NftRule, sets map[string]*items.NftSet) string {
	for _, v := range []string{r.Saddr, r.Daddr} {
		if name, ok := nftSetRef(v); ok {
			if s := sets[name]; s != nil && s.Type == "ipv4_addr" {
				return "ip"
			} else if s != nil && s.Type == "ipv6_addr" {
				return "ip6"
			}
		} else if p, err := items.ParseNftPrefix(v); err == nil {
			if p.Addr().Is4() {
				return "ip"
			}
			return "ip6"
		}
	}
	return ""
}

// nftICMPFamily checks that an icmp (ip) or icmpv6 (ip6) thing, what,
// fits the table's family and the rule's addresses.
func (c *checker) nftICMPFamily(family, ruleFamily, proto, what string, at Origin) {
	want := map[string]string{"icmp": "ip", "icmpv6": "ip6"}[proto]
	switch {
	case want == "":
	case (family == "ip" || family == "ip6") && family != want:
		c.fail(at, "%s is not for family %s (it is %s's)", what, family, want)
	case ruleFamily != "" && ruleFamily != want:
		c.fail(at, "%s is not for the rule's %s addresses (it is %s's)", what, ruleFamily, want)
	}
}

// nftICMPTypeMatch checks an icmpType match.
func (c *checker) nftICMPTypeMatch(family string, r *items.NftRule, at Origin, sets map[string]*items.NftSet) {
	proto := items.NftProtoName(items.NftProtoNumber(r.Protocol))
	if proto != "icmp" && proto != "icmpv6" {
		c.fail(at, "an icmpType match needs protocol icmp or icmpv6")
		return
	}
	if items.NftICMPType(proto, r.ICMPType) < 0 {
		c.fail(at, "%q is not an %s type (want a number 0-255 or %s)", r.ICMPType, proto, strings.Join(items.NftICMPTypeNames(proto), ", "))
		return
	}
	c.nftICMPFamily(family, nftRuleFamily(r, sets), proto, "an "+proto+" type", at)
}

// nftStatements checks limit, log and the rule's one action.
func (c *checker) nftStatements(family string, r *items.NftRule, at Origin, sets map[string]*items.NftSet) {
	if l := r.Limit; l != nil {
		if l.Rate == 0 {
			c.fail(at.field("limit").field("rate"), "is required and above 0 (the kernel refuses a limit of 0)")
		}
		if _, ok := items.NftLimitUnits[l.Per]; !ok {
			c.fail(at.field("limit").field("per"), "%q is not a unit of a limit's rate (want second, minute, hour, day, week)", l.Per)
		}
		if items.NftLimitOverflows(*l) {
			c.fail(at.field("limit"), "%d/%s with burst %d is beyond what the kernel counts (its EOVERFLOW)", l.Rate, l.Per, l.Burst)
		}
	}
	if r.Log != nil {
		c.nftLog(r.Log, at.field("log"))
	}
	var actions []string
	for _, a := range nftActions {
		if !a.set(r) {
			continue
		}
		actions = append(actions, a.name)
		if len(actions) > 1 {
			c.fail(at.field(a.name), "a rule has at most one of masquerade, snat, dnat, redirect, reject (it has %s)", strings.Join(actions, ", "))
		}
		if family != "inet" && family != "ip" && family != "ip6" {
			c.fail(at.field(a.name), "%s is only in the inet, ip and ip6 families, not %s", a.name, family)
			continue
		}
		switch a.name {
		case "snat", "dnat":
			c.nftNatTo(family, r, a.name, at.field(a.name))
		case "redirect":
			c.nftRedirect(r, at.field("redirect").field("port"))
		case "reject":
			c.nftReject(family, r, at, sets)
		}
	}
}

func (c *checker) nftLog(l *items.NftLog, at Origin) {
	if l.Level != "" && !slices.Contains(items.NftLogLevels, l.Level) {
		c.fail(at.field("level"), "%q is not a log level nft knows (want %s)", l.Level, strings.Join(items.NftLogLevels, ", "))
	}
	if len(l.Prefix) > items.NftLogPrefixMax {
		c.fail(at.field("prefix"), "is %d bytes: the kernel keeps at most %d", len(l.Prefix), items.NftLogPrefixMax)
	}
	if strings.ContainsFunc(l.Prefix, unicode.IsControl) {
		c.fail(at.field("prefix"), "%q holds a control character", l.Prefix)
	}
	if l.Level == "audit" && l.Prefix != "" {
		c.fail(at.field("prefix"), "a log at level audit takes no prefix (nft refuses it)")
	}
}

func (c *checker) nftNatTo(family string, r *items.NftRule, name string, at Origin) {
	to := r.SNAT
	if name == "dnat" {
		to = r.DNAT
	}
	nr, err := items.ParseNftNatTo(to)
	if err != nil {
		c.fail(at, "%v", err)
		return
	}
	if (family == "ip" && !nr.AddrLo.Is4()) || (family == "ip6" && !nr.AddrLo.Is6()) {
		c.fail(at, "%s is not an address of family %s", nr.AddrLo, family)
	}
	if nr.PortLo != 0 && !nftPortProto(r.Protocol) {
		c.fail(at, "a port to translate to needs protocol tcp or udp")
	}
}

func (c *checker) nftRedirect(r *items.NftRule, at Origin) {
	if r.Redirect.Port == "" {
		return
	}
	if _, _, err := items.ParseNftPorts(r.Redirect.Port); err != nil {
		c.fail(at, "%v", err)
	} else if !nftPortProto(r.Protocol) {
		c.fail(at, "a port to redirect to needs protocol tcp or udp")
	}
}

func nftPortProto(p string) bool {
	n := items.NftProtoNumber(p)
	return n == 6 || n == 17
}

func (c *checker) nftReject(family string, r *items.NftRule, at Origin, sets map[string]*items.NftSet) {
	wa := at.field("reject").field("with")
	kind, _, err := items.ParseNftReject(family, r.Reject.With)
	switch {
	case err != nil:
		c.fail(wa, "%v", err)
	case kind == "icmpx" && family != "inet":
		c.fail(wa, "a reject with icmpx is only for inet tables (nft: abstracted ICMP unreachable not supported in %s)", family)
	case kind == "tcp reset" && items.NftProtoNumber(r.Protocol) != 6:
		c.fail(wa, "a reject with tcp reset needs protocol tcp")
	case kind == "icmp" || kind == "icmpv6":
		c.nftICMPFamily(family, nftRuleFamily(r, sets), kind, "a reject with "+kind, wa)
	}
	if r.Verdict != "" {
		c.fail(at.field("verdict"), "a rule that rejects has no verdict (reject ends it)")
	}
}

// nftActionAllowed reports an action of r that base cannot run.
// at is the rule's origin.
func (c *checker) nftActionAllowed(family string, base *items.NftChain, r *items.NftRule, at func() Origin) {
	for _, a := range nftActions {
		if !a.set(r) {
			continue
		}
		hooks := a.actionHooks(family)
		if a.nat && base.Type != "nat" {
			c.fail(at().field(a.name), "%s is only allowed in a nat chain, and base chain %q is of type %s", a.name, base.Name, base.Type)
		} else if !slices.Contains(hooks, base.Hook) {
			c.fail(at().field(a.name), "%s is only allowed from hook %s, and base chain %q is on %s",
				a.name, strings.Join(hooks, ", "), base.Name, base.Hook)
		}
	}
}
