package configurators

import (
	"fmt"
	"slices"

	"github.com/netagent/netagent/configurators/dns"
	"github.com/netagent/netagent/configurators/ethtool"
	"github.com/netagent/netagent/configurators/firewall"
	"github.com/netagent/netagent/configurators/l3"
	"github.com/netagent/netagent/configurators/link"
	"github.com/netagent/netagent/configurators/nftables"
	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/internal/netnsx"
	"github.com/netagent/netagent/items"
	"github.com/netagent/netagent/reconciler"
)

// Options change how the configurators treat the kernel's objects.
type Options struct {
	// Adopt takes over the objects someone else made at the places of
	// intended items instead of refusing them: an interface's link (see
	// link.Options), an address, route, rule or neighbour (see
	// l3.Options). Adoptions lists them.
	Adopt bool
}

// NewRegistry returns a registry with the configurators of every item type
// for the target namespace. stateDir is where the firewall configurators
// keep what must survive a restart.
func NewRegistry(t *netnsx.Target, stateDir string) (*reconciler.TypeRegistry, error) {
	return NewRegistryWith(t, stateDir, Options{})
}

// NewRegistryWith is NewRegistry with opts.
func NewRegistryWith(t *netnsx.Target, stateDir string, opts Options) (*reconciler.TypeRegistry, error) {
	reg := &reconciler.TypeRegistry{}
	if err := link.RegisterWith(reg, t, stateDir, link.Options{Adopt: opts.Adopt}); err != nil {
		return nil, fmt.Errorf("registering link configurators: %w", err)
	}
	if err := l3.RegisterWith(reg, t, l3.Options{Adopt: opts.Adopt, StateDir: stateDir}); err != nil {
		return nil, fmt.Errorf("registering l3 configurators: %w", err)
	}
	if err := firewall.Register(reg, t, stateDir); err != nil {
		return nil, fmt.Errorf("registering firewall configurators: %w", err)
	}
	if err := nftables.RegisterWith(reg, t, stateDir); err != nil {
		return nil, fmt.Errorf("registering the nftables configurator: %w", err)
	}
	if err := ethtool.Register(reg, t, stateDir); err != nil {
		return nil, fmt.Errorf("registering the ethtool configurator: %w", err)
	}
	if err := reg.Register(items.TypeDNS, &dns.Configurator{}); err != nil {
		return nil, fmt.Errorf("registering the dns configurator: %w", err)
	}
	return reg, nil
}

// ReadBack reads the target namespace into a current-state graph: the
// external link items and every object netagent owns, each in state
// Created. hint is the intended graph (may be nil); see each package's
// ReadBack for how it shapes the items.
func ReadBack(t *netnsx.Target, stateDir string, hint *dg.Graph) (*dg.Graph, error) {
	all, err := ReadItems(t, stateDir, hint)
	if err != nil {
		return nil, err
	}
	return dg.New("current", all...), nil
}

// ReadItems is ReadBack's items, for a caller that builds the graph
// itself. An item that reads back as its hint has it may be the hint's
// item itself (the l3 routes): items are values, never changed in place.
func ReadItems(t *netnsx.Target, stateDir string, hint *dg.Graph) ([]dg.Item, error) {
	readers := []struct {
		what string
		read func() ([]dg.Item, error)
	}{
		{"links", func() ([]dg.Item, error) { return link.ReadBack(t, stateDir, hint) }},
		{"l3", func() ([]dg.Item, error) { return l3.ReadBack(t, stateDir, hint) }},
		{"firewall", func() ([]dg.Item, error) { return firewall.ReadBack(t, stateDir, hint) }},
		{"nftables", func() ([]dg.Item, error) { return nftables.ReadBackIn(t, stateDir) }},
		{"ethtool", func() ([]dg.Item, error) { return ethtool.ReadBack(t, stateDir, hint) }},
		{"dns", func() ([]dg.Item, error) { return dns.ReadBack(hint, ""), nil }},
	}
	var lists [][]dg.Item
	for _, r := range readers {
		got, err := r.read()
		if err != nil {
			return nil, fmt.Errorf("reading back %s: %w", r.what, err)
		}
		lists = append(lists, got)
	}
	return slices.Concat(lists...), nil
}

// KeepRouteTables rebuilds the target's record of the route tables
// netagent wrote when it is lost or damaged (l3.KeepRouteTables), and
// returns a note saying so ("" when it was whole): a writer's read-back
// (an apply, the daemon) calls it first; dry runs never do.
func KeepRouteTables(t *netnsx.Target, stateDir string) (string, error) {
	return l3.KeepRouteTables(t, stateDir)
}
