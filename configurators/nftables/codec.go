package nftables

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"github.com/google/nftables/expr"

	"github.com/netagent/netagent/items"
)

// The codec turns a rule of the typed model into the kernel's expressions
// (encodeRule) and the expressions of a rule netagent wrote back into the
// model (decodeRule). The expressions are the ones nft writes for the same
// rule, so that `nft list` shows it as an operator would write it. A rule
// decodeRule does not know is an error: netagent's tables hold only
// what it wrote, and someone else's rule in them is drift.

// setTypes says, for each set of the table, its element type.
type setTypes map[string]string

const reg = 1 // every match loads into register 1, as nft does

// ifnameData is an interface name as the kernel compares it: IFNAMSIZ
// bytes, zero-padded.
func ifnameData(name string) []byte {
	b := make([]byte, 16)
	copy(b, name)
	return b
}

func cmpEq(data []byte) expr.Any { return &expr.Cmp{Op: expr.CmpOpEq, Register: reg, Data: data} }

// encodeRule returns the expressions of r in a table of family.
func encodeRule(family string, r *items.NftRule, sets setTypes) ([]expr.Any, error) {
	out := make([]expr.Any, 0, 12) // most rules: a match or three and a verdict
	if rejectNeedsNfproto(family, r) {
		kind, _, _ := items.ParseNftReject(family, r.Reject.With)
		out = append(out, nfproto(family, kind == "icmpv6")...)
	}
	if r.IIfName != "" {
		out = append(out, &expr.Meta{Key: expr.MetaKeyIIFNAME, Register: reg}, cmpEq(ifnameData(r.IIfName)))
	}
	if r.OIfName != "" {
		out = append(out, &expr.Meta{Key: expr.MetaKeyOIFNAME, Register: reg}, cmpEq(ifnameData(r.OIfName)))
	}
	for _, m := range []struct {
		v   string
		dst bool
	}{{r.Saddr, false}, {r.Daddr, true}} {
		if m.v == "" {
			continue
		}
		e, err := encodeAddr(family, m.v, m.dst, sets)
		if err != nil {
			return nil, err
		}
		out = append(out, e...)
	}
	if r.Protocol != "" {
		out = append(out, &expr.Meta{Key: expr.MetaKeyL4PROTO, Register: reg}, cmpEq([]byte{byte(items.NftProtoNumber(r.Protocol))}))
	}
	for _, m := range []struct {
		v   string
		off uint32
	}{{r.Sport, 0}, {r.Dport, 2}} {
		if m.v == "" {
			continue
		}
		e, err := encodePorts(m.v, m.off)
		if err != nil {
			return nil, err
		}
		out = append(out, e...)
	}
	if r.ICMPType != "" {
		out = append(out, &expr.Payload{DestRegister: reg, Base: expr.PayloadBaseTransportHeader, Offset: 0, Len: 1},
			cmpEq([]byte{byte(items.NftICMPType(r.Protocol, r.ICMPType))}))
	}
	if len(r.CtState) > 0 {
		out = append(out, &expr.Ct{Key: expr.CtKeySTATE, Register: reg},
			&expr.Bitwise{SourceRegister: reg, DestRegister: reg, Len: 4, Mask: le32(ctBits(r.CtState)), Xor: le32(0)},
			&expr.Cmp{Op: expr.CmpOpNeq, Register: reg, Data: le32(0)})
	}
	if r.Mark != nil {
		out = append(out, &expr.Meta{Key: expr.MetaKeyMARK, Register: reg}, cmpEq(le32(*r.Mark)))
	}
	stmts, err := encodeStatements(family, r)
	if err != nil {
		return nil, err
	}
	out = append(out, stmts...)
	if r.Vmap != nil {
		out = append(out, encodeVmap(family, r.Vmap, sets)...)
	}
	return out, nil
}

func le32(v uint32) []byte { return binary.NativeEndian.AppendUint32(nil, v) }

func ctBits(states []string) uint32 {
	var bits uint32
	for _, s := range states {
		for i, name := range items.NftCtStates {
			if s == name {
				bits |= ctBit(i)
			}
		}
	}
	return bits
}

// ctBit is the NF_CT_STATE bit of items.NftCtStates[i]: invalid 1,
// established 2, related 4, new 8, untracked 64.
func ctBit(i int) uint32 {
	if i == 4 {
		return 64
	}
	return 1 << i
}

