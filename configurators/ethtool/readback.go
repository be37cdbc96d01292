package ethtool

import (
	"errors"
	"fmt"
	"maps"
	"slices"

	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/items"
)

// readItems reads back, for every link the hint gives ethtool settings
// and every link with recorded originals, the current value of those
// settings: an Ethtool item in state Created. A setting the driver does
// not report is left out (so it differs from the intent, whose apply
// names the refusal). A link that is gone has no item.
func readItems(k Kernel, st *store, hint *dg.Graph) ([]dg.Item, error) {
	keys, err := wantedKeys(st, hint)
	if err != nil {
		return nil, err
	}
	var out []dg.Item
	for _, name := range slices.Sorted(maps.Keys(keys)) {
		it, err := readItem(k, name, keys[name])
		if err != nil {
			return nil, err
		}
		if it != nil {
			out = append(out, it)
		}
	}
	return out, nil
}

// wantedKeys are the settings keys to read, by link name.
func wantedKeys(st *store, hint *dg.Graph) (map[string]map[string]bool, error) {
	keys := map[string]map[string]bool{}
	add := func(name string, settings map[string]uint32) {
		if keys[name] == nil {
			keys[name] = map[string]bool{}
		}
		for k := range settings {
			keys[name][k] = true
		}
	}
	if hint != nil {
		for it := range hint.Unordered() {
			if e, ok := it.(*items.Ethtool); ok {
				add(e.Interface, e.Settings)
			}
		}
	}
	recs, err := st.all()
	if err != nil {
		return nil, err
	}
	for name, f := range recs {
		add(name, f.Settings)
	}
	return keys, nil
}

// readItem reads one link's settings; nil when the link is gone.
func readItem(k Kernel, name string, keys map[string]bool) (dg.Item, error) {
	idx, err := k.Index(name)
	if err != nil {
		if errors.Is(err, ErrNoLink) {
			return nil, nil
		}
		return nil, err
	}
	snap, err := readSnapshot(k, idx, slices.Sorted(maps.Keys(keys)))
	if err != nil {
		return nil, fmt.Errorf("reading the ethtool settings of %s: %w", name, err)
	}
	e := &items.Ethtool{Interface: name, Settings: map[string]uint32{}}
	for key := range keys {
		if v, ok := snap.value(key); ok {
			e.Settings[key] = v
		}
	}
	return e, nil
}
