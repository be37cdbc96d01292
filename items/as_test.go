package items_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/netagent/netagent/items"
)

func TestAs(t *testing.T) {
	r := &items.Route{}
	got, err := items.As[*items.Route](r)
	if err != nil || got != r {
		t.Fatalf("As on a route: %v %v", got, err)
	}
	_, err = items.As[*items.Route](&items.Rule{})
	if !errors.Is(err, items.ErrWrongType) || !strings.Contains(err.Error(), "*items.Rule where *items.Route was expected") {
		t.Fatalf("As on a rule: %v", err)
	}
	var nilRoute *items.Route
	if _, err := items.As[*items.Route](nilRoute); !errors.Is(err, items.ErrWrongType) {
		t.Fatalf("As on a nil route: %v", err)
	}
}