// nfproto returns the meta nfproto match that an inet table needs before
// a network header match.
func nfproto(family string, v6 bool) []expr.Any {
	if family != "inet" {
		return nil
	}
	p := byte(2) // NFPROTO_IPV4
	if v6 {
		p = 10
	}
	return []expr.Any{&expr.Meta{Key: expr.MetaKeyNFPROTO, Register: reg}, cmpEq([]byte{p})}
}

// addrOffset is the offset and length of saddr or daddr in the IPv4 or
// IPv6 header.
func addrOffset(v6, dst bool) (off, n uint32) {
	switch {
	case v6 && dst:
		return 24, 16
	case v6:
		return 8, 16
	case dst:
		return 16, 4
	}
	return 12, 4
}

func encodeAddr(family, v string, dst bool, sets setTypes) ([]expr.Any, error) {
	if name, invert, ok := setRef(v); ok {
		v6 := sets[name] == "ipv6_addr"
		off, n := addrOffset(v6, dst)
		return append(nfproto(family, v6),
			&expr.Payload{DestRegister: reg, Base: expr.PayloadBaseNetworkHeader, Offset: off, Len: n},
			&expr.Lookup{SourceRegister: reg, SetName: name, Invert: invert}), nil
	}
	p, err := items.ParseNftPrefix(v)
	if err != nil {
		return nil, err
	}
	v6 := p.Addr().Is6()
	off, n := addrOffset(v6, dst)
	addr := p.Addr().AsSlice()
	if bits := p.Bits(); bits > 0 && bits%8 == 0 {
		// as nft writes a byte-aligned prefix: only its bytes, no mask
		n, addr = uint32(bits/8), addr[:bits/8]
	}
	out := append(nfproto(family, v6), &expr.Payload{DestRegister: reg, Base: expr.PayloadBaseNetworkHeader, Offset: off, Len: n})
	if int(n)*8 > p.Bits() {
		mask := netip.PrefixFrom(lastMask(p.Addr().BitLen()), p.Bits()).Masked().Addr().AsSlice()
		out = append(out, &expr.Bitwise{SourceRegister: reg, DestRegister: reg, Len: n, Mask: mask, Xor: make([]byte, n)})
	}
	return append(out, cmpEq(addr)), nil
}

// lastMask returns the all-ones address of bits bits.
func lastMask(bits int) netip.Addr {
	b := bytes.Repeat([]byte{0xff}, bits/8)
	a, _ := netip.AddrFromSlice(b)
	return a
}

// setRef returns the set of a match "@set" or "!@set" (invert).
func setRef(v string) (name string, invert, ok bool) {
	v, invert = strings.CutPrefix(v, "!")
	name, ok = strings.CutPrefix(v, "@")
	return name, invert, ok
}

func encodePorts(v string, off uint32) ([]expr.Any, error) {
	load := &expr.Payload{DestRegister: reg, Base: expr.PayloadBaseTransportHeader, Offset: off, Len: 2}
	if name, invert, ok := setRef(v); ok {
		return []expr.Any{load, &expr.Lookup{SourceRegister: reg, SetName: name, Invert: invert}}, nil
	}
	lo, hi, err := items.ParseNftPorts(v)
	if err != nil {
		return nil, err
	}
	if lo == hi {
		return []expr.Any{load, cmpEq(be16(lo))}, nil
	}
	// nft writes a range as two comparisons (a Range from netagent's
	// first tables still decodes)
	return []expr.Any{load, &expr.Cmp{Op: expr.CmpOpGte, Register: reg, Data: be16(lo)},
		&expr.Cmp{Op: expr.CmpOpLte, Register: reg, Data: be16(hi)}}, nil
}

func be16(v uint16) []byte { return binary.BigEndian.AppendUint16(nil, v) }

var verdictKinds = map[string]expr.VerdictKind{
	"accept": expr.VerdictAccept, "drop": expr.VerdictDrop, "return": expr.VerdictReturn,
	"jump": expr.VerdictJump, "goto": expr.VerdictGoto,
}

func encodeVerdict(r *items.NftRule) expr.Any {
	k, ok := verdictKinds[r.Verdict]
	if !ok {
		return nil
	}
	return &expr.Verdict{Kind: k, Chain: r.Target}
}

