package link

import (
	"github.com/netagent/netagent/configurators/netnsx"
	"github.com/netagent/netagent/items"
	"github.com/netagent/netagent/reconciler"
)

// Register registers the interface and port configurators of the target
// namespace. Link items are external: they have no configurator.
func Register(reg *reconciler.TypeRegistry, t *netnsx.Target) error {
	if err := reg.Register(items.TypeInterface, NewInterfaceConfigurator(t)); err != nil {
		return err
	}
	return reg.Register(items.TypePort, NewPortConfigurator(t))
}
