package eni

import (
	"net/netip"
	"strconv"
	"strings"

	"github.com/netagent/netagent/agent/intent"
)

// vxlanOptions: an interface with vxlan-id is a VXLAN (ifupdown2's vxlan
// addon requires it); one without vxlan-local-tunnelip takes the first
// given (vxlanLocal). The remote ends are vxlan-svcnodeip (unicast: the
// intent's remote) or vxlan-mcastgrp (a multicast group on vxlan-physdev);
// ifupdown2 takes either for the other when the address says so.
var vxlanOptions = map[string]setter{
	"vxlan-id":             (*iface).setVNI,
	"vxlan-local-tunnelip": func(ifc *iface, a []string) string { return ifc.vxlanAddr(&ifc.vx().Local, a) },
	"vxlan-svcnodeip":      (*iface).setVXLANEnd,
	"vxlan-svcnodeip6":     (*iface).setVXLANEnd,
	"vxlan-mcastgrp":       (*iface).setVXLANEnd,
	"vxlan-mcastgrp6":      (*iface).setVXLANEnd,
	"vxlan-port": func(ifc *iface, a []string) string {
		return setInt(&ifc.vx().Port, a, 1, 65535, "UDP port")
	},
	"vxlan-physdev": func(ifc *iface, a []string) string { ifc.vx().Parent = a[0]; return "" },
	"vxlan-learning": func(ifc *iface, a []string) string {
		var on bool
		why := setBool(&on, a)
		if !on {
			ifc.vx().Learning = &on
		}
		return why
	},
	"vxlan-ageing":        onlyDefault("the kernel's 300 seconds", "300"),
	"vxlan-ttl":           onlyDefault("0 (inherit, the kernel's default)", "0", "auto"),
	"vxlan-purge-remotes": onlyDefault("no (netagent adds no forwarding entries, and removes none)", "no", "off", "0"),
	"vxlan-remoteip": func(*iface, []string) string {
		return "ifupdown2 adds each as a flooding entry of the forwarding database (bridge fdb 00:00:00:00:00:00 dst IP); netagent has no such entries (for one remote end, use vxlan-svcnodeip)"
	},
	"vxlan-mcastgrp-map": func(*iface, []string) string {
		return "a single VXLAN device for many VNIs: netagent's VXLAN has one VNI"
	},
}

// vx is ifc's VXLAN section, made on first use.
func (ifc *iface) vx() *intent.VXLAN {
	if ifc.vxlan == nil {
		ifc.vxlan = &intent.VXLAN{}
	}
	return ifc.vxlan
}

func (ifc *iface) setVNI(args []string) string {
	return setInt(&ifc.vx().VNI, args, 1, 16777214, "VXLAN id") // ifupdown2's range
}

func (ifc *iface) vxlanAddr(dst *string, args []string) string {
	a, err := netip.ParseAddr(args[0])
	if err != nil || len(args) > 1 {
		return "invalid address " + strconv.Quote(strings.Join(args, " "))
	}
	*dst = a.String()
	return ""
}

// setVXLANEnd sets the remote end: a multicast address is the group, any
// other the unicast remote, whichever option names it (as ifupdown2).
func (ifc *iface) setVXLANEnd(args []string) string {
	v := ifc.vx()
	if v.Remote != "" || v.Group != "" {
		return "invalid: vxlan-svcnodeip and vxlan-mcastgrp exclude each other (ifupdown2 refuses both)"
	}
	var s string
	if why := ifc.vxlanAddr(&s, args); why != "" {
		return why
	}
	if netip.MustParseAddr(s).IsMulticast() {
		v.Group = s
	} else {
		v.Remote = s
	}
	return ""
}

// setInt reads one integer in [lo, hi].
func setInt(dst *int, args []string, lo, hi int, what string) string {
	n, err := strconv.Atoi(args[0])
	if err != nil || len(args) > 1 || n < lo || n > hi {
		return "invalid " + what + " " + strconv.Quote(strings.Join(args, " ")) + " (want " + strconv.Itoa(lo) + "-" + strconv.Itoa(hi) + ")"
	}
	*dst = n
	return ""
}

// onlyDefault accepts an option whose value is the kernel's default
// (what the intent means by leaving it out) and refuses any other.
func onlyDefault(what string, values ...string) setter {
	return func(_ *iface, args []string) string {
		for _, v := range values {
			if strings.EqualFold(strings.Join(args, " "), v) {
				return ""
			}
		}
		return "netagent sets only " + what + " here"
	}
}

// vxlanLocal gives each VXLAN without vxlan-local-tunnelip ifupdown2's
// global one: the first given, on a VXLAN or on lo, in the file's order.
// lo's is only that (lo is no VXLAN).
func (p *parser) vxlanLocal() {
	local := ""
	for _, name := range p.order {
		ifc := p.ifaces[name]
		if ifc.vxlan == nil {
			continue
		}
		if local == "" {
			local = ifc.vxlan.Local
		}
		if _, isVXLAN := ifc.at["vxlan-id"]; !isVXLAN && name == "lo" && *ifc.vxlan == (intent.VXLAN{Local: ifc.vxlan.Local}) {
			ifc.vxlan = nil
		}
	}
	for _, name := range p.order {
		if v := p.ifaces[name].vxlan; v != nil && v.Local == "" {
			v.Local = local
		}
	}
}

// checkVXLAN refuses vxlan options without vxlan-id (ifupdown2 makes no
// VXLAN of them) and a multicast group without vxlan-physdev.
func (p *parser) checkVXLAN(ifc *iface) {
	if ifc.vxlan == nil {
		return
	}
	if _, ok := ifc.at["vxlan-id"]; !ok {
		p.c.Invalid(ifc.firstOf("vxlan-", "vxlan options without vxlan-id: ifupdown2 makes no VXLAN of them"))
	} else if ifc.vxlan.Group != "" && ifc.vxlan.Parent == "" {
		p.c.Invalid(ifc.firstOf("vxlan-mcastgrp", "a multicast group needs vxlan-physdev (ifupdown2 refuses it without)"))
	}
}
