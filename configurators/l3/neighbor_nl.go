package l3

import (
	"net"
	"net/netip"

	"github.com/netagent/netagent/items"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netlink/nl"
	"golang.org/x/sys/unix"
)

// sizeofNdmsg is the size of struct ndmsg.
const sizeofNdmsg = 12

// kernelNeigh is one neighbour entry as the kernel reports it.
type kernelNeigh struct {
	index int
	ip    netip.Addr
	mac   net.HardwareAddr
	state uint16
	flags uint8
	proto uint8 // NDA_PROTOCOL, 0 when absent
}

// owned reports whether the entry carries netagent's mark.
func (k *kernelNeigh) owned() bool { return k.proto == items.RouteProtocol }

// static reports whether someone configured the entry (permanent or
// noarp, or learned by an external agent such as a switch driver) rather
// than the kernel learning it: a static entry without our mark is someone
// else's; a learned one (reachable, stale, failed, ...) is only the
// kernel's cache, which a permanent entry of ours replaces.
func (k *kernelNeigh) static() bool {
	return k.state&(netlink.NUD_PERMANENT|netlink.NUD_NOARP) != 0 || k.flags&netlink.NTF_EXT_LEARNED != 0
}

// neighRequest builds an RTM_NEWNEIGH or RTM_DELNEIGH message for n on the
// interface index: a permanent entry with NDA_PROTOCOL =
// items.RouteProtocol (the ownership mark).
func neighRequest(msgType uint16, flags int, n *items.Neighbor, index int) *nl.NetlinkRequest {
	req := newRequest(msgType, flags)
	msg := &netlink.Ndmsg{
		Family: afOf(items.FamilyOf(n.IP)),
		Index:  uint32(index),
		State:  netlink.NUD_PERMANENT,
	}
	req.AddData(msg)
	req.AddData(nl.NewRtAttr(netlink.NDA_DST, n.IP.AsSlice()))
	if msgType == unix.RTM_DELNEIGH {
		return req
	}
	req.AddData(nl.NewRtAttr(netlink.NDA_LLADDR, []byte(n.MAC)))
	req.AddData(nl.NewRtAttr(ndaProtocol, nl.Uint8Attr(items.RouteProtocol)))
	return req
}

// neighDumpRequest asks for every neighbour entry of one family.
func neighDumpRequest(family int) *nl.NetlinkRequest {
	req := newDump(unix.RTM_GETNEIGH)
	req.AddData(&netlink.Ndmsg{Family: uint8(family)})
	return req
}

// parseNeigh decodes one RTM_NEWNEIGH payload; ok is false for entries
// without an IPv4 or IPv6 destination.
func parseNeigh(m []byte) (kernelNeigh, bool) {
	if len(m) < sizeofNdmsg {
		return kernelNeigh{}, false
	}
	ne := nl.NativeEndian()
	k := kernelNeigh{
		index: int(int32(ne.Uint32(m[4:8]))),
		state: ne.Uint16(m[8:10]),
		flags: m[10],
	}
	attrs, err := nl.ParseRouteAttr(m[sizeofNdmsg:])
	if err != nil || (m[0] != unix.AF_INET && m[0] != unix.AF_INET6) {
		return kernelNeigh{}, false
	}
	for _, a := range attrs {
		switch a.Attr.Type {
		case netlink.NDA_DST:
			k.ip, _ = netip.AddrFromSlice(a.Value)
		case netlink.NDA_LLADDR:
			k.mac = append(net.HardwareAddr(nil), a.Value...)
		case ndaProtocol:
			if len(a.Value) > 0 {
				k.proto = a.Value[0]
			}
		}
	}
	return k, k.ip.IsValid()
}
