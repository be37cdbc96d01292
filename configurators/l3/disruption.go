package l3

import (
	"slices"

	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/internal/disrupt"
	"github.com/netagent/netagent/items"
	"github.com/netagent/netagent/reconciler"
)

// Predict says what an operation on an address, a route, a rule or a
// neighbour does to traffic, as the configurators run it: a route is
// changed with NLM_F_REPLACE and a neighbour entry replaced (no window); a
// rule changes in place only in its dependencies; every delete withdraws
// the object, for the duration of a recreate (the delete and the create
// of the cascade) or for good. Deleting an address also makes the kernel
// withdraw its subnet route, unless another address of the link (in
// before, the state the operation starts from) covers the subnet, and the
// routes with it as source; it keeps the routes through a gateway of that
// subnet.
func Predict(op reconciler.Operation, recreate bool, it dg.Item, before *dg.Graph) disrupt.Prediction {
	switch {
	case op == reconciler.OpCreate && !recreate:
		return disrupt.In("added")
	case op == reconciler.OpModify:
		switch it.(type) {
		case *items.Route:
			return disrupt.Certainly(disrupt.Atomic, "replaced in place (NLM_F_REPLACE): no window")
		case *items.Neighbor:
			return disrupt.Certainly(disrupt.Atomic, "entry replaced in place (NLM_F_REPLACE)")
		}
		return disrupt.In("changed in place")
	}
	p := disrupt.Certainly(disrupt.Removed, "deleted")
	if recreate {
		p = disrupt.Certainly(disrupt.Withdrawn, "deleted and added again with what it depends on")
	}
	if a, ok := it.(*items.Address); ok {
		p.Why += "; the kernel withdraws the routes with " + a.Prefix.Addr().String() + " as source"
		if r := subnetRoute(a, before); r != "" {
			p.Routes = []string{r}
			p.Why += " and the subnet route " + r
		}
	}
	return p
}

// subnetRoute is the kernel's route to a's subnet (a point-to-point
// address's: to its peer's prefix, a host's too), which goes with a (""
// for a host address, or when another address of the link in before
// covers the subnet).
func subnetRoute(a *items.Address, before *dg.Graph) string {
	subnet := a.PeerPrefix()
	if subnet.Bits() == a.Prefix.Addr().BitLen() && !a.Peer.IsValid() {
		return ""
	}
	if before != nil {
		for it := range before.Items() {
			o, ok := it.(*items.Address)
			if ok && o.Dev == a.Dev && o.Prefix != a.Prefix && o.PeerPrefix() == subnet {
				return ""
			}
		}
	}
	return subnet.String() + " dev " + a.Dev
}

// SubnetRoutes are the kernel's IPv4 subnet routes of the addresses of dev
// in before, `ip route` style: the kernel flushes them (with every IPv4
// route through dev) when dev is set down, and adds them back when it
// comes up.
func SubnetRoutes(dev string, before *dg.Graph) []string {
	if before == nil {
		return nil
	}
	var out []string
	for it := range before.Items() {
		a, ok := it.(*items.Address)
		if !ok || a.Dev != dev || !a.Prefix.Addr().Is4() {
			continue
		}
		subnet := a.PeerPrefix()
		if r := subnet.String() + " dev " + dev; (subnet.Bits() < 32 || a.Peer.IsValid()) && !slices.Contains(out, r) {
			out = append(out, r)
		}
	}
	slices.Sort(out)
	return out
}
