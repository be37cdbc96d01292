package eni

import (
	"net/netip"
	"strconv"

	"github.com/netagent/netagent/agent/importer"
)

// broadcast is one broadcast option: ifupdown2 gives the nth one to the
// nth address (address.py: get_attr_value_n).
type broadcast struct {
	addr netip.Addr
	at   importer.Position
}

func (ifc *iface) setBroadcast(args []string, at importer.Position) string {
	a, err := netip.ParseAddr(args[0])
	if err != nil || len(args) > 1 || !a.Is4() {
		return "invalid broadcast " + strconv.Quote(args[0]) + " (an IPv4 address)"
	}
	ifc.broadcasts = append(ifc.broadcasts, broadcast{a, at})
	return ""
}

// checkBroadcasts accepts each broadcast that is the one netagent gives
// its address anyway (an IPv4 address of a prefix shorter than /31 gets
// its subnet's, as netlink.AddrAdd and `ip addr add ... brd +` give it)
// and refuses the others. (Debian's ifupdown2 3.0 fails to add an address
// given a broadcast: "'str' object has no attribute 'packed'", and adds
// no broadcast to the others; a host it configured so lacks the address,
// which plan --adopt then shows as a create.)
func (p *parser) checkBroadcasts(ifc *iface) {
	for i, b := range ifc.broadcasts {
		why := ""
		switch {
		case i >= len(ifc.addrs):
			why = missingAddress("broadcast", i)
		default:
			pfx := netip.MustParsePrefix(ifc.addrs[i])
			if want, ok := subnetBroadcast(pfx); !ok || want != b.addr {
				why = b.addr.String() + " for " + pfx.String() + ": netagent gives an IPv4 address of a prefix shorter than /31 its subnet's broadcast address, and no other"
			}
		}
		if why != "" {
			p.refuse(ifc, b.at, "iface "+ifc.name+": broadcast", why)
		}
	}
}

// missingAddress is why the (i+1)th of an option ifupdown2 gives the nth
// address is refused when the stanza has fewer addresses.
func missingAddress(option string, i int) string {
	return option + " #" + strconv.Itoa(i+1) + " is for an address the stanza has not (ifupdown2 gives the nth " + option + " to the nth address)"
}

// subnetBroadcast is the last address of pfx's subnet, for an IPv4
// prefix shorter than /31.
func subnetBroadcast(pfx netip.Prefix) (netip.Addr, bool) {
	if !pfx.Addr().Is4() || pfx.Bits() >= 31 {
		return netip.Addr{}, false
	}
	a := pfx.Masked().Addr().As4()
	host := uint32(1)<<(32-pfx.Bits()) - 1
	n := uint32(a[0])<<24 | uint32(a[1])<<16 | uint32(a[2])<<8 | uint32(a[3]) | host
	return netip.AddrFrom4([4]byte{byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)}), true
}