// decoder reads a rule's expressions back in the order encodeRule writes
// them.
type decoder struct {
	r      items.NftRule
	loaded string // what register 1 holds: "iifname", "saddr4", "dport", ...
	v6     bool   // the rule's nfproto match, in an inet table
	imm    map[uint32][]byte
	mask   []byte
	width  int     // the bytes of the address loaded (4, 16)
	load   int     // the bytes loaded: a byte-aligned prefix's may be fewer
	lo     *uint16 // the low end of a port range
}

// decodeRule returns the rule of exprs, or an error for an expression
// netagent does not write.
func decodeRule(exprs []expr.Any) (items.NftRule, error) {
	d := &decoder{imm: map[uint32][]byte{}}
	for i, e := range exprs {
		if err := d.step(e); err != nil {
			return items.NftRule{}, fmt.Errorf("expression %d (%T): %w", i, e, err)
		}
	}
	return d.r, nil
}

func (d *decoder) step(e expr.Any) error {
	switch e := e.(type) {
	case *expr.Meta:
		return d.meta(e)
	case *expr.Payload:
		return d.payload(e)
	case *expr.Ct:
		if e.Key != expr.CtKeySTATE {
			return fmt.Errorf("ct key %d", e.Key)
		}
		d.loaded = "ctstate"
	case *expr.Bitwise:
		d.mask = e.Mask
	case *expr.Cmp:
		return d.cmp(e)
	case *expr.Range:
		if d.loaded != "sport" && d.loaded != "dport" {
			return fmt.Errorf("range over %q", d.loaded)
		}
		d.setPort(items.NftPortsString(binary.BigEndian.Uint16(e.FromData), binary.BigEndian.Uint16(e.ToData)))
	case *expr.Lookup:
		return d.lookup(e)
	case *expr.Counter:
		d.r.Counter = true
	case *expr.Masq:
		d.r.Masquerade = true
	case *expr.Immediate:
		d.imm[e.Register] = e.Data
	case *expr.NAT:
		return d.nat(e)
	case *expr.Redir:
		return d.redirect(e)
	case *expr.Reject:
		return d.reject(e)
	case *expr.Limit:
		return d.limit(e)
	case *expr.Log:
		return d.log(e)
	case *expr.Verdict:
		for name, k := range verdictKinds {
			if k == e.Kind {
				d.r.Verdict, d.r.Target = name, e.Chain
				return nil
			}
		}
		return fmt.Errorf("verdict %d", e.Kind)
	default:
		return fmt.Errorf("not an expression netagent writes")
	}
	return nil
}

var metaLoads = map[expr.MetaKey]string{
	expr.MetaKeyIIFNAME: "iifname", expr.MetaKeyOIFNAME: "oifname", expr.MetaKeyNFPROTO: "nfproto",
	expr.MetaKeyL4PROTO: "l4proto", expr.MetaKeyMARK: "mark",
}

func (d *decoder) meta(e *expr.Meta) error {
	name, ok := metaLoads[e.Key]
	if !ok || e.SourceRegister {
		return fmt.Errorf("meta key %d", e.Key)
	}
	d.loaded = name
	return nil
}

func (d *decoder) payload(e *expr.Payload) error {
	d.mask = nil
	switch {
	case e.Base == expr.PayloadBaseTransportHeader && e.Len == 1 && e.Offset == 0:
		d.loaded = "icmptype"
	case e.Base == expr.PayloadBaseTransportHeader && e.Len == 2 && e.Offset == 0:
		d.loaded = "sport"
	case e.Base == expr.PayloadBaseTransportHeader && e.Len == 2 && e.Offset == 2:
		d.loaded = "dport"
	case e.Base == expr.PayloadBaseNetworkHeader && (e.Offset == 12 || e.Offset == 8) && addrLoad(e, e.Offset == 8):
		d.loaded, d.width, d.load = "saddr", int(4*(1+3*btoi(e.Offset == 8))), int(e.Len)
	case e.Base == expr.PayloadBaseNetworkHeader && (e.Offset == 16 || e.Offset == 24) && addrLoad(e, e.Offset == 24):
		d.loaded, d.width, d.load = "daddr", int(4*(1+3*btoi(e.Offset == 24))), int(e.Len)
	default:
		return fmt.Errorf("payload base %d offset %d len %d", e.Base, e.Offset, e.Len)
	}
	return nil
}

// addrLoad reports whether e loads an address (v6: of 16 bytes, else 4)
// or, as nft loads a byte-aligned prefix, its first bytes.
func addrLoad(e *expr.Payload, v6 bool) bool {
	return e.Len >= 1 && e.Len <= 4*(1+3*btoi(v6))
}

