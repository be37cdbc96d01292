package items

import (
	"errors"
	"fmt"

	dg "github.com/netagent/netagent/depgraph"
)

// ErrInvalid is wrapped by every error a Validate method returns.
var ErrInvalid = errors.New("invalid item")

// ErrWrongType: an item is not of the type the caller handles (see As).
var ErrWrongType = errors.New("item of another type")

// As returns item as the concrete item type T (such as *items.Route), the
// way a configurator reads the items the reconciler hands it. Anything else,
// or a nil pointer, is an error wrapping ErrWrongType that names both types.
func As[T interface {
	comparable
	dg.Item
}](item dg.Item) (T, error) {
	t, ok := item.(T)
	var zero T
	if !ok || t == zero {
		return zero, fmt.Errorf("%w: %T where %T was expected", ErrWrongType, item, zero)
	}
	return t, nil
}
