package intent

import (
	"fmt"
	"net/netip"
	"strings"
)

// The identities below decide what is "the same object" twice, both for
// Validate (within one intent) and Merge (across files). Each is also a
// readable description of the object, used in messages.

// interfaceKeys returns the interface names an interface defines: its own,
// and those of its section (a veth's peer).
func interfaceKeys(ifc *Interface) []string {
	keys := []string{fmt.Sprintf("interface %q", ifc.Name)}
	for _, s := range linkSections {
		if s.keys != nil && s.has(ifc) {
			keys = append(keys, s.keys(ifc)...)
		}
	}
	return keys
}

// routeKey is the kernel's identity of a route: family, table, destination
// and metric (an IPv6 metric 0 being 1024).
func routeKey(r *Route) string {
	to := r.To
	if dst, err := r.Dst(); err == nil {
		to = dst.String()
		if dst.Bits() == 0 {
			to = "default"
		}
	}
	return fmt.Sprintf("%s route to %s in table %s, metric %d",
		famName(r.EffectiveFamily()), to, tableName(r.EffectiveTable()), r.EffectiveMetric())
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

// neighborKey is a neighbor's device and address.
func neighborKey(n *Neighbor) string {
	ip := n.IP
	if a, err := netip.ParseAddr(n.IP); err == nil {
		ip = a.String()
	}
	return fmt.Sprintf("neighbor %s on %q", ip, n.Dev)
}

// sysctlKey is a sysctl's key.
func sysctlKey(k string) string {
	return fmt.Sprintf("sysctl %q", k)
}

// chainKeys returns a chain's identity in each family it goes to.
func chainKeys(ch *Chain) []string {
	var keys []string
	for _, f := range ch.Families() {
		keys = append(keys, fmt.Sprintf("%s chain %q in table %s", famName(f), ch.Name, ch.Table))
	}
	return keys
}
