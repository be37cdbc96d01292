package intent

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// The sysctls section: a map, not a list; its identity is the key.
var sysctlsSection = section{
	path:       "sysctls",
	check:      (*checker).sysctls,
	crossCheck: func(c *checker) { c.ipv6Disabled(); c.ipv6Sysctls() }, // ipv6.go
	merge:      (*merger).sysctls,
	without:    (*merger).withoutSysctls,
}

// sysctls checks every sysctl key and value, in key order, and that no
// kernel value is set under two names.
func (c *checker) sysctls() {
	for _, k := range slices.Sorted(maps.Keys(c.in.Sysctls)) {
		c.sysctl(c.sysctlOrigin(k), k, c.in.Sysctls[k])
		if alias, ok := sysctlAliases[k]; ok {
			if _, both := c.in.Sysctls[alias]; both {
				c.fail(c.sysctlOrigin(k), "is the same kernel value as %s (at %s): set only one of them",
					alias, c.sysctlOrigin(alias))
			}
		}
	}
}

// sysctlOrigin returns where the key k was defined.
func (c *checker) sysctlOrigin(k string) Origin {
	if o, ok := c.in.SysctlOrigins[k]; ok {
		return o
	}
	return Origin{Path: "sysctls"}.key(k)
}

// sysctlAliases maps each name of a kernel value that has two names to the
// other name. Writing either writes the one value, so an intent with both
// would save as the original of the second the value netagent wrote for the
// first, and could hold two values for it. Checked in the kernel (6.18,
// net/ipv4/devinet.c: ip_forward is IPV4_DEVCONF_ALL(FORWARDING)): IPv4
// forwarding is the only such pair; IPv6 has no second name for
// net.ipv6.conf.all.forwarding. Keys that only write through to others
// (conf.all.forwarding also sets conf.default and every interface's
// forwarding) are separate values and are not listed.
var sysctlAliases = map[string]string{
	"net.ipv4.ip_forward":          "net.ipv4.conf.all.forwarding",
	"net.ipv4.conf.all.forwarding": "net.ipv4.ip_forward",
}

// sysctl checks one key and value. Keys are dot-separated names under
// "net."; each name is letters, digits, '_' and '-', so that a key can never
// leave /proc/sys/net.
func (c *checker) sysctl(o Origin, k, v string) {
	switch {
	case !strings.HasPrefix(k, "net."):
		c.fail(o, "only net.* keys are allowed")
	case !validSysctlKey(k):
		c.fail(o, "not a valid key: want dot-separated names of letters, digits, '_' and '-'")
	}
	switch {
	case v == "":
		c.fail(o, "value is empty")
	case strings.ContainsFunc(v, isControl):
		c.fail(o, "value contains a control character")
	}
}

// validSysctlKey reports whether every dot-separated part of k is a
// non-empty run of letters, digits, '_' and '-'.
func validSysctlKey(k string) bool {
	for part := range strings.SplitSeq(k, ".") {
		if part == "" || strings.ContainsFunc(part, func(r rune) bool { return !isSysctlNameRune(r) }) {
			return false
		}
	}
	return true
}

// isSysctlNameRune reports whether r may appear in a part of a sysctl key.
func isSysctlNameRune(r rune) bool {
	return r == '_' || r == '-' || ('0' <= r && r <= '9') || ('a' <= r && r <= 'z') || ('A' <= r && r <= 'Z')
}

