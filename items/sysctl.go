package items

import (
	"strings"

	dg "github.com/netagent/netagent/depgraph"
)

// Sysctl is a kernel parameter under net.*. Its name is the key in sysctl(8)
// dotted form, where a dot inside an interface name is written as a slash:
// "net.ipv4.conf.eth0/100.rp_filter" for interface "eth0.100".
type Sysctl struct {
	Key string
	// Value is the value as written to /proc/sys. Equal compares values
	// field by field ("4096 87380" equals "4096\t87380", as the kernel
	// prints it).
	Value string
}

var _ dg.Item = (*Sysctl)(nil)

// Type returns TypeSysctl.
func (s *Sysctl) Type() string { return TypeSysctl }

// Name returns the key.
func (s *Sysctl) Name() string { return s.Key }

// External returns false.
func (s *Sysctl) External() bool { return false }

// Dependencies: interface/<ifname> when the key is a per-interface one (see
// SysctlInterface).
func (s *Sysctl) Dependencies() []dg.Dependency {
	if ifname, ok := SysctlInterface(s.Key); ok {
		return []dg.Dependency{requires(InterfaceRef(ifname), "per-interface key")}
	}
	return nil
}

// Equal compares the key and the whitespace-separated fields of the value.
func (s *Sysctl) Equal(other dg.Item) bool {
	o, ok := other.(*Sysctl)
	return ok && o != nil && s.Key == o.Key && NormalizeSysctlValue(s.Value) == NormalizeSysctlValue(o.Value)
}

// String describes the parameter in one line.
func (s *Sysctl) String() string { return "sysctl " + s.Key + " = " + s.Value }

// NormalizeSysctlValue joins the whitespace-separated fields of v with single
// spaces.
func NormalizeSysctlValue(v string) string { return strings.Join(strings.Fields(v), " ") }

// perInterfaceSysctl are the key prefixes followed by an interface name.
var perInterfaceSysctl = []string{
	"net.ipv4.conf.", "net.ipv6.conf.", "net.ipv4.neigh.", "net.ipv6.neigh.", "net.mpls.conf.",
}

// SysctlInterface returns the interface a per-interface key is about
// (net.ipv4.conf.<if>.*, net.ipv6.conf.<if>.*, net.ipv4.neigh.<if>.*,
// net.ipv6.neigh.<if>.*, net.mpls.conf.<if>.*), with slashes turned back into
// dots. It returns false for other keys and for the pseudo-interfaces "all"
// and "default" and for "lo", which always exists.
func SysctlInterface(key string) (string, bool) {
	for _, prefix := range perInterfaceSysctl {
		rest, ok := strings.CutPrefix(key, prefix)
		if !ok {
			continue
		}
		ifname, param, ok := strings.Cut(rest, ".")
		if !ok || ifname == "" || param == "" {
			return "", false
		}
		switch ifname {
		case "all", "default", "lo":
			return "", false
		}
		return strings.ReplaceAll(ifname, "/", "."), true
	}
	return "", false
}
