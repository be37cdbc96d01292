package l3

import (
	"fmt"
	"net/netip"

	"github.com/netagent/netagent/items"
	"github.com/vishvananda/netlink/nl"
	"golang.org/x/sys/unix"
)

// Rule header values (struct fib_rule_hdr) and attributes newer than
// golang.org/x/sys v0.13.0.
const (
	frActToTbl       = 1   // FR_ACT_TO_TBL: look up a table
	frActGoto        = 2   // FR_ACT_GOTO
	frActBlackhole   = 6   // FR_ACT_BLACKHOLE
	frActUnreachable = 7   // FR_ACT_UNREACHABLE
	frActProhibit    = 8   // FR_ACT_PROHIBIT
	fibRuleInvert    = 0x2 // FIB_RULE_INVERT in frh flags
	fibRuleUnres     = 0x4 // FIB_RULE_UNRESOLVED: a goto to no rule (set by the kernel)
	noSuppress       = 0xffffffff
)

// ruleActs maps an item's action to the fib_rule_hdr action.
var ruleActs = map[items.RuleAction]uint8{
	items.RuleLookup: frActToTbl, items.RuleGoto: frActGoto, items.RuleBlackhole: frActBlackhole,
	items.RuleUnreachable: frActUnreachable, items.RuleProhibit: frActProhibit,
}

// actionOf is the inverse of ruleActs.
func actionOf(a uint8) (items.RuleAction, bool) {
	for k, v := range ruleActs {
		if v == a {
			return k, true
		}
	}
	return 0, false
}

// ruleMsg is a policy rule as rtnetlink carries it: the fib_rule_hdr (laid
// out as an rtmsg) and the attributes netagent writes and reads. It is the
// one codec of rules: encodeRule and decodeRule map items.Rule to and from
// it, request and parseRuleMsg map it to and from the wire (requests, and
// the raw RTM_GETRULE dumps of the configurator and read-back).
type ruleMsg struct {
	Family  uint8
	SrcLen  uint8
	DstLen  uint8
	Tos     uint8
	Action  uint8 // frh action (the rtmsg's type)
	Flags   uint32
	Table   uint32     // FRA_TABLE (the header's only below 256)
	Src     netip.Addr // FRA_SRC
	Dst     netip.Addr // FRA_DST
	Prio    uint32     // FRA_PRIORITY
	Mark    uint32     // FRA_FWMARK
	Mask    uint32     // FRA_FWMASK
	IifName string     // FRA_IIFNAME
	OifName string     // FRA_OIFNAME
	Goto    uint32     // FRA_GOTO
	Proto   uint8      // FRA_PROTOCOL: the owner
	IPProto uint8      // FRA_IP_PROTO
	SPort   items.PortRange
	DPort   items.PortRange
	UIDs    *items.UIDRange // FRA_UID_RANGE
	// Suppress is FRA_SUPPRESS_PREFIXLEN; nil for none.
	Suppress *uint8
	// Other is set when the rule carries a selector or action no item
	// describes: a tos, tunnel id, realm, suppress_ifgroup, l3mdev, nop.
	Other bool
}

// encodeRule is r as netagent writes it, with RouteProtocol.
func encodeRule(r *items.Rule) ruleMsg {
	m := ruleMsg{
		Family: afOf(r.Family), Action: ruleActs[r.Action], Table: r.Table, Prio: r.Priority,
		IifName: r.IifName, OifName: r.OifName, Goto: r.Goto, Proto: items.RouteProtocol,
		IPProto: r.IPProto, SPort: r.SPort, DPort: r.DPort, UIDs: r.UIDs, Suppress: r.SuppressPrefixlen,
	}
	if r.From.IsValid() {
		m.SrcLen, m.Src = uint8(r.From.Bits()), r.From.Addr()
	}
	if r.To.IsValid() {
		m.DstLen, m.Dst = uint8(r.To.Bits()), r.To.Addr()
	}
	if r.Mark != 0 || r.Mask != 0 {
		m.Mark, m.Mask = r.Mark, r.EffectiveMask()
	}
	if r.Invert {
		m.Flags |= fibRuleInvert
	}
	return m
}

// decodeRule is the item m describes; ok is false for rules an item cannot
// describe (another family, an action or selector netagent does not
// manage). hint is the intended item of the same name, or nil: the fwmark
// mask reads back as it spells it, and its Deps are copied.
func decodeRule(m ruleMsg, hint *items.Rule) (*items.Rule, bool) {
	f := familyOfAF(int(m.Family))
	act, ok := actionOf(m.Action)
	if f == 0 || !ok || m.Other || m.Tos != 0 || (act == items.RuleLookup) != (m.Table != 0) {
		return nil, false
	}
	r := &items.Rule{
		Priority: m.Prio, Family: f, Mark: m.Mark, Mask: m.Mask, IifName: m.IifName, OifName: m.OifName,
		IPProto: m.IPProto, SPort: m.SPort, DPort: m.DPort, UIDs: m.UIDs, Invert: m.Flags&fibRuleInvert != 0,
		Action: act, SuppressPrefixlen: m.Suppress,
	}
	if m.SrcLen > 0 {
		r.From = netip.PrefixFrom(m.Src, int(m.SrcLen)).Masked()
	}
	if m.DstLen > 0 {
		r.To = netip.PrefixFrom(m.Dst, int(m.DstLen)).Masked()
	}
	switch act {
	case items.RuleLookup:
		r.Table = m.Table
	case items.RuleGoto:
		r.Goto = m.Goto
	}
	if hint != nil {
		if hint.EffectiveMask() == r.EffectiveMask() {
			r.Mask = hint.Mask
		}
		r.Deps = hint.Deps
	}
	return r, true
}