func btoi(b bool) uint32 {
	if b {
		return 1
	}
	return 0
}

func (d *decoder) cmp(e *expr.Cmp) error {
	if e.Op == expr.CmpOpNeq && d.loaded == "ctstate" {
		if len(d.mask) != 4 {
			return fmt.Errorf("ct state without a mask")
		}
		bits := binary.NativeEndian.Uint32(d.mask)
		for i, name := range items.NftCtStates {
			if bits&ctBit(i) != 0 {
				d.r.CtState = append(d.r.CtState, name)
			}
		}
		return nil
	}
	if (e.Op == expr.CmpOpGte || e.Op == expr.CmpOpLte) && (d.loaded == "sport" || d.loaded == "dport") && len(e.Data) == 2 {
		return d.portBound(e)
	}
	if e.Op != expr.CmpOpEq {
		return fmt.Errorf("cmp op %d", e.Op)
	}
	switch d.loaded {
	case "iifname":
		d.r.IIfName = string(bytes.TrimRight(e.Data, "\x00"))
	case "oifname":
		d.r.OIfName = string(bytes.TrimRight(e.Data, "\x00"))
	case "nfproto":
		d.v6 = len(e.Data) == 1 && e.Data[0] == 10
	case "l4proto":
		if len(e.Data) != 1 {
			return fmt.Errorf("l4proto of %d bytes", len(e.Data))
		}
		d.r.Protocol = items.NftProtoName(int(e.Data[0]))
	case "mark":
		if len(e.Data) != 4 {
			return fmt.Errorf("mark of %d bytes", len(e.Data))
		}
		m := binary.NativeEndian.Uint32(e.Data)
		d.r.Mark = &m
	case "sport", "dport":
		if len(e.Data) != 2 {
			return fmt.Errorf("port of %d bytes", len(e.Data))
		}
		p := binary.BigEndian.Uint16(e.Data)
		d.setPort(items.NftPortsString(p, p))
	case "saddr", "daddr":
		return d.addr(e.Data)
	case "icmptype":
		if len(e.Data) != 1 || d.r.Protocol != "icmp" && d.r.Protocol != "icmpv6" {
			return fmt.Errorf("icmp type of %d bytes, protocol %q", len(e.Data), d.r.Protocol)
		}
		d.r.ICMPType = items.NftICMPTypeName(d.r.Protocol, int(e.Data[0]))
	default:
		return fmt.Errorf("cmp after %q", d.loaded)
	}
	return nil
}

func (d *decoder) addr(data []byte) error {
	if len(data) != d.load {
		return fmt.Errorf("address of %d bytes after a load of %d", len(data), d.load)
	}
	bits := len(data) * 8 // a byte-aligned prefix's bytes, or the whole address
	a, ok := netip.AddrFromSlice(append(slices.Clip(data), make([]byte, d.width-len(data))...))
	if !ok {
		return fmt.Errorf("address of %d bytes", len(data))
	}
	if d.mask != nil {
		bits = 0
		for _, b := range d.mask {
			for ; b&0x80 != 0; b <<= 1 {
				bits++
			}
		}
	}
	s := items.NftPrefixString(netip.PrefixFrom(a, bits))
	if d.loaded == "saddr" {
		d.r.Saddr = s
	} else {
		d.r.Daddr = s
	}
	return nil
}

// portBound reads the comparisons of a port range: lo (gte), then hi.
func (d *decoder) portBound(e *expr.Cmp) error {
	p := binary.BigEndian.Uint16(e.Data)
	if e.Op == expr.CmpOpGte {
		d.lo = &p
		return nil
	}
	if d.lo == nil {
		return fmt.Errorf("a port range without its low end")
	}
	d.setPort(items.NftPortsString(*d.lo, p))
	d.lo = nil
	return nil
}

func (d *decoder) setPort(s string) {
	if d.loaded == "sport" {
		d.r.Sport = s
	} else {
		d.r.Dport = s
	}
}

func (d *decoder) lookup(e *expr.Lookup) error {
	if e.IsDestRegSet {
		return d.vmap(e)
	}
	v := "@" + e.SetName
	if e.Invert {
		v = "!" + v
	}
	switch d.loaded {
	case "saddr":
		d.r.Saddr = v
	case "daddr":
		d.r.Daddr = v
	case "sport", "dport":
		d.setPort(v)
	default:
		return fmt.Errorf("lookup after %q", d.loaded)
	}
	return nil
}
