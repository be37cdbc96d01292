package l3

import (
	"fmt"

	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/internal/netnsx"
	"github.com/netagent/netagent/items"
	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// The kernel's own address protocols (IFA_PROTO): the loopback's and the
// IPv6 link-local ones. (IFAPROT_KERNEL_RA, 2, the addresses from router
// advertisements, are the network's: listed.)
const (
	ifaProtoKernelLo = 1
	ifaProtoKernelLL = 3
)

// ReadForeignAddrNeigh returns the addresses, the routes and the
// permanent neighbours in t's namespace that are not netagent's, as
// items.Foreign (`show --all`). ReadBack leaves them out (the routes but
// those that hold an intended route's identity): netagent never touches
// them. The kernel's own addresses (the loopback's, IPv6 link-local ones)
// and routes (protocol kernel), and the neighbours the kernel learned (its
// cache) are left out here too.
func ReadForeignAddrNeigh(t *netnsx.Target, stateDir string) ([]dg.Item, error) {
	conn, err := openConnIn(t, stateDir)
	if err != nil {
		return nil, fmt.Errorf("l3 foreign read-back: %w", err)
	}
	defer conn.close()
	return readForeignAddrNeigh(conn)
}

// readForeignAddrNeigh is ReadForeignAddrNeigh over the narrow interfaces.
func readForeignAddrNeigh(conn rawOps) ([]dg.Item, error) {
	names, err := linkNames(conn)
	if err != nil {
		return nil, fmt.Errorf("l3 foreign read-back: %w", err)
	}
	addrs, err := dumpAddrs(conn, unix.AF_UNSPEC)
	if err != nil {
		return nil, fmt.Errorf("l3 foreign read-back: %w", err)
	}
	neighs, err := dumpNeighs(conn, unix.AF_UNSPEC)
	if err != nil {
		return nil, fmt.Errorf("l3 foreign read-back: %w", err)
	}
	var out []dg.Item
	seen := map[string]int{}
	err = eachRouteIn(conn, unix.AF_UNSPEC, []routeFilter{{}}, func(m *routeMsg) {
		if m.Protocol != items.RouteProtocol && m.Protocol != unix.RTPROT_KERNEL {
			plain, _ := decodeRoute(*m, names)
			out = append(out, foreignRoute(*m, plain, names, seen))
		}
	}, func() { out, seen = out[:0], map[string]int{} })
	if err != nil {
		return nil, fmt.Errorf("l3 foreign read-back: %w", err)
	}
	for i := range addrs {
		if f := foreignAddr(&addrs[i], names); f != nil {
			out = append(out, f)
		}
	}
	for i := range neighs {
		if f := foreignNeigh(&neighs[i], names); f != nil {
			out = append(out, f)
		}
	}
	return out, nil
}

// foreignAddr describes k when it is someone else's address, else nil.
func foreignAddr(k *kernelAddr, names map[int]string) *items.Foreign {
	dev, ok := names[k.index]
	if !ok || k.owned() || kernelsAddr(k) {
		return nil
	}
	a := addrItemOf(k, dev, nil)
	desc := a.Prefix.String() + " dev " + dev
	if a.Prefix.Addr().Is4() {
		desc += " scope " + a.Scope.String()
		if a.Label != "" {
			desc += " label " + a.Label
		}
	}
	if k.secondary() {
		desc += " secondary"
	}
	desc += fmt.Sprintf(" proto %d", k.proto)
	return &items.Foreign{Kind: items.TypeAddress, Desc: desc, Holds: dg.Ref(a)}
}

// kernelsAddr reports whether the kernel made k by itself: the loopback's
// addresses or an IPv6 link-local address.
func kernelsAddr(k *kernelAddr) bool {
	ip := k.prefix.Addr()
	return k.proto == ifaProtoKernelLo || k.proto == ifaProtoKernelLL ||
		ip.IsLoopback() || ip.Is6() && ip.IsLinkLocalUnicast()
}

// foreignNeigh describes k when it is someone else's permanent neighbour,
// else nil.
func foreignNeigh(k *kernelNeigh, names map[int]string) *items.Foreign {
	dev, ok := names[k.index]
	if !ok || k.owned() || k.state&netlink.NUD_PERMANENT == 0 {
		return nil
	}
	n := &items.Neighbor{Dev: dev, IP: k.ip, MAC: k.mac}
	desc := fmt.Sprintf("%s dev %s lladdr %s permanent proto %d", k.ip, dev, k.mac, k.proto)
	if len(k.mac) == 0 {
		desc = fmt.Sprintf("%s dev %s permanent proto %d", k.ip, dev, k.proto)
	}
	return &items.Foreign{Kind: items.TypeNeighbor, Desc: desc, Holds: dg.Ref(n)}
}
