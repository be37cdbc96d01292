package link

import (
	"fmt"
	"net"
	"net/netip"

	"github.com/vishvananda/netlink"

	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/items"
)

// kernel reads and writes links in one namespace: through its netlink
// handle (nl), raw rtnetlink requests (raw), and the named namespaces a
// veth's peer may be in (ns). st is the namespace's state in the state
// directory (nil: none). wg configures WireGuard devices (nil: none, for
// the port configurator).
type kernel struct {
	nl  nlOps
	raw rawOps
	ns  nsOps
	st  *stateStore
	wg  wgOps
	nic nicOps // nil: no match finds a driver or a path
	// dump, when not nil, is one dump of every link at the start of the
	// batch this kernel (a copy: see withDump) serves.
	dump *dumped
	// intent is what the reconcile (or the plan) this kernel (a copy: see
	// withIntent) serves intends; known false: not known (a call from
	// outside a reconcile). A rename moves a NIC out of another's way only
	// when the intent names it elsewhere (swap.go).
	intent      *dg.Graph
	intentKnown bool
}

// owned reports whether the link carries netagent's mark.
func owned(l netlink.Link) bool { return ownedAlias(l.Attrs().Alias) }

// owns reports whether netagent owns l, given the namespace's state: l
// carries the mark, or the create journal names it (a create interrupted
// between the add and the mark); and l is not a physical link whose
// settings netagent changed (its originals are recorded), whatever its
// alias says.
func owns(l netlink.Link, st nsState, nameOf func(int) string) bool {
	if st.originalOf(l) != nil {
		return false
	}
	return owned(l) || st.journaled(l, nameOf)
}

// observe describes a link as an Interface with every value the kernel
// reports (no "leave as is" zero values: see mask). A link netagent does
// not own (isOwned false) is described as physical, its alias as it is;
// nameOf turns an ifindex of the same namespace into a name.
func (k *kernel) observe(l netlink.Link, nameOf func(int) string, isOwned bool) (*items.Interface, error) {
	a := l.Attrs()
	obs := &items.Interface{
		IfName:  a.Name,
		Kind:    items.KindPhysical,
		MTU:     a.MTU,
		AdminUp: a.Flags&net.FlagUp != 0,
		MAC:     cloneMAC(a.HardwareAddr),
		Alias:   a.Alias,
	}
	if !isOwned {
		return obs, nil
	}
	obs.Alias = unmarkedAlias(a.Alias)
	obs.Kind = kindOf(l)
	if kind, ok := linkKinds[obs.Kind]; ok {
		attrs, err := kind.observe(k, l, nameOf)
		if err != nil {
			return nil, fmt.Errorf("reading %s %s: %w", obs.Kind, obs.IfName, err)
		}
		obs.Attrs = attrs
		if _, borrowed := kind.(parentMAC); borrowed {
			obs.MAC = nil
		}
	}
	return obs, nil
}

// addrOf converts a kernel address; the unspecified address is none.
func addrOf(ip net.IP) netip.Addr {
	a, ok := netip.AddrFromSlice(ip)
	if !ok || a.Unmap().IsUnspecified() {
		return netip.Addr{}
	}
	return a.Unmap()
}

func cloneMAC(mac net.HardwareAddr) net.HardwareAddr {
	if len(mac) == 0 {
		return nil
	}
	return append(net.HardwareAddr(nil), mac...)
}
