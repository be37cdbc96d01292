package configurators

import (
	"slices"

	"github.com/netagent/netagent/configurators/ethtool"
	"github.com/netagent/netagent/configurators/firewall"
	"github.com/netagent/netagent/configurators/l3"
	"github.com/netagent/netagent/configurators/link"
	"github.com/netagent/netagent/configurators/nftables"
	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/internal/disrupt"
	"github.com/netagent/netagent/items"
	"github.com/netagent/netagent/reconciler"
)

// Predict says what the operation e does to traffic (see package
// disrupt), asking the configurator package of the item's type: before
// is the state the operation starts from (the item's old value, the
// other objects that decide what it does; nil: none known).
func Predict(e reconciler.OpLogEntry, before *dg.Graph) disrupt.Prediction {
	return PredictFound(e, before, nil)
}

// PredictFound is Predict knowing what the physical links netagent changed
// had before it (link.ReadFound; nil: not known), which the delete of a
// physical interface gives back (a NIC found down goes down again).
func PredictFound(e reconciler.OpLogEntry, before *dg.Graph, found link.Found) disrupt.Prediction {
	var old dg.Item
	if before != nil {
		old, _ = before.Get(e.Ref)
	}
	switch it := e.Item.(type) {
	case *items.Interface:
		o, _ := old.(*items.Interface)
		p := link.PredictNIC(e.Op, e.Recreate, o, it, found, link.MatchedLink(it, before, found))
		if p.Effect == disrupt.Down && !e.Recreate && slices.Contains(p.LinksDown, it.IfName) {
			p.Routes = append(p.Routes, l3.SubnetRoutes(it.IfName, before)...)
		}
		return p
	case *items.Port:
		o, _ := old.(*items.Port)
		return link.PredictPort(e.Op, e.Recreate, o, it, before)
	case *items.Address, *items.Route, *items.Rule, *items.Neighbor:
		return l3.Predict(e.Op, e.Recreate, it, before)
	case *items.IptablesChain, *items.Sysctl:
		return firewall.Predict(e.Op, it)
	case *items.Ethtool:
		o, _ := old.(*items.Ethtool)
		return ethtool.Predict(e.Op, o, it)
	case *items.NftTable:
		o, _ := old.(*items.NftTable)
		return nftables.Predict(e.Op, o, it)
	}
	return disrupt.In("")
}

// PredictInputs is the part of before (the state operations start from)
// that Predict reads: its interfaces, ports, addresses, ethtool
// settings, nftables tables and the links netagent does not own, in a graph of
// their own, so that Predict(e, PredictInputs(before)) is Predict(e,
// before). A caller whose state changes in place as the operations run (an
// apply: the reconciler writes the current graph) keeps this instead of a
// copy of the whole state, which at 100k routes would copy every route.
// It walks the graph unordered (Unordered): sorting 100k routes to pick
// out a few links would cost more than the walk.
func PredictInputs(before *dg.Graph) *dg.Graph {
	out := dg.New("predict-inputs")
	if before == nil {
		return out
	}
	for it := range before.Unordered() {
		switch it.(type) {
		case *items.Interface, *items.Port, *items.Address, *items.Ethtool, *items.Link, *items.NftTable:
			out.Put(it)
		}
	}
	return out
}