// request builds an RTM_NEWRULE or RTM_DELRULE message of m with every
// selector, the action and its table or target, and the protocol. The
// kernel's rule_find (delete) skips rules of another protocol, so a delete
// never touches someone else's rule.
func (m ruleMsg) request(msgType uint16, flags int) *nl.NetlinkRequest {
	req := newRequest(msgType, flags)
	hdr := &nl.RtMsg{}
	hdr.Family, hdr.Src_len, hdr.Dst_len, hdr.Tos, hdr.Type, hdr.Flags = m.Family, m.SrcLen, m.DstLen, m.Tos, m.Action, m.Flags
	hdr.Table = unix.RT_TABLE_UNSPEC
	if m.Table < 256 {
		hdr.Table = uint8(m.Table)
	}
	req.AddData(hdr)
	if m.SrcLen > 0 {
		req.AddData(nl.NewRtAttr(nl.FRA_SRC, m.Src.AsSlice()))
	}
	if m.DstLen > 0 {
		req.AddData(nl.NewRtAttr(nl.FRA_DST, m.Dst.AsSlice()))
	}
	req.AddData(nl.NewRtAttr(nl.FRA_PRIORITY, nl.Uint32Attr(m.Prio)))
	if m.Table != 0 {
		req.AddData(nl.NewRtAttr(nl.FRA_TABLE, nl.Uint32Attr(m.Table)))
	}
	if m.Mark != 0 || m.Mask != 0 {
		req.AddData(nl.NewRtAttr(nl.FRA_FWMARK, nl.Uint32Attr(m.Mark)))
		req.AddData(nl.NewRtAttr(nl.FRA_FWMASK, nl.Uint32Attr(m.Mask)))
	}
	if m.IifName != "" {
		req.AddData(nl.NewRtAttr(nl.FRA_IIFNAME, nl.ZeroTerminated(m.IifName)))
	}
	if m.OifName != "" {
		req.AddData(nl.NewRtAttr(nl.FRA_OIFNAME, nl.ZeroTerminated(m.OifName)))
	}
	if m.Goto != 0 {
		req.AddData(nl.NewRtAttr(nl.FRA_GOTO, nl.Uint32Attr(m.Goto)))
	}
	if m.IPProto != 0 {
		req.AddData(nl.NewRtAttr(nl.FRA_IP_PROTO, nl.Uint8Attr(m.IPProto)))
	}
	if m.SPort.IsSet() {
		req.AddData(nl.NewRtAttr(nl.FRA_SPORT_RANGE, portRangeBytes(m.SPort)))
	}
	if m.DPort.IsSet() {
		req.AddData(nl.NewRtAttr(nl.FRA_DPORT_RANGE, portRangeBytes(m.DPort)))
	}
	if m.UIDs != nil {
		b := make([]byte, 8)
		nl.NativeEndian().PutUint32(b[0:4], m.UIDs.Start)
		nl.NativeEndian().PutUint32(b[4:8], m.UIDs.End)
		req.AddData(nl.NewRtAttr(nl.FRA_UID_RANGE, b))
	}
	if m.Suppress != nil {
		req.AddData(nl.NewRtAttr(nl.FRA_SUPPRESS_PREFIXLEN, nl.Uint32Attr(uint32(*m.Suppress))))
	}
	req.AddData(nl.NewRtAttr(nl.FRA_PROTOCOL, nl.Uint8Attr(m.Proto)))
	return req
}

func portRangeBytes(p items.PortRange) []byte {
	b := make([]byte, 4)
	nl.NativeEndian().PutUint16(b[0:2], p.Start)
	nl.NativeEndian().PutUint16(b[2:4], p.End)
	return b
}

