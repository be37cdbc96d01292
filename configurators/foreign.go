package configurators

import (
	"fmt"

	"github.com/netagent/netagent/configurators/firewall"
	"github.com/netagent/netagent/configurators/l3"
	"github.com/netagent/netagent/configurators/nftables"
	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/internal/netnsx"
)

// Foreign is what the namespace holds beside netagent's objects and what
// ReadItems returns of others' (links, routes, rules): the addresses and
// permanent neighbours that are not netagent's, and the iptables chains
// that are not, and the nftables tables without netagent's mark (`show
// --all`).
type Foreign struct {
	// AddrNeigh are items.Foreign of kinds address and neighbor.
	AddrNeigh []dg.Item
	Chains    []firewall.ForeignChain
	Tables    []nftables.ForeignTable
}

// ReadForeign reads the objects of others in the target namespace that
// ReadItems leaves out (see Foreign).
func ReadForeign(t *netnsx.Target, stateDir string) (*Foreign, error) {
	an, err := l3.ReadForeignAddrNeigh(t, stateDir)
	if err != nil {
		return nil, err
	}
	chains, err := firewall.ReadForeignChains(t, stateDir)
	if err != nil {
		return nil, fmt.Errorf("reading others' iptables chains: %w", err)
	}
	tables, err := nftables.ReadForeign(t, stateDir)
	if err != nil {
		return nil, fmt.Errorf("reading others' nftables tables: %w", err)
	}
	return &Foreign{AddrNeigh: an, Chains: chains, Tables: tables}, nil
}
