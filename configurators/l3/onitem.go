package l3

import (
	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/items"
)

// onItem reads item as the configurator's type T and runs op on it; an
// error names what was done and the item ("deleting rule <name>: ...").
func onItem[T interface {
	comparable
	dg.Item
}](item dg.Item, what string, op func(T) error) error {
	x, err := items.As[T](item)
	if err != nil {
		return err
	}
	return wrapIf(op(x), what+" %s", x.Name())
}
