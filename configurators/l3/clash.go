package l3

import (
	"fmt"
	"net/netip"

	"golang.org/x/sys/unix"

	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/internal/netnsx"
	"github.com/netagent/netagent/items"
)

// Clashes finds the items of hint (the intended graph) whose identity in
// the kernel an object without netagent's mark holds, and returns for
// each the error its create fails with (ErrNotOwned), as the configurator
// decides it:
//
//	address   the same IPv4 address and length, or the same IPv6 address
//	          of any length, on the item's interface
//	route     a route of another protocol with the item's table,
//	          destination and metric (tos 0)
//	rule      a rule of another protocol with every selector of the item
//	neighbor  a static entry (permanent, noarp, externally learned) for the
//	          item's address on its interface; a learned one is replaced
//
// It is ReadBack's counterpart for `plan`, which predicts these failures
// instead of planning creates that apply would then fail.
func Clashes(t *netnsx.Target, stateDir string, hint *dg.Graph) (map[dg.ItemRef]error, error) {
	if hint == nil {
		return nil, nil
	}
	conn, err := openConnIn(t, stateDir)
	if err != nil {
		return nil, fmt.Errorf("l3 clashes: %w", err)
	}
	defer conn.close()
	return clashes(t.NL, conn, hint)
}

// clashes is Clashes over the narrow interfaces (a fake kernel in unit
// tests).
func clashes(nlh dumpNL, conn rawOps, hint *dg.Graph) (map[dg.ItemRef]error, error) {
	s, err := snapshot(nlh, conn, hint)
	if err != nil {
		return nil, fmt.Errorf("l3 clashes: %w", err)
	}
	out := make(map[dg.ItemRef]error)
	for it := range hint.Items() {
		if err := s.clash(it); err != nil {
			out[dg.Ref(it)] = err
		}
	}
	return out, nil
}

// kernelState is every address, route, rule and neighbour of a namespace,
// indexed by the identity their items have.
type kernelState struct {
	indexes map[string]int // interface name → index
	addrs   []kernelAddr
	routes  kernelRoutes
	rules   []ruleMsg
	neighs  []kernelNeigh
}

// snapshot reads the kernel's state for the items of hint: every
// address, rule and neighbour, and the routes of the tables hint's routes
// are in (none without routes: another owner's full table costs a plan
// nothing).
func snapshot(nlh dumpNL, conn rawOps, hint *dg.Graph) (*kernelState, error) {
	names, err := linkNames(conn)
	if err != nil {
		return nil, err
	}
	s := &kernelState{indexes: make(map[string]int, len(names))}
	for i, n := range names {
		s.indexes[n] = i
	}
	var tables []uint32
	for it := range hint.Unordered() {
		if r, ok := it.(*items.Route); ok {
			tables = append(tables, r.TableID())
		}
	}
	s.routes = kernelRoutes{}
	if len(tables) > 0 {
		if s.routes, err = dumpRoutes(conn, unix.AF_UNSPEC, tables, nil); err != nil {
			return nil, err
		}
	}
	if s.rules, err = dumpRuleMsgs(conn, unix.AF_UNSPEC); err != nil {
		return nil, err
	}
	if s.addrs, err = dumpAddrs(conn, unix.AF_UNSPEC); err != nil {
		return nil, err
	}
	s.neighs, err = dumpNeighs(conn, unix.AF_UNSPEC)
	return s, err
}

// clash is the error creating it fails with, or nil.
func (s *kernelState) clash(it dg.Item) error {
	switch x := it.(type) {
	case *items.Address:
		if k := s.addrOf(x); k != nil && !k.owned() {
			return fmt.Errorf("adding address %s: %w", x.Name(), notOwnedAddr(k, x))
		}
	case *items.Route:
		if _, foreign := ownedOf(s.routes[x.Name()]); foreign {
			return fmt.Errorf("adding route %s: %w", x.Name(), errRouteNotOwned)
		}
	case *items.Rule:
		if _, foreign := findRule(s.rules, x); foreign {
			return fmt.Errorf("adding rule %s: %w", x.Name(), errRuleNotOwned)
		}
	case *items.Neighbor:
		if s.foreignNeigh(x) {
			return fmt.Errorf("adding neighbor %s: %w", x.Name(), errNeighNotOwned)
		}
	}
	return nil
}

