package configurators

import (
	"bytes"
	"fmt"

	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/items"
	"github.com/netagent/netagent/reconciler"
)

// SideEffect is an intended item that the kernel changes by itself when an
// operation on another item runs: Apply's read-back after the pass finds it
// changed and runs a follow-up pass to write it again. A plan predicts
// these passes from SideEffects.
type SideEffect struct {
	// Ref is the item the kernel changes; Cause is the operation that
	// makes it ("modify interface/v5").
	Ref   dg.ItemRef
	Cause string
	// Reason says what the kernel does, in words.
	Reason string
	// Certain: the kernel does it whenever the operation runs. Otherwise
	// it depends on what the kernel decides then (a bridge's MAC follows
	// its ports'), and a follow-up pass runs only if it does.
	Certain bool
	// After is the item as the kernel leaves it; nil when it removes it.
	After dg.Item
	// Refused, if not nil, is why the follow-up pass's write fails (the
	// kernel refuses an IPv4 route through a link that is down).
	Refused error
}

// SideEffects returns what the kernel undoes, as a side effect of the
// operations of one pass (ops, in order; the failed ones did not run), of
// the intended items the pass left as intended: those it does not write
// again after the operation. before is the current state the pass started
// from (the values the operations change). What it knows:
//
//   - writing net.ipv4.ip_forward, net.ipv4.conf.all.forwarding or
//     net.ipv6.conf.all.forwarding to a new value sets every interface's
//     forwarding key of that family (and "default") to it;
//   - a link whose MAC changes, or that is set down, loses its neighbour
//     entries, permanent ones too (NETDEV_CHANGEADDR, NETDEV_DOWN);
//   - a link set down loses its IPv6 addresses (keep_addr_on_down is off
//     by default) and the routes through it; the kernel refuses IPv4 routes
//     through it while it is down;
//   - deleting the last IPv4 address of an interface flushes every IPv4
//     route through it (dry, which followed the pass, knows which delete
//     is the last; nil knows none);
//   - a bridge without a MAC of its own takes the lowest MAC of its ports,
//     so a port that joins or leaves may change it (and flush the
//     bridge's neighbours).
func SideEffects(ops reconciler.OperationLog, before, intended *dg.Graph, dry *DryRun) []SideEffect {
	var out []SideEffect
	for i, e := range ops {
		if e.Err != nil || e.InProgress {
			continue
		}
		s := sideEffects{ops: ops, at: i, cause: e.Op.String() + " " + e.Ref.String(), intended: intended}
		switch it := e.Item.(type) {
		case *items.Sysctl:
			if e.Op != reconciler.OpDelete {
				s.forwarding(it, before)
			}
		case *items.Interface:
			if e.Op == reconciler.OpModify {
				s.linkChange(it, before)
			}
		case *items.Port:
			if it.MasterKind == items.KindBridge {
				s.bridgePorts(it.Master)
			}
		case *items.Address:
			if e.Op == reconciler.OpDelete && dry.lastIPv4Gone(e.Ref) {
				s.routesThrough(it.Dev, items.FamilyIPv4, fmt.Sprintf("deleting %s, the last IPv4 address of %s, makes the kernel flush the IPv4 routes through %s", it.Prefix, it.Dev, it.Dev), nil)
			}
		}
		out = append(out, s.out...)
	}
	return out
}

// sideEffects collects the side effects of the operation ops[at].
type sideEffects struct {
	ops      reconciler.OperationLog
	at       int
	cause    string
	intended *dg.Graph
	out      []SideEffect
}

// add records that the kernel changes ref, unless the pass writes ref
// again after the operation.
func (s *sideEffects) add(ref dg.ItemRef, e SideEffect) {
	for _, later := range s.ops[s.at+1:] {
		if later.Ref == ref {
			return
		}
	}
	e.Ref, e.Cause = ref, s.cause
	s.out = append(s.out, e)
}

