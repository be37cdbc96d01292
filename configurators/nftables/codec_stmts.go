package nftables

import (
	"encoding/binary"
	"fmt"
	"net/netip"

	"github.com/google/nftables/expr"
	"golang.org/x/sys/unix"

	"github.com/netagent/netagent/items"
)

// The statements of a rule, after its matches, in the order limit,
// counter, log, action (masquerade, snat, dnat, redirect, reject), as
// nft writes each of them.

// The kernel's reject types (NFT_REJECT_*).
const (
	rejectICMP  = 0
	rejectTCP   = 1
	rejectICMPX = 2
)

var rejectTypes = map[string]uint32{"icmp": rejectICMP, "icmpv6": rejectICMP, "tcp reset": rejectTCP, "icmpx": rejectICMPX}

// rejectNeedsNfproto reports a reject with icmp or icmpv6 in an inet
// table whose rule has no address match: nft puts a meta nfproto match
// first, for the kernel's reject sends the code as the packet's family's.
func rejectNeedsNfproto(family string, r *items.NftRule) bool {
	if family != "inet" || r.Reject == nil || r.Saddr != "" || r.Daddr != "" {
		return false
	}
	kind, _, err := items.ParseNftReject(family, r.Reject.With)
	return err == nil && (kind == "icmp" || kind == "icmpv6")
}

// encodeStatements returns the statements of r and its verdict.
func encodeStatements(family string, r *items.NftRule) ([]expr.Any, error) {
	var out []expr.Any
	if l := r.Limit; l != nil {
		burst := l.Burst
		if burst == 0 {
			burst = items.NftLimitBurstDefault
		}
		out = append(out, &expr.Limit{Type: expr.LimitTypePkts, Rate: l.Rate, Unit: expr.LimitTime(items.NftLimitUnits[l.Per]),
			Burst: burst, Over: l.Over})
	}
	if r.Counter {
		out = append(out, &expr.Counter{})
	}
	if r.Log != nil {
		out = append(out, encodeLog(r.Log))
	}
	action, err := encodeAction(family, r)
	if err != nil {
		return nil, err
	}
	out = append(out, action...)
	if v := encodeVerdict(r); v != nil {
		out = append(out, v)
	}
	return out, nil
}

func encodeLog(l *items.NftLog) *expr.Log {
	e := &expr.Log{}
	if l.Prefix != "" {
		e.Key |= 1 << unix.NFTA_LOG_PREFIX
		e.Data = []byte(l.Prefix)
	}
	for i, name := range items.NftLogLevels {
		if l.Level == name {
			e.Key |= 1 << unix.NFTA_LOG_LEVEL
			e.Level = expr.LogLevel(i)
		}
	}
	return e
}

// encodeAction returns the nat, redirect or reject statement of r.
func encodeAction(family string, r *items.NftRule) ([]expr.Any, error) {
	switch {
	case r.Masquerade:
		return []expr.Any{&expr.Masq{}}, nil
	case r.SNAT != "":
		return encodeNat(expr.NATTypeSourceNAT, r.SNAT)
	case r.DNAT != "":
		return encodeNat(expr.NATTypeDestNAT, r.DNAT)
	case r.Redirect != nil:
		return encodeRedirect(r.Redirect.Port)
	case r.Reject != nil:
		kind, code, err := items.ParseNftReject(family, r.Reject.With)
		if err != nil {
			return nil, err
		}
		return []expr.Any{&expr.Reject{Type: rejectTypes[kind], Code: code}}, nil
	}
	return nil, nil
}

// loadPorts appends to out the immediates of a port range from register
// first on (the high port only for a range); it returns the registers of
// the low and the high port (0 when not loaded).
func loadPorts(out []expr.Any, first uint32, lo, hi uint16) ([]expr.Any, uint32, uint32) {
	out = append(out, &expr.Immediate{Register: first, Data: be16(lo)})
	if hi == lo {
		return out, first, 0
	}
	return append(out, &expr.Immediate{Register: first + 1, Data: be16(hi)}), first, first + 1
}

func encodeNat(typ expr.NATType, to string) ([]expr.Any, error) {
	r, err := items.ParseNftNatTo(to)
	if err != nil {
		return nil, err
	}
	fam := uint32(unix.NFPROTO_IPV4)
	if r.AddrLo.Is6() {
		fam = unix.NFPROTO_IPV6
	}
	out := []expr.Any{&expr.Immediate{Register: 1, Data: r.AddrLo.AsSlice()}}
	nat := &expr.NAT{Type: typ, Family: fam, RegAddrMin: 1}
	next := uint32(2)
	if r.AddrHi != r.AddrLo {
		out = append(out, &expr.Immediate{Register: 2, Data: r.AddrHi.AsSlice()})
		nat.RegAddrMax, next = 2, 3
	}
	if r.PortLo != 0 {
		out, nat.RegProtoMin, nat.RegProtoMax = loadPorts(out, next, r.PortLo, r.PortHi)
		nat.Specified = true
	}
	return append(out, nat), nil
}

