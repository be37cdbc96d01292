package items

import (
	"fmt"
	"math/bits"
	"net/netip"
	"slices"
	"strconv"
	"strings"
)

// NftLog is a rule's log statement (nft's "log prefix P level L"): the
// kernel's log, to syslog at Level ("" is nft's default, warn).
type NftLog struct {
	Prefix string `json:"prefix,omitempty"`
	Level  string `json:"level,omitempty"` // emerg, alert, crit, err, warn, notice, info, debug, audit
}

// NftLogLevels are the log levels nft knows, in the order of their numbers
// (NFT_LOGLEVEL_*).
var NftLogLevels = []string{"emerg", "alert", "crit", "err", "warn", "notice", "info", "debug", "audit"}

// NftLogPrefixMax is the longest prefix the kernel keeps (NF_LOG_PREFIXLEN
// less its terminating zero).
const NftLogPrefixMax = 127

// NftLimit is a rule's limit statement ("limit rate [over] R/PER burst B
// packets"): the rule goes on while packets come at most Rate per Per
// (with Over, only once they come faster).
type NftLimit struct {
	Rate  uint64 `json:"rate"`
	Per   string `json:"per"`             // second, minute, hour, day, week
	Burst uint32 `json:"burst,omitempty"` // 0: nft's default, 5 packets
	Over  bool   `json:"over,omitempty"`
}

// NftLimitBurstDefault is the burst nft (and the kernel) give a packet
// limit that names none.
const NftLimitBurstDefault = 5

// NftLimitOverflows reports a limit the kernel refuses as too large
// (nft_limit_init's EOVERFLOW): rate plus burst, or the nanoseconds of
// the unit per packet times burst, beyond 64 bits.
func NftLimitOverflows(l NftLimit) bool {
	unit, ok := NftLimitUnits[l.Per]
	if !ok || l.Rate == 0 {
		return false
	}
	burst := uint64(l.Burst)
	if burst == 0 {
		burst = NftLimitBurstDefault
	}
	if _, carry := bits.Add64(l.Rate, burst, 0); carry != 0 {
		return true
	}
	hi, _ := bits.Mul64(unit*1e9/l.Rate, burst)
	return hi != 0
}

// NftLimitUnits are the units of a limit's rate, in seconds.
var NftLimitUnits = map[string]uint64{"second": 1, "minute": 60, "hour": 3600, "day": 86400, "week": 604800}

// NftReject is a rule's reject statement: With is "tcp reset", or "icmp
// CODE", "icmpv6 CODE", "icmpx CODE" with a code of NftRejectCodes; ""
// is nft's default (icmpx port-unreachable in inet, icmp
// port-unreachable in ip, icmpv6 port-unreachable in ip6).
type NftReject struct {
	With string `json:"with,omitempty"`
}

// NftRejectCodes are the codes nft names for each kind of reject.
var NftRejectCodes = map[string]map[string]uint8{
	"icmp": {"net-unreachable": 0, "host-unreachable": 1, "prot-unreachable": 2, "port-unreachable": 3,
		"frag-needed": 4, "net-prohibited": 9, "host-prohibited": 10, "admin-prohibited": 13},
	"icmpv6": {"no-route": 0, "admin-prohibited": 1, "addr-unreachable": 3, "port-unreachable": 4,
		"policy-fail": 5, "reject-route": 6},
	"icmpx": {"no-route": 0, "port-unreachable": 1, "host-unreachable": 2, "admin-prohibited": 3},
}

// NftRedirect is a rule's redirect statement: to the local host, on Port
// (a port or a range lo-hi; "" keeps the packet's).
type NftRedirect struct {
	Port string `json:"port,omitempty"`
}

// nftICMPTypes are the type names nft knows for icmp and icmpv6.
var nftICMPTypes = map[string]map[string]int{
	"icmp": {"echo-reply": 0, "destination-unreachable": 3, "source-quench": 4, "redirect": 5, "echo-request": 8,
		"router-advertisement": 9, "router-solicitation": 10, "time-exceeded": 11, "parameter-problem": 12,
		"timestamp-request": 13, "timestamp-reply": 14, "info-request": 15, "info-reply": 16,
		"address-mask-request": 17, "address-mask-reply": 18},
	"icmpv6": {"destination-unreachable": 1, "packet-too-big": 2, "time-exceeded": 3, "parameter-problem": 4,
		"echo-request": 128, "echo-reply": 129, "mld-listener-query": 130, "mld-listener-report": 131,
		"mld-listener-done": 132, "nd-router-solicit": 133, "nd-router-advert": 134, "nd-neighbor-solicit": 135,
		"nd-neighbor-advert": 136, "nd-redirect": 137, "router-renumbering": 138, "ind-neighbor-solicit": 141,
		"ind-neighbor-advert": 142, "mld2-listener-report": 143},
}

// NftICMPType returns the number of an icmp or icmpv6 (proto) type, a
// name nft knows or a number 0-255, or -1 for neither.
func NftICMPType(proto, s string) int {
	proto = NftProtoName(NftProtoNumber(proto))
	if n, ok := nftICMPTypes[proto][s]; ok {
		return n
	}
	return byteNumber(s)
}

