package l3

import (
	"fmt"

	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/internal/netnsx"
	"github.com/netagent/netagent/items"
	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// MaxOthers bounds how many objects of one kind (addresses, routes, rules,
// neighbours) ReadOthers takes from the namespace: they are another
// writer's, and an import of more is refused rather than grown without
// end.
const MaxOthers = 1 << 16

// Route protocols (rtm_protocol) of routes that a daemon learned from the
// network: a router advertisement, a DHCP lease. They are not static.
const (
	rtprotRA   = 9
	rtprotDHCP = 16
)

// ReadOthers reads the addresses, routes, rules and permanent neighbours
// in t's namespace that are not netagent's, for an import: each as the
// item that would make it, or as an items.Foreign whose Why says why no
// item can (a dynamic address or route, a label or scope the intent does
// not spell, a route or rule with attributes no item has). The kernel's
// own objects (the loopback's and IPv6 link-local addresses, protocol
// kernel routes and rules, the neighbour cache) are left out, or with all
// returned as Foreign too: the kernel makes them by itself, so no intent
// can declare them.
func ReadOthers(t *netnsx.Target, stateDir string, all bool) ([]dg.Item, error) {
	conn, err := openConnIn(t, stateDir)
	if err != nil {
		return nil, fmt.Errorf("l3 import read: %w", err)
	}
	defer conn.close()
	return readOthers(conn, all)
}

// readOthers is ReadOthers over the narrow interfaces.
func readOthers(conn rawOps, all bool) ([]dg.Item, error) {
	names, err := linkNames(conn)
	if err != nil {
		return nil, fmt.Errorf("l3 import read: %w", err)
	}
	var out []dg.Item
	for _, read := range []func(rawOps, map[int]string, bool) ([]dg.Item, error){
		otherAddrs, otherRoutes, otherRules, otherNeighs,
	} {
		got, err := read(conn, names, all)
		if err != nil {
			return nil, fmt.Errorf("l3 import read: %w", err)
		}
		if len(got) > MaxOthers {
			return nil, fmt.Errorf("l3 import read: %d objects of one kind, more than %d", len(got), MaxOthers)
		}
		out = append(out, got...)
	}
	return out, nil
}

// kernelsOwn is the Why of the kernel's own objects.
const kernelsOwn = "the kernel's own: it makes it by itself, an intent cannot declare it"

func otherAddrs(conn rawOps, names map[int]string, all bool) ([]dg.Item, error) {
	list, err := dumpAddrs(conn, unix.AF_UNSPEC)
	if err != nil {
		return nil, err
	}
	return onLinks(list, names, func(k *kernelAddr) int { return k.index }, func(k *kernelAddr, dev string) dg.Item {
		if k.owned() || (kernelsAddr(k) && !all) {
			return nil
		}
		return otherAddr(k, dev, names)
	}), nil
}

// onLinks returns the items take makes of the objects of list on a link
// of names (index gives an object's link), leaving out those it makes
// none of (nil).
func onLinks[K any](list []K, names map[int]string, index func(*K) int, take func(k *K, dev string) dg.Item) []dg.Item {
	var out []dg.Item
	for i := range list {
		if dev, ok := names[index(&list[i])]; ok {
			if it := take(&list[i], dev); it != nil {
				out = append(out, it)
			}
		}
	}
	return out
}

// otherAddr is the Address item of k, or a Foreign saying why none.
func otherAddr(k *kernelAddr, dev string, names map[int]string) dg.Item {
	a := addrItemOf(k, dev, nil)
	why := ""
	switch {
	case kernelsAddr(k):
		why = kernelsOwn
	case k.valid != foreverLft || k.preferred != foreverLft:
		why = fmt.Sprintf("a dynamic address (valid lifetime %ds left, protocol %d: SLAAC, DHCP or a timed one) is not a static one: declare the interface's dhcp4, dhcp6 or ipv6 acceptRA instead", k.valid, k.proto)
	case a.Label != "":
		why = "an IPv4 label other than the interface name is not in the intent's addresses"
	case a.Prefix.Addr().Is4() && a.Scope != items.ScopeUniverse:
		why = "an IPv4 address scope other than global is not in the intent's addresses"
	}
	if why == "" {
		return a
	}
	f := foreignAddr(k, names)
	if f == nil { // the kernel's own: foreignAddr leaves them out
		f = &items.Foreign{Kind: items.TypeAddress, Desc: fmt.Sprintf("%s dev %s proto %d", k.prefix, dev, k.proto)}
	}
	f.Why = why
	return f
}

func otherRoutes(conn rawOps, names map[int]string, all bool) ([]dg.Item, error) {
	var out []dg.Item
	var m routeMsg
	err := retryDump("routes", func() error {
		out = out[:0]
		seen := map[string]int{}
		return conn.dumpEach(routeDumpRequest(unix.AF_UNSPEC), unix.RTM_NEWROUTE, func(b []byte) {
			if len(out) > MaxOthers || parseRouteMsgInto(b, &m) != nil || m.Flags&unix.RTM_F_CLONED != 0 || m.Protocol == items.RouteProtocol {
				return
			}
			if it := otherRoute(m, names, seen, all); it != nil {
				out = append(out, it)
			}
		})
	})
	return out, err
}

// otherRoute is the Route item of m, a Foreign saying why none, or nil
// for the kernel's own without all.
func otherRoute(m routeMsg, names map[int]string, seen map[string]int, all bool) dg.Item {
	why := ""
	switch m.Protocol {
	case unix.RTPROT_KERNEL:
		if !all {
			return nil
		}
		why = kernelsOwn
	case rtprotRA, rtprotDHCP:
		why = fmt.Sprintf("a route learned from the network (protocol %d: a router advertisement or DHCP) is not a static one: declare the interface's dhcp4, dhcp6 or ipv6 acceptRA instead", m.Protocol)
	}
	it, ok := decodeRoute(m, names)
	if ok && why == "" {
		return it
	}
	if why == "" {
		why = "a route with attributes no route of the intent has (a tos, an encapsulation, a nexthop object, other metrics or type)"
	}
	f := foreignRoute(m, it, names, seen)
	f.Why = why
	return f
}

func otherRules(conn rawOps, _ map[int]string, all bool) ([]dg.Item, error) {
	list, err := dumpRuleMsgs(conn, unix.AF_UNSPEC)
	if err != nil {
		return nil, err
	}
	var out []dg.Item
	seen := map[string]int{}
	for _, m := range list {
		if m.Proto == items.RouteProtocol || (m.Proto == unix.RTPROT_KERNEL && !all) {
			continue
		}
		r, ok := decodeRule(m, nil)
		if ok && m.Proto != unix.RTPROT_KERNEL {
			out = append(out, r)
			continue
		}
		f := foreignRule(m, r, seen)
		f.Why = "a rule with selectors no rule of the intent has (a tos, a realm, ...)"
		if m.Proto == unix.RTPROT_KERNEL {
			f.Why = kernelsOwn
		}
		out = append(out, f)
	}
	return out, nil
}

// otherNeighs are the permanent neighbours that are not netagent's (the
// cache is the kernel's, learned: left out, even with all).
func otherNeighs(conn rawOps, names map[int]string, _ bool) ([]dg.Item, error) {
	list, err := dumpNeighs(conn, unix.AF_UNSPEC)
	if err != nil {
		return nil, err
	}
	return onLinks(list, names, func(k *kernelNeigh) int { return k.index }, func(k *kernelNeigh, dev string) dg.Item {
		switch {
		case k.owned() || k.state&netlink.NUD_PERMANENT == 0:
			return nil
		case len(k.mac) == 0:
			f := foreignNeigh(k, names)
			f.Why = "a permanent neighbour without a link-layer address is not in the intent's neighbors"
			return f
		}
		return &items.Neighbor{Dev: dev, IP: k.ip, MAC: k.mac}
	}), nil
}
