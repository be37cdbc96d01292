package link

import (
	"github.com/netagent/netagent/internal/netnsx"
	"github.com/netagent/netagent/reconciler"
)

// Register registers the interface, port and bridge VLAN configurators of the target
// namespace. stateDir holds the create journal and the original settings
// of physical interfaces. Link items are external: they have no
// configurator.
func Register(reg *reconciler.TypeRegistry, t *netnsx.Target, stateDir string) error {
	return RegisterWith(reg, t, stateDir, Options{})
}
