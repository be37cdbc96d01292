package intent

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"

	"github.com/netagent/netagent/items"
)

// Validate checks the intent as a whole and reports every problem at once,
// as an errors.Join of *FieldError values (list them with FieldErrors), each
// with the JSON path of the offending value and, for a merged intent, the
// file it came from. It returns nil when the intent may be rendered.
//
// Validate also fills the derived fields marked `json:"-"` that the
// renderer reads (Chain.Args); they are meaningful only when it returns nil.
// It changes nothing else.
func (in *Intent) Validate() error {
	c := &checker{in: in}
	if in.Version != Version {
		c.fail(Origin{Path: "version"}, "%d is not supported (want %d)", in.Version, Version)
	}
	c.drift()
	for _, s := range sections {
		s.check(c)
	}
	for _, s := range sections {
		if s.crossCheck != nil {
			s.crossCheck(c)
		}
	}
	return errors.Join(c.errs...)
}

// checker collects the problems of one intent.
type checker struct {
	in    *Intent
	links map[string]linkDef // every interface name defined in the host namespace
	errs  []error

	// Indexes of the interfaces' addresses, made on first use.
	prefixRoutes *kernelRoutes         // kernelRoutes
	owners       map[netip.Addr]string // addressOwner
}

// linkDef is where an interface name is defined: by an interface, or as the
// peer of a veth.
type linkDef struct {
	ifc  *Interface // the interface; for a peer, the veth holding it
	at   Origin
	peer bool
}

// describe says what kind of interface def is, for messages.
func (d linkDef) describe() string {
	if d.peer {
		return "a veth peer"
	}
	return fmt.Sprintf("a %s interface", d.ifc.Type)
}

// fail records a problem at o.
func (c *checker) fail(o Origin, format string, args ...any) {
	c.errs = append(c.errs, fieldError(o, format, args...))
}

// unique records key as defined at o, or reports it as a duplicate.
func (c *checker) unique(seen map[string]Origin, key string, o Origin) {
	if prev, ok := seen[key]; ok {
		c.fail(o, "%s is already defined at %s", key, prev)
		return
	}
	seen[key] = o
}

// oneOf checks that v, if set, is one of allowed.
func oneOf[T ~string](c *checker, o Origin, v T, allowed []T) bool {
	if v == "" {
		return true
	}
	for _, a := range allowed {
		if v == a {
			return true
		}
	}
	c.fail(o, "%q is not one of %s", v, joinValues(allowed))
	return false
}

// requiredOneOf checks that v is set and one of allowed.
func requiredOneOf[T ~string](c *checker, o Origin, v T, allowed []T) bool {
	if v == "" {
		c.fail(o, "is required (one of %s)", joinValues(allowed))
		return false
	}
	return oneOf(c, o, v, allowed)
}

// joinValues returns "a, b, c".
func joinValues[T ~string](vs []T) string {
	s := make([]string, len(vs))
	for i, v := range vs {
		s[i] = string(v)
	}
	return strings.Join(s, ", ")
}

// inRange checks lo <= v <= hi.
func (c *checker) inRange(o Origin, v, lo, hi int) bool {
	if v < lo || v > hi {
		c.fail(o, "%d is out of range %d-%d", v, lo, hi)
		return false
	}
	return true
}

// required checks that s is set.
func (c *checker) required(o Origin, s string) bool {
	if s == "" {
		c.fail(o, "is required")
		return false
	}
	return true
}

// ifname checks that name is a valid Linux interface name.
func (c *checker) ifname(o Origin, name string) bool {
	if msg := ifnameProblem(name); msg != "" {
		c.fail(o, "%s", msg)
		return false
	}
	return true
}

// ifnameProblem says what is wrong with an interface name, or "". The kernel
// takes 1-15 bytes other than '/', ':' and white space, except "." and "..";
// the format also keeps to printable ASCII.
func ifnameProblem(name string) string {
	switch {
	case name == "":
		return "is required"
	case len(name) > 15:
		return fmt.Sprintf("%q is longer than 15 bytes", name)
	case name == "." || name == "..":
		return fmt.Sprintf("%q is not a valid interface name", name)
	}
	for _, r := range name {
		if r <= ' ' || r > '~' || r == '/' || r == ':' {
			return fmt.Sprintf("%q contains %q, which an interface name cannot", name, r)
		}
	}
	return ""
}