func encodeRedirect(port string) ([]expr.Any, error) {
	if port == "" {
		return []expr.Any{&expr.Redir{}}, nil
	}
	lo, hi, err := items.ParseNftPorts(port)
	if err != nil {
		return nil, err
	}
	redir := &expr.Redir{Flags: expr.NF_NAT_RANGE_PROTO_SPECIFIED}
	out, pmin, pmax := loadPorts(nil, 1, lo, hi)
	redir.RegisterProtoMin, redir.RegisterProtoMax = pmin, pmax
	return append(out, redir), nil
}

// limit decodes a packet limit.
func (d *decoder) limit(e *expr.Limit) error {
	if e.Type != expr.LimitTypePkts {
		return fmt.Errorf("a limit of bytes")
	}
	for name, secs := range items.NftLimitUnits {
		if uint64(e.Unit) == secs {
			d.r.Limit = &items.NftLimit{Rate: e.Rate, Per: name, Burst: e.Burst, Over: e.Over}
			return nil
		}
	}
	return fmt.Errorf("limit unit %d", e.Unit)
}

// log decodes a log to syslog (not to a group, nor with flags).
func (d *decoder) log(e *expr.Log) error {
	if e.Key&^(1<<unix.NFTA_LOG_PREFIX|1<<unix.NFTA_LOG_LEVEL) != 0 {
		return fmt.Errorf("a log with attributes netagent does not write (%#x)", e.Key)
	}
	l := &items.NftLog{Prefix: string(e.Data)}
	if e.Key&(1<<unix.NFTA_LOG_LEVEL) != 0 {
		if int(e.Level) >= len(items.NftLogLevels) {
			return fmt.Errorf("log level %d", e.Level)
		}
		l.Level = items.NftLogLevels[e.Level]
	}
	d.r.Log = l
	return nil
}

// reject decodes a reject: its icmp codes are icmpv6 ones after an
// nfproto ipv6 match (in an ip6 table, see items' canonicalReject).
func (d *decoder) reject(e *expr.Reject) error {
	var kind string
	switch e.Type {
	case rejectTCP:
		kind = "tcp reset"
	case rejectICMPX:
		kind = "icmpx"
	case rejectICMP:
		kind = "icmp"
		if d.v6 {
			kind = "icmpv6"
		}
	default:
		return fmt.Errorf("reject type %d", e.Type)
	}
	d.r.Reject = &items.NftReject{With: items.NftRejectString(kind, e.Code)}
	return nil
}

// ports returns the port range held by the immediates of registers lo
// and hi (hi 0: one port).
func (d *decoder) ports(lo, hi uint32) (uint16, uint16, error) {
	if len(d.imm[lo]) != 2 || hi != 0 && len(d.imm[hi]) != 2 {
		return 0, 0, fmt.Errorf("a port range netagent does not write")
	}
	p := binary.BigEndian.Uint16(d.imm[lo])
	if hi == 0 {
		return p, p, nil
	}
	return p, binary.BigEndian.Uint16(d.imm[hi]), nil
}

func (d *decoder) redirect(e *expr.Redir) error {
	r := &items.NftRedirect{}
	if e.RegisterProtoMin != 0 {
		lo, hi, err := d.ports(e.RegisterProtoMin, e.RegisterProtoMax)
		if err != nil {
			return err
		}
		r.Port = items.NftPortsString(lo, hi)
	}
	d.r.Redirect = r
	return nil
}

func (d *decoder) nat(e *expr.NAT) error {
	var r items.NftNatRange
	var ok bool
	r.AddrLo, ok = netip.AddrFromSlice(d.imm[e.RegAddrMin])
	r.AddrHi = r.AddrLo
	if e.RegAddrMax != 0 {
		r.AddrHi, _ = netip.AddrFromSlice(d.imm[e.RegAddrMax])
	}
	if !ok || !r.AddrHi.IsValid() || e.Random || e.FullyRandom || e.Persistent || e.Prefix {
		return fmt.Errorf("a nat statement netagent does not write")
	}
	if e.RegProtoMin != 0 {
		var err error
		if r.PortLo, r.PortHi, err = d.ports(e.RegProtoMin, e.RegProtoMax); err != nil {
			return err
		}
	}
	s := items.NftNatToString(r)
	if e.Type == expr.NATTypeSourceNAT {
		d.r.SNAT = s
	} else {
		d.r.DNAT = s
	}
	return nil
}