// ipv6Disabled rejects IPv6 addresses, routes (with a dev) and neighbours on
// an interface whose IPv6 the intent's sysctls disable: the kernel refuses
// them ("IPv6 is disabled on this device"), and setting the sysctl after
// them flushes them, so the intent could never converge. An interface's own
// disable_ipv6 key decides, else "all", else, for an interface netagent
// creates, "default".
func (c *checker) ipv6Disabled() {
	if len(c.in.Sysctls) == 0 {
		return // nothing disables IPv6
	}
	for i := range c.in.Interfaces {
		ifc := &c.in.Interfaces[i]
		at := c.in.Locate(ifc.Origin, "interfaces", i)
		for j, a := range ifc.Addresses {
			if prefixFamily(a) == FamilyIPv6 {
				if key := c.disablesIPv6(ifc.Name); key != "" {
					c.fail(at.field("addresses").index(j), "%s is IPv6, but sysctls[%q] disables IPv6 on %q", a, key, ifc.Name)
				}
			}
		}
	}
	for i := range c.in.Routes {
		r := &c.in.Routes[i]
		if r.Dev != "" && r.EffectiveFamily() == FamilyIPv6 {
			if key := c.disablesIPv6(r.Dev); key != "" {
				c.fail(c.in.Locate(r.Origin, "routes", i).field("dev"), "the route is IPv6, but sysctls[%q] disables IPv6 on %q", key, r.Dev)
			}
		}
	}
	for i := range c.in.Neighbors {
		n := &c.in.Neighbors[i]
		if addrFamily(n.IP) == FamilyIPv6 {
			if key := c.disablesIPv6(n.Dev); key != "" {
				c.fail(c.in.Locate(n.Origin, "neighbors", i).field("ip"), "%s is IPv6, but sysctls[%q] disables IPv6 on %q", n.IP, key, n.Dev)
			}
		}
	}
}

// disablesIPv6 returns the sysctl key that disables IPv6 on the named
// interface, or "".
func (c *checker) disablesIPv6(name string) string {
	keys := []string{"net.ipv6.conf." + name + ".disable_ipv6", "net.ipv6.conf.all.disable_ipv6"}
	if def, ok := c.links[name]; ok && (def.peer || def.ifc.Type != LinkPhysical) {
		keys = append(keys, "net.ipv6.conf.default.disable_ipv6")
	}
	for _, k := range keys {
		if v, ok := c.in.Sysctls[k]; ok {
			if strings.TrimSpace(v) != "0" {
				return k
			}
			return ""
		}
	}
	return ""
}

// sysctlKey is a sysctl's key.
func sysctlKey(k string) string {
	return fmt.Sprintf("sysctl %q", k)
}

// sysctls merges the sysctl maps, keeping the keys no two files both set.
func (m *merger) sysctls(files []namedIntent, out *Intent) {
	var claims []claim
	var keys, values []string
	for _, f := range files {
		for _, k := range slices.Sorted(maps.Keys(f.in.Sysctls)) {
			claims = append(claims, claim{at: Origin{File: f.name, Path: "sysctls"}.key(k), keys: []string{sysctlKey(k)}})
			keys, values = append(keys, k), append(values, f.in.Sysctls[k])
		}
	}
	for i, ok := range m.resolve(claims) {
		if !ok {
			continue
		}
		if out.Sysctls == nil {
			out.Sysctls, out.SysctlOrigins = map[string]string{}, map[string]Origin{}
		}
		k := keys[i]
		out.Sysctls[k], out.SysctlOrigins[k] = values[i], claims[i].at
	}
}

// withoutSysctls leaves the sysctl keys that several files set out of
// every file that sets them.
func (m *merger) withoutSysctls(files []namedIntent, edit func(string) *Intent) {
	var claims []claim
	var keys []string
	for _, f := range files {
		for _, k := range slices.Sorted(maps.Keys(f.in.Sysctls)) {
			claims = append(claims, claim{at: Origin{File: f.name, Path: "sysctls"}.key(k), keys: []string{sysctlKey(k)}})
			keys = append(keys, k)
		}
	}
	cloned := map[*Intent]bool{} // the copies whose map is copied too
	for i, ok := range m.resolve(claims) {
		if ok {
			continue
		}
		in := edit(claims[i].at.File)
		if !cloned[in] {
			in.Sysctls, cloned[in] = maps.Clone(in.Sysctls), true
		}
		delete(in.Sysctls, keys[i])
	}
}