// ref checks that the interface name is defined, and returns its definition.
func (c *checker) ref(o Origin, name string) (linkDef, bool) {
	def, ok := c.links[name]
	if !ok && !c.in.broken[name] { // broken: its own entry's problem is reported
		c.fail(o, "interface %q is not defined", name)
	}
	return def, ok
}

// unicastAddr parses a unicast IP address (global or link-local).
func (c *checker) unicastAddr(o Origin, s string) (netip.Addr, bool) {
	a, ok := c.addr(o, s)
	if ok && !items.IsUnicast(a) {
		c.fail(o, "%s is not a unicast address", a)
		return a, false
	}
	return a, ok
}

// addr parses an IP address without a zone.
func (c *checker) addr(o Origin, s string) (netip.Addr, bool) {
	a, err := netip.ParseAddr(s)
	switch {
	case err != nil:
		c.fail(o, "%q is not a valid IP address", s)
		return a, false
	case a.Zone() != "":
		c.fail(o, "%q has a zone, which is not allowed", s)
		return a, false
	case a.Is4In6():
		c.fail(o, "%s is an IPv4-mapped IPv6 address; write the IPv4 address", a)
		return a, false
	}
	return a, true
}

// network parses a CIDR prefix without host bits, like 198.51.100.0/24.
func (c *checker) network(o Origin, s string) (netip.Prefix, bool) {
	p, err := netip.ParsePrefix(s)
	switch {
	case err != nil:
		c.fail(o, "%q is not a CIDR prefix (like 198.51.100.0/24)", s)
		return p, false
	case p.Addr().Is4In6():
		c.fail(o, "%s is an IPv4-mapped IPv6 prefix; write the IPv4 prefix", p)
		return p, false
	case p != p.Masked():
		c.fail(o, "%s has host bits set (did you mean %s?)", p, p.Masked())
		return p, false
	}
	return p, true
}

// mac checks a MAC address written as six colon-separated hex bytes. Unless
// multicast is allowed, it must be a unicast address; it is never all zero.
func (c *checker) mac(o Origin, s string, multicast bool) bool {
	b, ok := parseMAC(s)
	switch {
	case !ok:
		c.fail(o, "%q is not a MAC address (like 02:00:00:00:00:01)", s)
	case b == [6]byte{}:
		c.fail(o, "%s is the zero MAC address", s)
	case !multicast && b[0]&1 != 0:
		c.fail(o, "%s is a multicast MAC address", s)
	default:
		return true
	}
	return false
}

// parseMAC parses exactly "xx:xx:xx:xx:xx:xx".
func parseMAC(s string) ([6]byte, bool) {
	var b [6]byte
	if len(s) != 17 {
		return b, false
	}
	for i := range b {
		if i > 0 && s[3*i-1] != ':' {
			return b, false
		}
		hi, ok1 := unhex(s[3*i])
		lo, ok2 := unhex(s[3*i+1])
		if !ok1 || !ok2 {
			return b, false
		}
		b[i] = hi<<4 | lo
	}
	return b, true
}

// unhex returns the value of a hex digit.
func unhex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// famName returns "IPv4" or "IPv6".
func famName(f Family) string {
	if f == FamilyIPv6 {
		return "IPv6"
	}
	return "IPv4"
}

// famClaim is one field's say about an object's address family.
type famClaim struct {
	field string     // "family", "to", "via", ...
	text  string     // the field's value
	fam   Family     // "" when the field says nothing
	addr  netip.Addr // the address, for optAddr's claims
}

// describe returns `to 198.51.100.0/24 is IPv4`, or `family is "ipv6"`.
func (f famClaim) describe() string {
	if f.field == "family" {
		return fmt.Sprintf("family is %q", f.fam)
	}
	return fmt.Sprintf("%s %s is %s", f.field, f.text, famName(f.fam))
}

// familyClaim is the claim of an explicit family field, if it is valid.
func familyClaim(f Family, valid bool) famClaim {
	if !valid {
		return famClaim{}
	}
	return famClaim{field: "family", text: string(f), fam: f}
}

// agree checks that all claims name the same family, reporting each
// disagreeing field against the first that says anything.
func (c *checker) agree(at Origin, claims ...famClaim) bool {
	var first *famClaim
	ok := true
	for i := range claims {
		cl := &claims[i]
		switch {
		case cl.fam == "":
		case first == nil:
			first = cl
		case cl.fam != first.fam:
			c.fail(at.field(cl.field), "%s is %s, but %s", cl.text, famName(cl.fam), first.describe())
			ok = false
		}
	}
	return ok
}