// forwarding: a global forwarding key rewrites the interfaces' keys.
func (s *sideEffects) forwarding(it *items.Sysctl, before *dg.Graph) {
	fam, global := items.GlobalForwardingSysctl(it.Key)
	if !global {
		return
	}
	old, had := lookup[*items.Sysctl](before, dg.Ref(it))
	certain := had && items.NormalizeSysctlValue(old.Value) != items.NormalizeSysctlValue(it.Value)
	if had && !certain {
		return
	}
	for want := range all[*items.Sysctl](s.intended) {
		f, ok := items.InterfaceForwardingSysctl(want.Key)
		if !ok || f != fam || items.NormalizeSysctlValue(want.Value) == items.NormalizeSysctlValue(it.Value) {
			continue
		}
		after := *want
		after.Value = it.Value
		reason := fmt.Sprintf("writing %s sets every %s interface's forwarding to %s", it.Key, fam, it.Value)
		if !certain {
			reason += " (if the kernel did not hold that value already)"
		}
		s.add(dg.Ref(want), SideEffect{Reason: reason, Certain: certain, After: &after})
	}
}

// linkChange: a new MAC or an admin down.
func (s *sideEffects) linkChange(it *items.Interface, before *dg.Graph) {
	old, ok := lookup[*items.Interface](before, dg.Ref(it))
	if !ok {
		return
	}
	down := old.AdminUp && !it.AdminUp
	if it.MAC != nil && !bytes.Equal(old.MAC, it.MAC) {
		s.neighbors(it.IfName, fmt.Sprintf("the kernel flushes the neighbour entries of %s when its MAC changes", it.IfName), true)
	} else if down {
		s.neighbors(it.IfName, fmt.Sprintf("the kernel flushes the neighbour entries of %s when it goes down", it.IfName), true)
	}
	if down {
		s.linkDown(it.IfName)
	}
}

// linkDown: the addresses and routes a link loses when it goes down.
func (s *sideEffects) linkDown(dev string) {
	for a := range all[*items.Address](s.intended) {
		if a.Dev == dev && !a.Prefix.Addr().Is4() {
			s.add(dg.Ref(a), SideEffect{Certain: true,
				Reason: fmt.Sprintf("the kernel removes the IPv6 addresses of %s when it goes down (keep_addr_on_down is off)", dev)})
		}
	}
	reason := fmt.Sprintf("the kernel removes the routes through %s when it goes down", dev)
	s.routesThrough(dev, items.FamilyIPv4, reason, fmt.Errorf("the kernel refuses an IPv4 route through %s while it is down", dev))
	s.routesThrough(dev, items.FamilyIPv6, reason, nil)
}

// routesThrough: the kernel removes the routes of family through dev;
// refused, if not nil, is why it refuses them back.
func (s *sideEffects) routesThrough(dev string, fam items.Family, reason string, refused error) {
	for r := range all[*items.Route](s.intended) {
		if r.Family() == fam && s.through(r, dev) {
			s.add(dg.Ref(r), SideEffect{Certain: true, Reason: reason, Refused: refused})
		}
	}
}

// through reports whether r goes out through dev: its device, or the
// interface of the address its gateway is on-link with.
func (s *sideEffects) through(r *items.Route, dev string) bool {
	if r.Dev != "" || r.GwAddress == "" {
		return r.Dev == dev
	}
	a, ok := lookup[*items.Address](s.intended, dg.ItemRef{Type: items.TypeAddress, Name: r.GwAddress})
	return ok && a.Dev == dev
}

// bridgePorts: a port joining or leaving may change the bridge's MAC.
func (s *sideEffects) bridgePorts(bridge string) {
	br, ok := lookup[*items.Interface](s.intended, items.InterfaceRef(bridge))
	if ok && br.MAC != nil {
		return // a MAC of its own: the ports do not change it
	}
	s.neighbors(bridge, fmt.Sprintf("%s has no MAC of its own and takes the lowest of its ports'; if that changes, the kernel flushes its neighbour entries", bridge), false)
}

func (s *sideEffects) neighbors(dev, reason string, certain bool) {
	for n := range all[*items.Neighbor](s.intended) {
		if n.Dev == dev {
			s.add(dg.Ref(n), SideEffect{Reason: reason, Certain: certain})
		}
	}
}

// lookup returns the item of g (may be nil) at ref, as a T.
func lookup[T dg.Item](g *dg.Graph, ref dg.ItemRef) (T, bool) {
	var zero T
	if g == nil {
		return zero, false
	}
	it, ok := g.Get(ref)
	if !ok {
		return zero, false
	}
	x, ok := it.(T)
	return x, ok
}

// all iterates over the items of g (may be nil) that are T.
func all[T dg.Item](g *dg.Graph) func(func(T) bool) {
	return func(yield func(T) bool) {
		if g == nil {
			return
		}
		for it := range g.Items() {
			if x, ok := it.(T); ok && !yield(x) {
				return
			}
		}
	}
}
