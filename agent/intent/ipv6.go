package intent

import "strings"

// IPv6 is an interface's "ipv6" section: how the interface takes IPv6
// configuration from the network.
//
//   - acceptRA: the kernel's autoconfiguration (SLAAC): it accepts router
//     advertisements, makes addresses from their prefixes and a default
//     route through the router. Rendered as the interface's sysctls
//     (accept_ra 2 when the host forwards IPv6, else 1; autoconf 1;
//     disable_ipv6 0), so the intent's sysctls may not set those keys of
//     the interface themselves.
//   - acceptRADefRoute (default true): take the default route of the
//     advertisements (accept_ra_defrtr); needs acceptRA.
//   - acceptRAPrefixes (default true): make addresses from the prefixes of
//     the advertisements (accept_ra_pinfo, autoconf); needs acceptRA.
//   - dhcp6: a DHCPv6 client asks for an address (IA_NA) and DNS servers.
//
// The addresses and routes the kernel makes from advertisements are its
// own (proto kernel / ra): netagent neither owns nor removes them.
type IPv6 struct {
	AcceptRA         bool  `json:"acceptRA,omitempty"`
	AcceptRADefRoute *bool `json:"acceptRADefRoute,omitempty"`
	AcceptRAPrefixes *bool `json:"acceptRAPrefixes,omitempty"`
	DHCP6            bool  `json:"dhcp6,omitempty"`
}

// EffectiveAcceptRADefRoute returns acceptRADefRoute, true when absent.
func (v *IPv6) EffectiveAcceptRADefRoute() bool {
	return v.AcceptRADefRoute == nil || *v.AcceptRADefRoute
}

// EffectiveAcceptRAPrefixes returns acceptRAPrefixes, true when absent.
func (v *IPv6) EffectiveAcceptRAPrefixes() bool {
	return v.AcceptRAPrefixes == nil || *v.AcceptRAPrefixes
}

// IPv6SysctlParams are the per-interface sysctls (net.ipv6.conf.IF.*) that
// acceptRA renders, which the intent's sysctls may not also set.
var IPv6SysctlParams = []string{"accept_ra", "autoconf", "disable_ipv6", "accept_ra_defrtr", "accept_ra_pinfo"}

// ipv6 checks an interface's ipv6 section.
func (c *checker) ipv6(ifc *Interface, at Origin) {
	v := ifc.IPv6
	if v == nil {
		return
	}
	o := at.field("ipv6")
	if !v.AcceptRA {
		if v.AcceptRADefRoute != nil {
			c.fail(o.field("acceptRADefRoute"), "needs acceptRA")
		}
		if v.AcceptRAPrefixes != nil {
			c.fail(o.field("acceptRAPrefixes"), "needs acceptRA")
		}
	}
	if !v.AcceptRA && !v.DHCP6 {
		return
	}
	what := "acceptRA"
	if !v.AcceptRA {
		what = "dhcp6"
	}
	if ifc.Master != "" {
		if def, ok := c.links[ifc.Master]; ok && (def.ifc.Type == LinkBond || def.ifc.Type == LinkBridge) {
			c.fail(o.field(what), "interface %q is a port of %s %q, which holds the addresses: configure IPv6 there", ifc.Name, def.ifc.Type, ifc.Master)
		}
	}
	if ifc.State == StateDown {
		c.fail(o.field(what), "interface %q is declared down: no router advertisement or DHCPv6 reply comes over a link that is down", ifc.Name)
	}
}

// ipv6Sysctls rejects sysctls that set what an interface's ipv6 section
// renders (acceptRA: its accept_ra, autoconf, disable_ipv6, ...; dhcp6:
// its disable_ipv6), or that disable IPv6 on all interfaces, which would
// undo it. It runs after every section's check.
func (c *checker) ipv6Sysctls() {
	for i := range c.in.Interfaces {
		ifc := &c.in.Interfaces[i]
		params := ifc.IPv6.RenderedSysctls()
		if len(params) == 0 {
			continue
		}
		at := c.in.Locate(ifc.Origin, "interfaces", i).field("ipv6")
		for _, p := range params {
			k := "net.ipv6.conf." + ifc.Name + "." + p
			if _, ok := c.in.Sysctls[k]; ok {
				c.fail(c.sysctlOrigin(k), "is set by %s: leave it out of the sysctls", at)
			}
		}
		const all = "net.ipv6.conf.all.disable_ipv6"
		if v, ok := c.in.Sysctls[all]; ok && strings.TrimSpace(v) != "0" {
			c.fail(at, "IPv6 autoconfiguration of %q needs IPv6, but sysctls[%q] disables it", ifc.Name, all)
		}
	}
}

// RenderedSysctls returns the per-interface IPv6 sysctl parameters
// (net.ipv6.conf.IF.<param>) the section sets: with acceptRA
// IPv6SysctlParams, with dhcp6 alone disable_ipv6; nil for none.
func (v *IPv6) RenderedSysctls() []string {
	switch {
	case v == nil:
		return nil
	case v.AcceptRA:
		return IPv6SysctlParams
	case v.DHCP6:
		return []string{"disable_ipv6"}
	}
	return nil
}
