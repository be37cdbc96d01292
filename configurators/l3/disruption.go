package l3

import (
	"github.com/netagent/netagent/configurators/disrupt"
	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/items"
	"github.com/netagent/netagent/reconciler"
)

// Predict says what an operation on an address, a route, a rule or a
// neighbour does to traffic, as the configurators run it: a route is
// changed with NLM_F_REPLACE and a neighbour entry replaced (no window); a
// rule changes in place only in its dependencies; every delete withdraws
// the object, for the duration of a recreate (the delete and the create
// of the cascade) or for good. Deleting an address also makes the kernel
// withdraw its subnet route and the routes with it as source.
func Predict(op reconciler.Operation, recreate bool, it dg.Item) disrupt.Prediction {
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
	why := withdrawnWhy(it)
	if recreate {
		return disrupt.Certainly(disrupt.Withdrawn, "deleted and added again with what it depends on"+why)
	}
	return disrupt.Certainly(disrupt.Removed, "deleted"+why)
}

func withdrawnWhy(it dg.Item) string {
	if a, ok := it.(*items.Address); ok {
		return "; the kernel withdraws the subnet route of " + a.Prefix.String() + " and the routes with it as source"
	}
	return ""
}
