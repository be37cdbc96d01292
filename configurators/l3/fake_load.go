package l3

import (
	"fmt"
	"net"
	"net/netip"
	"slices"

	"golang.org/x/sys/unix"

	"github.com/netagent/netagent/internal/netnsx"
)

// LoadedAddress is one address of another namespace's dump (a
// snapshot), on the link of that name.
type LoadedAddress struct {
	Dev    string
	Prefix netip.Prefix // the address and its prefix length
	Peer   netip.Addr   // a point-to-point address's far end; zero else
	Label  string
	Scope  uint8
	Flags  uint32
	Proto  uint8
}

// LoadedNeighbour is one neighbour entry of a dump.
type LoadedNeighbour struct {
	Dev   string
	IP    netip.Addr
	MAC   net.HardwareAddr
	State uint16
	Flags uint8
	Proto uint8
}

// LoadedState is what Load plants in a FakeKernel: a namespace's
// addresses, routes of every table and rules (the default ones included:
// they replace the fake's) as the kernel's dump messages (RTM_NEWROUTE
// and RTM_NEWRULE payloads, ifindexes as the Links the fake follows
// number them), neighbours, and the devices ("all" too) whose
// promote_secondaries is on (NewFakeFrom takes them from the sysctls).
type LoadedState struct {
	Addresses  []LoadedAddress
	RouteMsgs  [][]byte
	RuleMsgs   [][]byte
	Neighbours []LoadedNeighbour
	Promote    []string
}

// Load replaces what the fake holds by s, exactly as given: no prefix
// route is added for an address (the dump has the kernel's).
func (k *FakeKernel) Load(s LoadedState) error {
	k.lock()
	defer k.mu.Unlock()
	k.addrs, k.routes, k.neighs, k.rules = nil, nil, nil, nil
	for i, m := range s.RuleMsgs {
		r, err := parseRuleRequest(m)
		if err != nil {
			return fmt.Errorf("loading rule %d: %w", i, err)
		}
		k.rules = append(k.rules, r)
	}
	for _, a := range s.Addresses {
		i := k.index(a.Dev)
		if i == 0 {
			return fmt.Errorf("loading address %s: no link %q", a.Prefix, a.Dev)
		}
		k.addrs = append(k.addrs, kernelAddr{index: i, prefix: a.Prefix, peer: a.Peer, label: a.Label, scope: a.Scope, flags: a.Flags, proto: a.Proto, valid: foreverLft, preferred: foreverLft})
	}
	for i, m := range s.RouteMsgs {
		r, err := parseRouteRequest(m)
		if err != nil {
			return fmt.Errorf("loading route %d: %w", i, err)
		}
		if r.LinkIndex != 0 && !k.hasLink(r.LinkIndex) {
			return fmt.Errorf("loading route %d (%s): no link %d", i, r.Dst, r.LinkIndex)
		}
		k.routes = append(k.routes, r)
	}
	for _, n := range s.Neighbours {
		i := k.index(n.Dev)
		if i == 0 {
			return fmt.Errorf("loading neighbour %s: no link %q", n.IP, n.Dev)
		}
		k.neighs = append(k.neighs, kernelNeigh{index: i, ip: n.IP, mac: slices.Clone(n.MAC), state: n.State, flags: n.Flags, proto: n.Proto})
	}
	k.promote = map[string]bool{}
	for _, d := range s.Promote {
		k.promote[d] = true
	}
	return nil
}

// Dump reads t's namespace as Load plants it: every address, the routes
// of every table, the rules and the neighbour entries (Promote is left
// to the caller: the sysctls). names are the links by ifindex. It writes
// nothing.
func Dump(t *netnsx.Target, names map[int]string) (LoadedState, error) {
	var s LoadedState
	conn, err := openConn(t)
	if err != nil {
		return s, fmt.Errorf("l3 dump: %w", err)
	}
	defer conn.close()
	addrs, err := dumpAddrs(conn, unix.AF_UNSPEC)
	if err != nil {
		return s, err
	}
	for _, a := range addrs {
		s.Addresses = append(s.Addresses, LoadedAddress{Dev: names[a.index], Prefix: a.prefix, Peer: a.peer, Label: a.label, Scope: a.scope, Flags: a.flags, Proto: a.proto})
	}
	for _, fam := range []int{unix.AF_INET, unix.AF_INET6} {
		neighs, err := dumpNeighs(conn, fam)
		if err != nil {
			return s, err
		}
		for _, n := range neighs {
			s.Neighbours = append(s.Neighbours, LoadedNeighbour{Dev: names[n.index], IP: n.ip, MAC: n.mac, State: n.state, Flags: n.flags, Proto: n.proto})
		}
	}
	for _, fam := range []int{unix.AF_INET, unix.AF_INET6} {
		rules, err := conn.dump(ruleDumpRequest(fam), unix.RTM_NEWRULE)
		if err != nil {
			return s, fmt.Errorf("dumping rules: %w", err)
		}
		for _, b := range rules {
			s.RuleMsgs = append(s.RuleMsgs, slices.Clone(b))
		}
		routes, err := conn.dump(routeDumpRequest(fam), unix.RTM_NEWROUTE)
		if err != nil {
			return s, fmt.Errorf("dumping routes: %w", err)
		}
		for _, b := range routes {
			if m, perr := parseRouteMsg(b); perr == nil && m.Flags&unix.RTM_F_CLONED == 0 {
				s.RouteMsgs = append(s.RouteMsgs, slices.Clone(b))
			}
		}
	}
	return s, nil
}

// CheckRouteMsg reports whether b is a route's dump message that Load
// takes (an IPv4 or IPv6 RTM_NEWROUTE payload), and returns the
// ifindexes it names (its device's and its hops').
func CheckRouteMsg(b []byte) (links []int, err error) {
	defer recoverShort(&err)
	r, err := parseRouteRequest(b)
	if err != nil {
		return nil, err
	}
	if r.LinkIndex != 0 {
		links = append(links, r.LinkIndex)
	}
	for _, h := range r.MultiPath {
		links = append(links, h.LinkIndex)
	}
	return links, nil
}

// CheckRuleMsg reports whether b is a rule's dump message that Load
// takes (an IPv4 or IPv6 RTM_NEWRULE payload).
func CheckRuleMsg(b []byte) (err error) {
	defer recoverShort(&err)
	r, err := parseRuleRequest(b)
	if err == nil && r.Family != unix.AF_INET && r.Family != unix.AF_INET6 {
		err = fmt.Errorf("family %d: %w", r.Family, unix.EAFNOSUPPORT)
	}
	return err
}

// recoverShort turns the panic of an attribute shorter than its type
// into EINVAL.
func recoverShort(err *error) {
	if recover() != nil {
		*err = fmt.Errorf("an attribute is shorter than its type: %w", unix.EINVAL)
	}
}
