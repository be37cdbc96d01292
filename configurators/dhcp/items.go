package dhcp

import (
	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/items/lease4"
)

// RouteOptions say what of a lease becomes routes (lease4.RouteOptions).
type RouteOptions = lease4.RouteOptions

// LeaseItems returns the items a held lease makes (lease4.Items).
func LeaseItems(l *Lease, o RouteOptions) []dg.Item { return lease4.Items(l, o) }
