package items

import (
	"slices"
	"strconv"
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
	// Deps are further items that must exist first. The renderer uses them
	// to order keys whose writes change other keys: net.ipv4.ip_forward
	// (and the conf.all.forwarding keys) rewrite every interface's
	// forwarding, so those keys are set first, their originals saved
	// untouched, and restored after the global one.
	Deps []dg.ItemRef
}

var _ dg.Item = (*Sysctl)(nil)

// Type returns TypeSysctl.
func (s *Sysctl) Type() string { return TypeSysctl }

// Name returns the key.
func (s *Sysctl) Name() string { return s.Key }

// External returns false.
func (s *Sysctl) External() bool { return false }

// Dependencies: interface/<ifname> when the key is a per-interface one (see
// SysctlInterface); then Deps.
func (s *Sysctl) Dependencies() []dg.Dependency {
	var deps []dg.Dependency
	if ifname, ok := SysctlInterface(s.Key); ok {
		deps = []dg.Dependency{requires(InterfaceRef(ifname), "per-interface key")}
	}
	return extraDeps(deps, s.Deps)
}

// Equal compares the key, the whitespace-separated fields of the value and
// Deps.
func (s *Sysctl) Equal(other dg.Item) bool {
	o, ok := other.(*Sysctl)
	return ok && o != nil && s.Key == o.Key &&
		(s.Value == o.Value || NormalizeSysctlValue(s.Value) == NormalizeSysctlValue(o.Value)) &&
		slices.Equal(s.Deps, o.Deps)
}

// ConflictKeys implements depgraph.Conflicter: net.ipv4.ip_forward and
// net.ipv4.conf.all.forwarding are two names of one kernel value
// ("sysctl net.ipv4.conf.all.forwarding"), so an intent that moves from
// one name to the other has the old item deleted (its original restored)
// before the new one saves the original and writes; otherwise the new item
// would save netagent's own value as the original. Every other key is its
// own value: no keys.
func (s *Sysctl) ConflictKeys() []string {
	if s.Key == "net.ipv4.ip_forward" || s.Key == "net.ipv4.conf.all.forwarding" {
		return []string{"sysctl net.ipv4.conf.all.forwarding"}
	}
	return nil
}

// GlobalForwardingSysctl reports whether writing key rewrites the
// forwarding key of every interface of its family, and which family
// ("ipv4" or "ipv6").
func GlobalForwardingSysctl(key string) (family string, ok bool) {
	switch key {
	case "net.ipv4.ip_forward", "net.ipv4.conf.all.forwarding":
		return "ipv4", true
	case "net.ipv6.conf.all.forwarding":
		return "ipv6", true
	}
	return "", false
}

// InterfaceForwardingSysctl reports whether key is the forwarding key of
// one interface (or of "default", the template of new ones), and its
// family: what a global forwarding key overwrites.
func InterfaceForwardingSysctl(key string) (family string, ok bool) {
	for _, fam := range []string{"ipv4", "ipv6"} {
		rest, found := strings.CutPrefix(key, "net."+fam+".conf.")
		if !found {
			continue
		}
		ifname, found := strings.CutSuffix(rest, ".forwarding")
		if found && ifname != "" && ifname != "all" && !strings.Contains(ifname, ".") {
			return fam, true
		}
	}
	return "", false
}

// String describes the parameter in one line.
func (s *Sysctl) String() string { return "sysctl " + s.Key + " = " + s.Value }

// NormalizeSysctlValue returns v as the kernel prints it back: the
// whitespace-separated fields joined with single spaces, and each field
// that the kernel reads as an integer (base 0, as its proc handlers do:
// "0x1f" hexadecimal, "010" octal, "-1") in decimal. So "02" equals "2"
// and "010" equals "8", as the kernel holds them, and a value written
// with a leading zero is not rewritten at every apply.
func NormalizeSysctlValue(v string) string {
	fields := strings.Fields(v)
	for i, f := range fields {
		if n, ok := kernelInt(f); ok {
			fields[i] = n
		}
	}
	return strings.Join(fields, " ")
}

// kernelInt parses f as the kernel's proc handlers do (strtoul with base
// 0, an optional leading minus) and returns it in decimal.
func kernelInt(f string) (string, bool) {
	neg := strings.HasPrefix(f, "-")
	digits := strings.TrimPrefix(f, "-")
	base := 10
	switch {
	case len(digits) > 2 && (digits[:2] == "0x" || digits[:2] == "0X"):
		base, digits = 16, digits[2:]
	case len(digits) > 1 && digits[0] == '0':
		base, digits = 8, digits[1:]
	}
	n, err := strconv.ParseUint(digits, base, 64) // an explicit base: no sign, no "_"
	if err != nil {
		return "", false
	}
	out := strconv.FormatUint(n, 10)
	if neg && n != 0 {
		out = "-" + out
	}
	return out, true
}

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