// parseRuleMsg is the inverse of request: it decodes a rule message
// payload (header and attributes), as the kernel sends in dumps.
func parseRuleMsg(b []byte) (ruleMsg, error) {
	if len(b) < unix.SizeofRtMsg {
		return ruleMsg{}, fmt.Errorf("rule message of %d bytes: %w", len(b), unix.EINVAL)
	}
	h := nl.DeserializeRtMsg(b)
	attrs, err := nl.ParseRouteAttr(b[unix.SizeofRtMsg:])
	if err != nil {
		return ruleMsg{}, fmt.Errorf("rule attributes: %w", err)
	}
	m := ruleMsg{Family: h.Family, SrcLen: h.Src_len, DstLen: h.Dst_len, Tos: h.Tos, Action: h.Type,
		Flags: h.Flags &^ fibRuleUnres, Table: uint32(h.Table)}
	if m.Action == 3 { // FR_ACT_NOP
		m.Other = true
	}
	ne := nl.NativeEndian()
	u32 := func(v []byte) uint32 {
		if len(v) < 4 {
			return 0
		}
		return ne.Uint32(v)
	}
	port := func(v []byte) items.PortRange {
		if len(v) < 4 {
			return items.PortRange{}
		}
		return items.PortRange{Start: ne.Uint16(v[0:2]), End: ne.Uint16(v[2:4])}
	}
	for _, a := range attrs {
		v := a.Value
		switch a.Attr.Type {
		case nl.FRA_SRC:
			m.Src = addrOfBytes(v)
		case nl.FRA_DST:
			m.Dst = addrOfBytes(v)
		case nl.FRA_PRIORITY:
			m.Prio = u32(v)
		case nl.FRA_TABLE:
			m.Table = u32(v)
		case nl.FRA_FWMARK:
			m.Mark = u32(v)
		case nl.FRA_FWMASK:
			m.Mask = u32(v)
		case nl.FRA_IIFNAME:
			m.IifName = unix.ByteSliceToString(v)
		case nl.FRA_OIFNAME:
			m.OifName = unix.ByteSliceToString(v)
		case nl.FRA_GOTO:
			m.Goto = u32(v)
		case nl.FRA_PROTOCOL:
			if len(v) > 0 {
				m.Proto = v[0]
			}
		case nl.FRA_IP_PROTO:
			if len(v) > 0 {
				m.IPProto = v[0]
			}
		case nl.FRA_SPORT_RANGE:
			m.SPort = port(v)
		case nl.FRA_DPORT_RANGE:
			m.DPort = port(v)
		case nl.FRA_UID_RANGE:
			if len(v) >= 8 {
				m.UIDs = &items.UIDRange{Start: ne.Uint32(v[0:4]), End: ne.Uint32(v[4:8])}
			}
		case nl.FRA_SUPPRESS_PREFIXLEN:
			if n := u32(v); n != noSuppress {
				p := uint8(n)
				m.Suppress = &p
			}
		case nl.FRA_SUPPRESS_IFGROUP:
			if u32(v) != noSuppress {
				m.Other = true
			}
		case nl.FRA_TUN_ID, nl.FRA_FLOW, nl.FRA_L3MDEV:
			m.Other = true
		}
	}
	return m, nil
}

// ruleDumpRequest asks for every rule of family (AF_UNSPEC: both).
func ruleDumpRequest(family int) *nl.NetlinkRequest {
	req := newDump(unix.RTM_GETRULE)
	req.AddData(&nl.RtMsg{RtMsg: unix.RtMsg{Family: uint8(family)}})
	return req
}

// dumpRuleMsgs dumps the rules of family over conn, in the kernel's order.
func dumpRuleMsgs(conn rawOps, family int) ([]ruleMsg, error) {
	var list []ruleMsg
	err := retryDump("rules", func() error {
		msgs, err := conn.dump(ruleDumpRequest(family), unix.RTM_NEWRULE)
		list = list[:0]
		for _, b := range msgs {
			if m, perr := parseRuleMsg(b); perr == nil {
				list = append(list, m)
			}
		}
		return err
	})
	return list, err
}

// ruleRequest builds the RTM_NEWRULE or RTM_DELRULE message for r with
// netagent's protocol (see ruleMsg.request).
func ruleRequest(msgType uint16, flags int, r *items.Rule) *nl.NetlinkRequest {
	return encodeRule(r).request(msgType, flags)
}

// deleteMatches reports whether the kernel's rule_find would take k for
// the delete request want: every selector want sets must match, those it
// leaves unset match anything; the "not" flag and a goto's target are not
// compared (the kernel compares neither).
func deleteMatches(want, k *ruleMsg) bool {
	return k.Family == want.Family && k.Action == want.Action && k.Prio == want.Prio &&
		(want.Table == 0 || k.Table == want.Table) &&
		(want.SrcLen == 0 || k.SrcLen == want.SrcLen && k.Src == want.Src) &&
		(want.DstLen == 0 || k.DstLen == want.DstLen && k.Dst == want.Dst) &&
		(want.Tos == 0 || k.Tos == want.Tos) &&
		(want.Mark == 0 || k.Mark == want.Mark) && (want.Mask == 0 || k.Mask == want.Mask) &&
		(want.IifName == "" || k.IifName == want.IifName) && (want.OifName == "" || k.OifName == want.OifName) &&
		(want.IPProto == 0 || k.IPProto == want.IPProto) &&
		(!want.SPort.IsSet() || k.SPort == want.SPort) && (!want.DPort.IsSet() || k.DPort == want.DPort) &&
		(want.UIDs == nil || k.UIDs != nil && *k.UIDs == *want.UIDs) &&
		(want.Suppress == nil || k.Suppress != nil && *k.Suppress == *want.Suppress) &&
		(want.Proto == 0 || k.Proto == want.Proto)
}
