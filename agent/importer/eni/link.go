package eni

import (
	"strconv"
	"strings"

	"github.com/netagent/netagent/agent/importer"
	"github.com/netagent/netagent/agent/intent"
)

// linkOptions are the options of any link: alias (ifupdown2 writes the
// rest of the line, quotes and all, to the link's ifalias: the intent's
// alias) and the ethtool link mode (ifupdown2's ethtool addon: see
// ethtoolLink).
var linkOptions = map[string]setter{
	"alias":       (*iface).setAlias,
	"link-speed":  (*iface).setLinkSpeed,
	"link-duplex": func(ifc *iface, a []string) string { return ifc.setLinkWord(&ifc.link.duplex, a, "half", "full") },
	"link-autoneg": func(ifc *iface, a []string) string {
		return ifc.setLinkWord(&ifc.link.autoneg, a, "yes", "no", "on", "off")
	},
}

// linkMode is an interface's link-speed, link-duplex and link-autoneg,
// as written ("": not given).
type linkMode struct{ speed, duplex, autoneg string }

// setAlias takes the alias (args is the rest of the line: valueOf).
func (ifc *iface) setAlias(args []string) string {
	a := args[0]
	switch {
	case len(a) > intent.MaxAlias:
		return strconv.Itoa(len(a)) + " bytes: netagent's alias is at most " + strconv.Itoa(intent.MaxAlias) +
			" (the kernel's 255 less netagent's mark \"netagent:\" on the links it creates)"
	case a == "netagent" || strings.HasPrefix(a, "netagent:"):
		return strconv.Quote(a) + " is netagent's ownership mark: netagent would take the link for its own"
	case strings.ContainsFunc(a, func(r rune) bool { return r < ' ' || r == 0x7f }):
		return "invalid alias: a control character"
	}
	ifc.alias = a
	return ""
}

func (ifc *iface) setLinkSpeed(args []string) string {
	n, err := strconv.Atoi(args[0])
	if err != nil || len(args) > 1 || n <= 0 {
		return "invalid link-speed " + strconv.Quote(strings.Join(args, " ")) + " (Mb/s)"
	}
	ifc.link.speed = args[0]
	return ""
}

func (ifc *iface) setLinkWord(to *string, args []string, valid ...string) string {
	for _, v := range valid {
		if len(args) == 1 && strings.EqualFold(args[0], v) {
			*to = strings.ToLower(args[0])
			return ""
		}
	}
	return "invalid value " + strconv.Quote(strings.Join(args, " ")) + " (want " + strings.Join(valid, ", ") + ")"
}

// ethtoolLink is what ifupdown2's ethtool addon (do_speed_settings) sets,
// with no policy defaults (Debian's package ships none): link-autoneg on
// turns autonegotiation on and nothing else; else link-speed forces the
// speed (autonegotiation off) with link-duplex if given; without either,
// nothing is set (link-autoneg off and link-duplex alone change nothing).
// Each option ifupdown2 ignores is a warning.
func (p *parser) ethtoolLink(ifc *iface) *intent.EthtoolLink {
	m := ifc.link
	ignored := func(key, why string) {
		if pos, ok := ifc.at[key]; ok {
			p.c.Warn(importer.Refusal{Pos: pos, Key: "iface " + ifc.name + ": " + key, Why: "ignored, as ifupdown2 ignores it: " + why, Object: ifc.name})
		}
	}
	switch {
	case m.autoneg == "yes" || m.autoneg == "on":
		ignored("link-speed", "link-autoneg on sets only autonegotiation")
		ignored("link-duplex", "link-autoneg on sets only autonegotiation")
		on := true
		return &intent.EthtoolLink{Autoneg: &on}
	case m.speed != "":
		n, _ := strconv.Atoi(m.speed)
		off := false
		return &intent.EthtoolLink{Speed: &n, Duplex: intent.Duplex(m.duplex), Autoneg: &off}
	}
	ignored("link-autoneg", "without link-speed (and without a policy default) it sets nothing")
	ignored("link-duplex", "without link-speed (and without a policy default) it sets nothing")
	return nil
}

// refusedOptions say why the intent cannot express an option ifupdown2
// has, by a prefix of the option's name; an option matching none is
// "netagent has no equivalent of this option".
var refusedOptions = []struct{ prefix, why string }{
	{"mstpctl-", "an mstpd setting (ifupdown2 hands it to mstpctl when mstpd runs, and ignores it when not): netagent runs the kernel's STP only, which has no MSTP settings"},
	{"bridge-mc", "a bridge multicast (IGMP/MLD snooping) setting: the intent's bridge has none, and leaves the kernel's defaults"},
	{"bridge-hash", "a bridge multicast (IGMP/MLD snooping) setting: the intent's bridge has none, and leaves the kernel's defaults"},
	{"clag", "a setting of Cumulus' MLAG (clagd): netagent has no MLAG"},
	{"batman-", "a batman-adv mesh setting: netagent creates no batman-adv interfaces"},
	{"address-virtual", "ifupdown2 makes a macvlan of the interface with this MAC and address (a VRR gateway): netagent derives no links from options; declare the macvlan in the intent"},
	{"link-fec", "forward error correction: the intent's ethtool has no FEC setting"},
}

// refusedWhy is why key cannot be expressed.
func refusedWhy(key string) string {
	for _, r := range refusedOptions {
		if strings.HasPrefix(key, r.prefix) {
			return r.why
		}
	}
	return "netagent has no equivalent of this option"
}