// sameAddr: the same IPv4 address and length, or the same IPv6 address.
func sameAddr(k, a netip.Prefix) bool {
	return k.Addr() == a.Addr() && (k.Bits() == a.Bits() || !a.Addr().Is4())
}

// foreignNeigh reports whether someone's static entry holds n's address.
func (s *kernelState) foreignNeigh(n *items.Neighbor) bool {
	k := s.neighOf(n)
	return k != nil && !k.owned() && k.static()
}

// Adoptions finds the items of hint whose identity in the kernel an
// object without netagent's mark holds and that a create with
// Options.Adopt takes over rather than refuses, and returns for each
// that object as an item of the same name (its hint's Deps copied, the
// fields the hint leaves to the kernel read as the hint has them, as
// read-back does): Equal to the item when the adoption writes only the
// mark. The rest of Clashes' clashes remain: an IPv6 address of
// another prefix length, the kernel's own addresses (the loopback's, IPv6
// link-local ones), a route identity with several routes or ours
// beside theirs, a rule whose delete would take an earlier rule.
func Adoptions(t *netnsx.Target, stateDir string, hint *dg.Graph) (map[dg.ItemRef]dg.Item, error) {
	if hint == nil {
		return nil, nil
	}
	conn, err := openConnIn(t, stateDir)
	if err != nil {
		return nil, fmt.Errorf("l3 adoptions: %w", err)
	}
	defer conn.close()
	return adoptions(t.NL, conn, hint)
}

// adoptions is Adoptions over the narrow interfaces.
func adoptions(nlh dumpNL, conn rawOps, hint *dg.Graph) (map[dg.ItemRef]dg.Item, error) {
	s, err := snapshot(nlh, conn, hint)
	if err != nil {
		return nil, fmt.Errorf("l3 adoptions: %w", err)
	}
	names := make(map[int]string, len(s.indexes))
	for n, i := range s.indexes {
		names[i] = n
	}
	out := make(map[dg.ItemRef]dg.Item)
	for it := range hint.Items() {
		if found := s.adoptable(it, names); found != nil {
			out[dg.Ref(it)] = found
		}
	}
	return out, nil
}

// adoptable is the kernel's object that adopting it takes over, as an
// item, or nil.
func (s *kernelState) adoptable(it dg.Item, names map[int]string) dg.Item {
	switch x := it.(type) {
	case *items.Address:
		if k := s.addrOf(x); k != nil && !k.owned() && adoptableAddr(k, x) {
			return addrItemOf(k, x.Dev, x)
		}
	case *items.Route:
		if rs := s.routes[x.Name()]; adoptable(rs) {
			if got, ok := decodeRoute(rs[0], names); ok {
				applyRouteHint(got, x)
				got.Deps = x.Deps
				return got
			}
		}
	case *items.Rule:
		if at := theirRule(s.rules, x); at >= 0 && shadowedAt(s.rules, at) == nil {
			got, _ := decodeRule(s.rules[at], x)
			return got
		}
	case *items.Neighbor:
		if k := s.neighOf(x); k != nil && !k.owned() && k.static() {
			return &items.Neighbor{Dev: x.Dev, IP: k.ip, MAC: k.mac, Deps: x.Deps}
		}
	}
	return nil
}

// addrOf is the kernel address of a's identity (see lookupAddr), or nil.
func (s *kernelState) addrOf(a *items.Address) *kernelAddr {
	index, ok := s.indexes[a.Dev]
	if !ok {
		return nil
	}
	for i := range s.addrs {
		if k := &s.addrs[i]; k.index == index && sameAddr(k.prefix, a.Prefix) {
			return k
		}
	}
	return nil
}

// neighOf is the kernel's entry for n's address on its interface, or nil.
func (s *kernelState) neighOf(n *items.Neighbor) *kernelNeigh {
	index, ok := s.indexes[n.Dev]
	if !ok {
		return nil
	}
	for i := range s.neighs {
		if k := &s.neighs[i]; k.index == index && k.ip == n.IP {
			return k
		}
	}
	return nil
}
