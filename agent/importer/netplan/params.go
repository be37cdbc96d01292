package netplan

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/netagent/netagent/agent/intent"
)

// The values netplan documents for a bond's mode, lacp-rate and
// transmit-hash-policy (the kernel's names, as the intent's).
var (
	bondModes    = []string{"balance-rr", "active-backup", "balance-xor", "broadcast", "802.3ad", "balance-tlb", "balance-alb"}
	lacpRates    = []string{"slow", "fast"}
	hashPolicies = []string{"layer2", "layer3+4", "layer2+3", "encap2+3", "encap3+4"}
)

// bondNotMapped are netplan's bond parameters the intent's bond section
// has no field for.
var bondNotMapped = []string{
	"ad-select", "all-members-active", "all-slaves-active", "arp-interval", "arp-ip-targets", "arp-validate",
	"arp-all-targets", "up-delay", "down-delay", "fail-over-mac-policy", "gratuitous-arp", "gratuitious-arp",
	"packets-per-member", "packets-per-slave", "primary-reselect-policy", "resend-igmp", "learn-packet-interval",
}

// bridgeNotMapped are netplan's bridge parameters the intent's bridge
// section has no field for.
var bridgeNotMapped = []string{"ageing-time", "aging-time", "priority", "hello-time", "max-age"}

func (c *conv) bondParameters(ifc *intent.Interface, e entry) bool {
	ifc.Bond = &intent.Bond{}
	return c.each(e, e.v, func(pe entry) bool { return c.bondParameter(ifc.Bond, pe) })
}

func (c *conv) bondParameter(b *intent.Bond, e entry) bool {
	switch e.k.Value {
	case "mode":
		b.Mode = intent.BondMode(e.v.Value)
		return c.oneOf(e, bondModes)
	case "lacp-rate":
		b.LACPRate = intent.LACPRate(e.v.Value)
		return c.oneOf(e, lacpRates)
	case "transmit-hash-policy":
		b.XmitHashPolicy = intent.XmitHashPolicy(e.v.Value)
		return c.oneOf(e, hashPolicies)
	case "primary":
		b.Primary = e.v.Value // a netplan id, renamed with the others
	case "mii-monitor-interval":
		v, ok := c.duration(e, 1, 1, 1<<31-1)
		b.MIIMon = intent.Milliseconds{Count: int(v)}
		return ok
	case "min-links":
		v, ok := c.number(e, e.v, 0, 1<<31-1)
		b.MinLinks = int(v)
		return ok
	default:
		return c.notMapped(e, bondNotMapped, "bond")
	}
	return true
}

// notMapped refuses a parameter: unsupported when netplan has it (the
// intent's section has no field for it), invalid when unknown.
func (c *conv) notMapped(e entry, known []string, section string) bool {
	if slices.Contains(known, e.k.Value) {
		return c.unsupported(e, e.k, "the intent's "+section+" section has no such setting")
	}
	return c.bad(entry{e.d, e.k, e.k}, "unknown "+section+" parameter")
}

// oneOf checks that e's value is one of values.
func (c *conv) oneOf(e entry, values []string) bool {
	if !slices.Contains(values, e.v.Value) {
		return c.bad(e, fmt.Sprintf("%q is not one of %s", e.v.Value, strings.Join(values, ", ")))
	}
	return true
}

// duration is a netplan time interval as a whole number of unit
// milliseconds, at most hi: a number of bare milliseconds each (netplan's
// default unit for the key), or a number with a suffix ms or s.
func (c *conv) duration(e entry, bare, unit, hi int64) (int64, bool) {
	s, scale := e.v.Value, bare
	switch {
	case strings.HasSuffix(s, "ms"):
		s, scale = strings.TrimSuffix(s, "ms"), 1
	case strings.HasSuffix(s, "s"):
		s, scale = strings.TrimSuffix(s, "s"), 1000
	}
	v, err := strconv.ParseInt(s, 10, 32)
	if ms := v * scale; err == nil && v >= 0 && ms%unit == 0 && ms/unit <= hi {
		return ms / unit, true
	}
	return 0, c.bad(e, fmt.Sprintf("is not a time from 0 to %dms in steps of %dms (a number, or one with ms or s)", hi*unit, unit))
}

// bridgeParameters maps stp, forward-delay, path-cost and port-priority.
// With parameters given, netplan turns STP on unless stp says otherwise
// (it writes STP=true); without, it leaves the kernel's default (off).
func (c *conv) bridgeParameters(ifc *intent.Interface, e entry) bool {
	ifc.Bridge = &intent.Bridge{STP: true}
	return c.each(e, e.v, func(pe entry) bool { return c.bridgeParameter(ifc, pe) })
}

func (c *conv) bridgeParameter(ifc *intent.Interface, e entry) bool {
	br := ifc.Bridge
	switch e.k.Value {
	case "stp":
		b, ok := c.boolean(e, e.v)
		br.STP = b
		return ok
	case "forward-delay": // seconds by default; the intent's are centiseconds
		v, ok := c.duration(e, 1000, 10, 3000)
		br.ForwardDelay = intent.Centiseconds{Count: int(v)}
		return ok
	case "path-cost":
		return c.portSettings(e, 1, 65535, func(p *intent.BridgePort, v int) { p.Cost = v })
	case "port-priority":
		return c.portSettings(e, 0, 63, func(p *intent.BridgePort, v int) { p.Priority = &v })
	}
	return c.notMapped(e, bridgeNotMapped, "bridge")
}

// portSettings records a per-port parameter (a mapping of port ids to
// numbers), set on each port's bridgePort once every device is made.
func (c *conv) portSettings(e entry, lo, hi int64, set func(*intent.BridgePort, int)) bool {
	return c.each(e, e.v, func(pe entry) bool {
		v, ok := c.number(pe, pe.v, lo, hi)
		c.portSets = append(c.portSets, portSet{id: pe.k.Value, at: pe, set: func(p *intent.BridgePort) { set(p, int(v)) }})
		return ok
	})
}
