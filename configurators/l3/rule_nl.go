package l3

import (
	"net"
	"net/netip"

	"github.com/netagent/netagent/items"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netlink/nl"
	"golang.org/x/sys/unix"
)

// frActToTbl is FR_ACT_TO_TBL, the action of a rule that looks up a table.
const frActToTbl = 1

// ruleRequest builds an RTM_NEWRULE or RTM_DELRULE message for r with every
// selector, the table, the "lookup table" action and netagent's protocol.
// The kernel's rule_find (delete) skips rules of another protocol, so a
// delete never touches someone else's rule.
func ruleRequest(msgType uint16, flags int, r *items.Rule) *nl.NetlinkRequest {
	req := newRequest(msgType, flags)
	msg := &nl.RtMsg{}
	msg.Family = afOf(r.Family)
	msg.Type = frActToTbl
	msg.Table = unix.RT_TABLE_UNSPEC
	if r.Table < 256 {
		msg.Table = uint8(r.Table)
	}
	var attrs []*nl.RtAttr
	if r.From.IsValid() {
		msg.Src_len = uint8(r.From.Bits())
		attrs = append(attrs, nl.NewRtAttr(nl.FRA_SRC, r.From.Addr().AsSlice()))
	}
	if r.To.IsValid() {
		msg.Dst_len = uint8(r.To.Bits())
		attrs = append(attrs, nl.NewRtAttr(nl.FRA_DST, r.To.Addr().AsSlice()))
	}
	req.AddData(msg)
	for _, a := range attrs {
		req.AddData(a)
	}
	req.AddData(nl.NewRtAttr(nl.FRA_PRIORITY, nl.Uint32Attr(r.Priority)))
	req.AddData(nl.NewRtAttr(nl.FRA_TABLE, nl.Uint32Attr(r.Table)))
	if r.Mark != 0 || r.Mask != 0 {
		req.AddData(nl.NewRtAttr(nl.FRA_FWMARK, nl.Uint32Attr(r.Mark)))
		req.AddData(nl.NewRtAttr(nl.FRA_FWMASK, nl.Uint32Attr(r.EffectiveMask())))
	}
	if r.IifName != "" {
		req.AddData(nl.NewRtAttr(nl.FRA_IIFNAME, nl.ZeroTerminated(r.IifName)))
	}
	if r.OifName != "" {
		req.AddData(nl.NewRtAttr(nl.FRA_OIFNAME, nl.ZeroTerminated(r.OifName)))
	}
	req.AddData(nl.NewRtAttr(nl.FRA_PROTOCOL, nl.Uint8Attr(items.RouteProtocol)))
	return req
}

// ruleFromKernel converts a kernel rule into an item; ok is false for rules
// an item cannot describe (another action, or selectors netagent does not
// manage: tos, ip proto, ports, uid range, tunnel id, realm, suppressors,
// "not"). hint is the intended item of the same name, or nil.
func ruleFromKernel(k *netlink.Rule, hint *items.Rule) (*items.Rule, bool) {
	f := familyOfAF(k.Family)
	if f == 0 || k.Table == 0 || k.Goto >= 0 || !noExtraSelectors(k) {
		return nil, false
	}
	r := &items.Rule{
		Priority: uint32(k.Priority),
		Family:   f,
		From:     rulePrefix(k.Src, f),
		To:       rulePrefix(k.Dst, f),
		Mark:     k.Mark,
		IifName:  k.IifName,
		OifName:  k.OifName,
		Table:    uint32(k.Table),
	}
	if k.Mask != nil {
		r.Mask = *k.Mask
	}
	if hint != nil {
		if hint.EffectiveMask() == r.EffectiveMask() {
			r.Mask = hint.Mask
		}
		r.Deps = hint.Deps
	}
	return r, true
}

func noExtraSelectors(k *netlink.Rule) bool {
	return k.Tos == 0 && k.TunID == 0 && k.Flow < 0 && k.SuppressIfgroup < 0 &&
		k.SuppressPrefixlen < 0 && !k.Invert && k.Dport == nil && k.Sport == nil &&
		k.IPProto == 0 && k.UIDRange == nil
}

// rulePrefix converts a rule selector; none or a /0 is "all", the zero
// Prefix.
func rulePrefix(n *net.IPNet, f items.Family) netip.Prefix {
	if n == nil {
		return netip.Prefix{}
	}
	p := prefixOf(n, f)
	if !p.IsValid() || p.Bits() == 0 {
		return netip.Prefix{}
	}
	return p.Masked()
}
