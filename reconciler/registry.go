package reconciler

import (
	"fmt"

	dg "github.com/netagent/netagent/depgraph"
)

// Registry maps items to the configurators that manage them.
type Registry interface {
	// Configurator returns the configurator for the item's type, or nil.
	Configurator(item dg.Item) Configurator
}

// TypeRegistry is a Registry with one configurator per item type.
type TypeRegistry struct {
	byType map[string]Configurator
}

// Register assigns c to items of the given type. Registering a type twice
// is an error.
func (r *TypeRegistry) Register(itemType string, c Configurator) error {
	if r.byType == nil {
		r.byType = make(map[string]Configurator)
	}
	if _, dup := r.byType[itemType]; dup {
		return fmt.Errorf("registering configurator for %q: %w", itemType, ErrDuplicateType)
	}
	r.byType[itemType] = c
	return nil
}

// Configurator implements Registry.
func (r *TypeRegistry) Configurator(item dg.Item) Configurator {
	return r.byType[item.Type()]
}
