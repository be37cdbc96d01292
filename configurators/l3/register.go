package l3

import (
	"fmt"

	"github.com/netagent/netagent/configurators/netnsx"
	"github.com/netagent/netagent/items"
	"github.com/netagent/netagent/reconciler"
)

// Register registers the address, route, rule and neighbor configurators
// for target t in reg. The route configurator is a
// reconciler.BatchConfigurator.
func Register(reg *reconciler.TypeRegistry, t *netnsx.Target) error {
	open := func() (rawOps, error) { return openConn(t) }
	cfgs := []struct {
		typ string
		cfg reconciler.Configurator
	}{
		{items.TypeAddress, &addressConfigurator{nlh: t.NL, open: open}},
		{items.TypeRoute, &routeConfigurator{nlh: t.NL, open: open}},
		{items.TypeRule, &ruleConfigurator{nlh: t.NL, open: open}},
		{items.TypeNeighbor, &neighborConfigurator{nlh: t.NL, open: open}},
	}
	for _, c := range cfgs {
		if err := reg.Register(c.typ, c.cfg); err != nil {
			return fmt.Errorf("l3: %w", err)
		}
	}
	return nil
}
