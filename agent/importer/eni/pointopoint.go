package eni

import (
	"net/netip"
	"strconv"

	"github.com/netagent/netagent/agent/importer"
	"github.com/netagent/netagent/agent/intent"
)

// pointopoint is one pointopoint option: the peer of the nth address, as
// ifupdown2 gives it (address.py: get_attr_value_n, then addr_add with
// the peer as IFA_ADDRESS and the peer's prefix length).
type pointopoint struct {
	peer netip.Prefix // a length of its own, or the host's
	at   importer.Position
}

func (ifc *iface) setPointopoint(args []string, at importer.Position) string {
	p, err := netip.ParsePrefix(args[0])
	if err != nil {
		a, aerr := netip.ParseAddr(args[0])
		p, err = netip.PrefixFrom(a, a.BitLen()), aerr
	}
	if err != nil || len(args) > 1 {
		return "invalid pointopoint " + strconv.Quote(args[0]) + " (the peer's address, with or without a prefix length)"
	}
	ifc.peers = append(ifc.peers, pointopoint{p, at})
	return ""
}

// checkPeers refuses a pointopoint for an address the stanza has not, of
// another family than its address, or beside a broadcast of the same
// address (netagent gives a point-to-point address none).
func (p *parser) checkPeers(ifc *iface) {
	for i, pp := range ifc.peers {
		why := ""
		switch {
		case i >= len(ifc.addrs):
			why = missingAddress("pointopoint", i)
		case netip.MustParsePrefix(ifc.addrs[i]).Addr().Is4() != pp.peer.Addr().Is4():
			why = pp.peer.Addr().String() + " is not of the family of " + ifc.addrs[i]
		case i < len(ifc.broadcasts):
			why = "a point-to-point address with a broadcast: netagent gives a point-to-point address none"
		}
		if why != "" {
			p.refuse(ifc, pp.at, "iface "+ifc.name+": pointopoint", why)
		}
	}
}

// addresses are ifc's addresses as the intent writes them: the nth with
// the nth pointopoint's peer, and that peer's prefix length.
func (ifc *iface) addresses() []string {
	if len(ifc.peers) == 0 {
		return ifc.addrs
	}
	out := make([]string, len(ifc.addrs))
	for i, s := range ifc.addrs {
		out[i] = s
		if i < len(ifc.peers) {
			a := netip.MustParsePrefix(s).Addr()
			out[i] = intent.FormatAddress(netip.PrefixFrom(a, ifc.peers[i].peer.Bits()), ifc.peers[i].peer.Addr())
		}
	}
	return out
}