// NftICMPTypeName spells type n of proto as nft does: its name, or the
// number.
func NftICMPTypeName(proto string, n int) string {
	proto = NftProtoName(NftProtoNumber(proto))
	return nameOf(nftICMPTypes[proto], n)
}

// NftICMPTypeNames lists the names of proto's types, sorted.
func NftICMPTypeNames(proto string) []string {
	return sortedKeys(nftICMPTypes[NftProtoName(NftProtoNumber(proto))])
}

func byteNumber(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 || n > 255 || strconv.Itoa(n) != s {
		return -1
	}
	return n
}

func nameOf[V int | uint8](names map[string]V, n int) string {
	for name, v := range names {
		if int(v) == n {
			return name
		}
	}
	return strconv.Itoa(n)
}

// ParseNftReject parses a reject's With: the kind (tcp reset, icmp,
// icmpv6, icmpx) and the code; "" is the family's default.
func ParseNftReject(family, with string) (kind string, code uint8, err error) {
	if with == "" {
		return nftRejectDefault(family)
	}
	if with == "tcp reset" {
		return "tcp reset", 0, nil
	}
	kind, name, _ := strings.Cut(with, " ")
	codes, ok := NftRejectCodes[kind]
	if !ok {
		return "", 0, fmt.Errorf("%q is not a reject type (want tcp reset, or icmp, icmpv6 or icmpx and a code)", with)
	}
	if c, ok := codes[name]; ok {
		return kind, c, nil
	}
	if n := byteNumber(name); n >= 0 {
		return kind, uint8(n), nil
	}
	return "", 0, fmt.Errorf("%q is not an %s code (want %s)", name, kind, strings.Join(sortedKeys(codes), ", "))
}

func nftRejectDefault(family string) (string, uint8, error) {
	switch family {
	case "ip":
		return "icmp", 3, nil
	case "ip6":
		return "icmpv6", 4, nil
	}
	return "icmpx", 1, nil
}

// NftRejectString spells a reject's kind and code as nft does.
func NftRejectString(kind string, code uint8) string {
	if kind == "tcp reset" {
		return kind
	}
	return kind + " " + nameOf(NftRejectCodes[kind], int(code))
}

func sortedKeys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// canonicalReject spells a reject as the read-back does in family: with
// its kind and code, the default spelled out. The read-back cannot tell
// an ip6 table's icmpv6 reject from an icmp one (the kernel's expression
// is the same), and decodes both as icmp: in an ip6 table icmp is icmpv6.
func canonicalReject(family string, r *NftReject) *NftReject {
	if r == nil {
		return nil
	}
	kind, code, err := ParseNftReject(family, r.With)
	if err != nil {
		return r
	}
	if family == "ip6" && kind == "icmp" {
		kind = "icmpv6"
	}
	return &NftReject{With: NftRejectString(kind, code)}
}

// NftNatRange is what a nat statement translates to: an address or a
// range of them, and a port or a range of them (0 when none is given).
type NftNatRange struct {
	AddrLo, AddrHi netip.Addr
	PortLo, PortHi uint16
}

// ParseNftNatTo parses what snat and dnat translate to: an address or a
// range "a-b", optionally with ":port" or ":lo-hi" (IPv6 addresses in
// brackets when a port follows: "[2001:db8::1]:80", "[a-b]:80").
func ParseNftNatTo(s string) (NftNatRange, error) {
	bad := fmt.Errorf("%q is not an address or a range a-b, then optionally :port or :lo-hi ([ipv6]:port)", s)
	addrs, ports := s, ""
	if strings.HasPrefix(s, "[") {
		var ok bool
		addrs, ports, ok = strings.Cut(s[1:], "]:")
		if !ok {
			return NftNatRange{}, bad
		}
	} else if strings.Count(s, ":") == 1 {
		addrs, ports, _ = strings.Cut(s, ":")
	}
	var r NftNatRange
	lo, hi, isRange := strings.Cut(addrs, "-")
	var err1, err2 error
	r.AddrLo, err1 = netip.ParseAddr(lo)
	r.AddrHi, err2 = r.AddrLo, nil
	if isRange {
		r.AddrHi, err2 = netip.ParseAddr(hi)
	}
	if err1 != nil || err2 != nil || r.AddrLo.Zone() != "" || r.AddrHi.Zone() != "" || r.AddrLo.Is4() != r.AddrHi.Is4() ||
		isRange && !r.AddrLo.Less(r.AddrHi) || strings.HasPrefix(s, "[") && r.AddrLo.Is4() {
		return NftNatRange{}, bad
	}
	if ports != "" {
		var err error
		if r.PortLo, r.PortHi, err = ParseNftPorts(ports); err != nil || r.PortLo == 0 {
			return NftNatRange{}, bad
		}
	}
	return r, nil
}

// NftNatToString spells a nat statement's range as ParseNftNatTo reads it.
func NftNatToString(r NftNatRange) string {
	addrs := r.AddrLo.String()
	if r.AddrHi != r.AddrLo {
		addrs += "-" + r.AddrHi.String()
	}
	if r.PortLo == 0 {
		return addrs
	}
	if r.AddrLo.Is6() {
		addrs = "[" + addrs + "]"
	}
	return addrs + ":" + NftPortsString(r.PortLo, r.PortHi)
}
