package render

import (
	"net/netip"
	"slices"
	"strings"

	"github.com/netagent/netagent/agent/intent"
	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/items"
)

// ipv6 renders an interface's ipv6 section into its per-interface
// sysctls (net.ipv6.conf.IF.*):
//
//   - acceptRA: accept_ra 2 when the interface forwards IPv6 (the kernel
//     ignores advertisements on a forwarding interface with accept_ra 1),
//     else 1; autoconf and accept_ra_pinfo 1 (0 without
//     acceptRAPrefixes); accept_ra_defrtr 1 (0 without acceptRADefRoute);
//     disable_ipv6 0.
//   - dhcp6 alone: disable_ipv6 0 (the client needs a link-local address).
//
// disable_ipv6 is written last (it depends on the others): turning IPv6
// on sends the router solicitation, which the kernel only does when it
// already accepts advertisements. Each sysctl saves the kernel's value and
// puts it back when the section goes.
func (b *builder) ipv6(ifc *intent.Interface, at intent.Origin) {
	v := ifc.IPv6
	params := v.RenderedSysctls()
	if len(params) == 0 {
		return
	}
	o := field(at, "ipv6")
	prefix := "net.ipv6.conf." + strings.ReplaceAll(ifc.Name, ".", "/") + "."
	var before []dg.ItemRef
	if v.AcceptRA {
		for _, kv := range [][2]string{
			{"accept_ra", b.acceptRA(ifc.Name)},
			{"autoconf", sysctlFlag(v.EffectiveAcceptRAPrefixes())},
			{"accept_ra_pinfo", sysctlFlag(v.EffectiveAcceptRAPrefixes())},
			{"accept_ra_defrtr", sysctlFlag(v.EffectiveAcceptRADefRoute())},
		} {
			s := &items.Sysctl{Key: prefix + kv[0], Value: kv[1]}
			b.put(s, o)
			before = append(before, dg.Ref(s))
		}
	}
	enable := &items.Sysctl{Key: prefix + "disable_ipv6", Value: "0", Deps: before}
	b.put(enable, o)
	if v.DHCP6 {
		b.dhcp6(ifc.Name, field(o, "dhcp6"), dg.Ref(enable))
	}
}

// dhcp6 renders the lease item of an interface with ipv6.dhcp6 (after
// IPv6 is on: enable) and, when a lease is known (Facts.DHCP6), its
// address as a /128 depending on the lease item, valid until the lease's
// end and preferred until its preferred lifetime's (the prefix's route comes
// from router advertisements, as with systemd-networkd). An address the
// intent declares itself wins: the lease's is left out. An address that
// another interface of the intent holds, or inside the subnet of another
// interface's address, is refused (leaseclaims.go): left out, the lease
// item saying why (Refused).
func (b *builder) dhcp6(ifname string, at intent.Origin, enable dg.ItemRef) {
	lease := &items.DHCP6Lease{Dev: ifname, CarrierLink: b.carrierLink(ifname), Deps: []dg.ItemRef{enable}}
	l, ok := b.facts.DHCP6[ifname]
	lease.Refused = b.idx.refused6[ifname] // index.addLeases

	b.put(lease, at)
	if !ok || lease.Refused != "" {
		return
	}
	addr := &items.Address{Dev: ifname, Prefix: netip.PrefixFrom(l.Address, 128), ValidUntil: l.ValidUntil,
		PreferredUntil: l.PreferredUntil, Deps: []dg.ItemRef{items.DHCP6LeaseRef(ifname)}}
	if !b.g.Contains(dg.Ref(addr)) {
		b.put(addr, at)
	}
}

// acceptRA returns accept_ra's value for ifname: 2 when the interface
// forwards IPv6 (its own forwarding key in the intent, else
// conf.all.forwarding in the intent, else in the kernel), else 1.
func (b *builder) acceptRA(ifname string) string {
	forwarding := b.facts.IPv6Forwarding
	for _, k := range []string{"net.ipv6.conf.all.forwarding", "net.ipv6.conf." + ifname + ".forwarding"} {
		if v, ok := b.in.Sysctls[k]; ok {
			forwarding = strings.TrimSpace(v) != "0"
		}
	}
	if forwarding {
		return "2"
	}
	return "1"
}

// sysctlFlag is a boolean sysctl's value.
func sysctlFlag(on bool) string {
	if on {
		return "1"
	}
	return "0"
}

// ipv6ToIntent is the inverse of ipv6 for ToIntent: an interface whose
// sysctls are exactly those an acceptRA section renders (accept_ra 1 or
// 2, autoconf equal to accept_ra_pinfo, accept_ra_defrtr, disable_ipv6
// 0) gets that section instead of the sysctls, which the intent may then
// not set. A lone disable_ipv6 0 stays a sysctl: only the DHCPv6 client,
// which the kernel does not show, makes it an ipv6 section (WithDHCP6).
func ipv6ToIntent(out *intent.Intent) {
	for i := range out.Interfaces {
		ifc := &out.Interfaces[i]
		if ifc.Master != "" || ifc.State == intent.StateDown {
			continue // no ipv6 section there
		}
		keys := map[string]string{}
		for _, p := range intent.IPv6SysctlParams {
			v, ok := out.Sysctls["net.ipv6.conf."+ifc.Name+"."+p]
			if !ok {
				break
			}
			keys[p] = v
		}
		if len(keys) != len(intent.IPv6SysctlParams) || (keys["accept_ra"] != "1" && keys["accept_ra"] != "2") ||
			keys["disable_ipv6"] != "0" || keys["autoconf"] != keys["accept_ra_pinfo"] || !isFlag(keys["autoconf"]) || !isFlag(keys["accept_ra_defrtr"]) {
			continue
		}
		v := &intent.IPv6{AcceptRA: true}
		if keys["autoconf"] == "0" {
			v.AcceptRAPrefixes = new(bool)
		}
		if keys["accept_ra_defrtr"] == "0" {
			v.AcceptRADefRoute = new(bool)
		}
		ifc.IPv6 = v
		for p := range keys {
			delete(out.Sysctls, "net.ipv6.conf."+ifc.Name+"."+p)
		}
	}
	if len(out.Sysctls) == 0 {
		out.Sysctls = nil
	}
}

func isFlag(v string) bool { return v == "0" || v == "1" }

// WithDHCP6 marks the interface name of in, from ToIntent, as running the
// DHCPv6 client (ipv6.dhcp6, which the kernel does not show: the caller
// knows it from the lease the state directory keeps), adding the physical
// interface when in has none by that name. The disable_ipv6 0 that dhcp6
// renders leaves the sysctls, which may then not set it.
func WithDHCP6(in *intent.Intent, name string) {
	ifc := InterfaceOf(in, name)
	if ifc.IPv6 == nil {
		ifc.IPv6 = &intent.IPv6{}
		key := "net.ipv6.conf." + name + ".disable_ipv6"
		if in.Sysctls[key] == "0" {
			delete(in.Sysctls, key)
		}
		if len(in.Sysctls) == 0 {
			in.Sysctls = nil
		}
	}
	ifc.IPv6.DHCP6 = true
}

// InterfaceOf returns the interface name of in, adding a physical one
// when in has none.
func InterfaceOf(in *intent.Intent, name string) *intent.Interface {
	i := slices.IndexFunc(in.Interfaces, func(ifc intent.Interface) bool { return ifc.Name == name })
	if i < 0 {
		in.Interfaces = append(in.Interfaces, intent.Interface{Name: name, Type: intent.LinkPhysical})
		i = len(in.Interfaces) - 1
	}
	return &in.Interfaces[i]
}
