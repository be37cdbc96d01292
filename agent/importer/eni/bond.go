package eni

import (
	"slices"
	"strconv"

	"github.com/netagent/netagent/agent/intent"
)

// bondOptions: an interface with bond-slaves (or its alias bond-ports) is
// a bond, as for ifupdown2's bond addon. The options the intent has are
// mapped (the kernel's default as the intent's absent value); those it
// has not are accepted only at the kernel's default, which is what
// leaving them out means.
var bondOptions = map[string]setter{
	"bond-slaves":           (*iface).setSlaves,
	"bond-ports":            (*iface).setSlaves,
	"bond-mode":             (*iface).setBondMode,
	"bond-miimon":           func(ifc *iface, a []string) string { return setInt(&ifc.bd().MIIMon.Count, a, 0, 1<<31-1, "miimon") },
	"bond-lacp-rate":        (*iface).setLACPRate,
	"bond-xmit-hash-policy": (*iface).setHashPolicy,
	"bond-min-links":        func(ifc *iface, a []string) string { return setInt(&ifc.bd().MinLinks, a, 0, 1<<31-1, "min-links") },
	"bond-primary":          func(ifc *iface, a []string) string { ifc.bd().Primary = a[0]; return "" },

	"bond-updelay":           bondDefault("an updelay of 0", "0"),
	"bond-downdelay":         bondDefault("a downdelay of 0", "0"),
	"bond-use-carrier":       bondDefault("use-carrier on", "yes", "on", "1"),
	"bond-num-grat-arp":      bondDefault("num-grat-arp 1", "1"),
	"bond-num-unsol-na":      bondDefault("num-unsol-na 1", "1"),
	"bond-ad-sys-priority":   bondDefault("an ad_actor_sys_prio of 65535", "65535"),
	"bond-ad-actor-sys-prio": bondDefault("an ad_actor_sys_prio of 65535", "65535"),
	"bond-ad-actor-system":   bondDefault("the bond's own MAC as ad_actor_system", "00:00:00:00:00:00"),
	"bond-ad-sys-mac-addr":   bondDefault("the bond's own MAC as ad_actor_system", "00:00:00:00:00:00"),
	"bond-primary-reselect":  bondDefault("primary_reselect always", "always", "0"),
	"bond-lacp-bypass-allow": bondDefault("no LACP bypass (a Cumulus kernel's option)", "no", "off", "0"),
}

// bondDefault is onlyDefault for a bond option the intent has not, which
// also makes the interface's options bond options.
func bondDefault(what string, values ...string) setter {
	only := onlyDefault(what, values...)
	return func(ifc *iface, args []string) string {
		ifc.bd()
		return only(ifc, args)
	}
}

// bd is ifc's bond section, made on first use.
func (ifc *iface) bd() *intent.Bond {
	if ifc.bond == nil {
		ifc.bond = &intent.Bond{}
	}
	return ifc.bond
}

func (ifc *iface) setSlaves(args []string) string {
	ifc.bd()
	ports, why := portList(args)
	ifc.slaves = ports
	if ifc.slaves == nil {
		ifc.slaves = []string{} // bond-slaves none: a bond without ports
	}
	return why
}

// bondModes are ifupdown2's values of bond-mode: the kernel's names and
// numbers.
var bondModes = []intent.BondMode{intent.BondBalanceRR, intent.BondActiveBackup, intent.BondBalanceXOR, intent.BondBroadcast, intent.Bond8023AD, intent.BondBalanceTLB, intent.BondBalanceALB}

func (ifc *iface) setBondMode(args []string) string {
	return setNamed(&ifc.bd().Mode, args, bondModes, intent.BondBalanceRR, "bond mode")
}

var hashPolicies = []intent.XmitHashPolicy{intent.HashLayer2, intent.HashLayer34, intent.HashLayer23, intent.HashEncap23, intent.HashEncap34}

func (ifc *iface) setHashPolicy(args []string) string {
	return setNamed(&ifc.bd().XmitHashPolicy, args, hashPolicies, intent.HashLayer2, "xmit-hash-policy")
}

func (ifc *iface) setLACPRate(args []string) string {
	return setNamed(&ifc.bd().LACPRate, args, []intent.LACPRate{intent.LACPSlow, intent.LACPFast}, intent.LACPSlow, "lacp-rate")
}

// setNamed sets *dst to the value args names among values (by name or
// number), left empty at the kernel's default def.
func setNamed[T ~string](dst *T, args []string, values []T, def T, what string) string {
	v, ok := named(args[0], values)
	if !ok {
		return "invalid " + what + " " + strconv.Quote(args[0])
	}
	if v != def {
		*dst = v
	}
	return ""
}

// named finds s among values by name or by its index (the kernel's number).
func named[T ~string](s string, values []T) (T, bool) {
	if n, err := strconv.Atoi(s); err == nil && n >= 0 && n < len(values) {
		return values[n], true
	}
	i := slices.Index(values, T(s))
	if i < 0 {
		return "", false
	}
	return values[i], true
}

// bondModeOptions are the mode-dependent options: the kernel keeps them
// in any mode but uses them only in theirs, and the intent takes them only
// there.
var bondModeOptions = []struct {
	key   string
	set   func(*intent.Bond) bool
	modes []intent.BondMode
}{
	{"bond-lacp-rate", func(b *intent.Bond) bool { return b.LACPRate != "" }, intent.LACPRateModes},
	{"bond-xmit-hash-policy", func(b *intent.Bond) bool { return b.XmitHashPolicy != "" }, intent.XmitHashPolicyModes},
	{"bond-min-links", func(b *intent.Bond) bool { return b.MinLinks != 0 }, intent.MinLinksModes},
	{"bond-primary", func(b *intent.Bond) bool { return b.Primary != "" }, intent.PrimaryModes},
}

// checkBond refuses bond options without bond-slaves (ifupdown2 makes no
// bond of them) and a mode-dependent option outside its modes.
func (p *parser) checkBond(ifc *iface) {
	if ifc.bond == nil {
		return
	}
	if ifc.slaves == nil {
		p.c.Invalid(ifc.firstOf("bond-", "bond options without bond-slaves: ifupdown2 makes no bond of them"))
		return
	}
	mode := ifc.bond.EffectiveMode()
	for _, o := range bondModeOptions {
		if o.set(ifc.bond) && !slices.Contains(o.modes, mode) {
			p.refuse(ifc, ifc.at[o.key], "iface "+ifc.name+": "+o.key, "the kernel uses it only in mode "+joinModes(o.modes)+", not "+string(mode)+", and netagent sets it only there: remove it")
		}
	}
}

func joinModes(modes []intent.BondMode) string {
	s := ""
	for i, m := range modes {
		if i > 0 {
			s += ", "
		}
		s += string(m)
	}
	return s
}
