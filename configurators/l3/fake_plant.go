package l3

import (
	"fmt"
	"net"
	"net/netip"

	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/items"
	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// Plant puts the object of it in the fake as someone else's, of protocol
// proto (not netagent's): an address (the kernel's label and scope), a
// route (its table, destination, metric, gateway and device), a rule (its
// priority, source and table) or a permanent neighbour. Other tools'
// objects for the tests of other packages (agent/host's adoption).
func (k *FakeKernel) Plant(it dg.Item, proto uint8) error {
	k.lock() // the links of Links first
	index := 0
	if r, ok := it.(*items.Route); ok {
		index = k.index(r.Dev)
	}
	k.mu.Unlock()
	switch x := it.(type) {
	case *items.Address:
		k.addAddr(x.Dev, x.Prefix.String(), proto)
	case *items.Route:
		r := netlink.Route{Family: int(afOf(x.Family())), Dst: ipNetOf(x.Dst), LinkIndex: index, Protocol: netlink.RouteProtocol(proto),
			Table: int(x.TableID()), Priority: int(x.Metric)}
		if x.Gw.IsValid() {
			r.Gw = net.IP(x.Gw.AsSlice())
		}
		k.addRoute(r)
	case *items.Rule:
		r := netlink.NewRule()
		r.Family, r.Priority, r.Table, r.Protocol = int(afOf(x.Family)), int(x.Priority), int(x.Table), proto
		if x.From.IsValid() {
			r.Src = ipNetOf(x.From)
		}
		k.addRule(r)
	case *items.Neighbor:
		k.addNeigh(x.Dev, x.IP.String(), x.MAC.String(), netlink.NUD_PERMANENT, proto)
	default:
		return fmt.Errorf("the l3 fake plants no %s", it.Type())
	}
	return nil
}

// ipNetOf converts a prefix for netlink.
func ipNetOf(p netip.Prefix) *net.IPNet {
	return &net.IPNet{IP: net.IP(p.Addr().AsSlice()), Mask: net.CIDRMask(p.Bits(), p.Addr().BitLen())}
}

// Take returns the change requests the fake received since the last
// Take ("RTM_NEWADDR replace", "RTM_DELRULE", ...) and clears the log.
func (k *FakeKernel) Take() []string {
	k.mu.Lock()
	defer k.mu.Unlock()
	out := k.sent
	k.sent = nil
	return out
}

// requestName names a request for Take.
func requestName(typ uint16, flags int) string {
	names := map[uint16]string{unix.RTM_NEWADDR: "RTM_NEWADDR", unix.RTM_DELADDR: "RTM_DELADDR", unix.RTM_NEWROUTE: "RTM_NEWROUTE",
		unix.RTM_DELROUTE: "RTM_DELROUTE", unix.RTM_NEWRULE: "RTM_NEWRULE", unix.RTM_DELRULE: "RTM_DELRULE",
		unix.RTM_NEWNEIGH: "RTM_NEWNEIGH", unix.RTM_DELNEIGH: "RTM_DELNEIGH"}
	name, ok := names[typ]
	if !ok {
		name = fmt.Sprintf("type %d", typ)
	}
	switch {
	case flags&unix.NLM_F_REPLACE != 0:
		name += " replace"
	case flags&unix.NLM_F_EXCL != 0:
		name += " excl"
	}
	return name
}
