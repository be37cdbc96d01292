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
// names the refusal). A recorded setting the hint does not name is left
// out when it holds its original already (given back: a trial's revert
// leaves such records, which stay true); a link left with nothing has no
// item, nor has a link that is gone.
func readItems(k Kernel, st *store, hint *dg.Graph) ([]dg.Item, error) {
	named := hinted(hint)
	recs, err := st.all()
	if err != nil {
		return nil, err
	}
	names := slices.Concat(slices.Collect(maps.Keys(named)), slices.Collect(maps.Keys(recs)))
	slices.Sort(names)
	var out []dg.Item
	for _, name := range slices.Compact(names) {
		var orig map[string]uint32
		if f := recs[name]; f != nil {
			orig = f.Settings
		}
		it, err := readItem(k, name, named[name], orig)
		if err != nil {
			return nil, err
		}
		if it != nil {
			out = append(out, it)
		}
	}
	return out, nil
}

// hinted are the settings the hint names, by link name.
func hinted(hint *dg.Graph) map[string]map[string]uint32 {
	out := map[string]map[string]uint32{}
	if hint == nil {
		return out
	}
	for it := range hint.Unordered() {
		if e, ok := it.(*items.Ethtool); ok {
			out[e.Interface] = e.Settings
		}
	}
	return out
}

// readItem reads one link's settings; nil when there is nothing to show.
func readItem(k Kernel, name string, named, orig map[string]uint32) (dg.Item, error) {
	idx, err := k.Index(name)
	if errors.Is(err, ErrNoLink) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	all := maps.Clone(orig)
	if all == nil {
		all = map[string]uint32{}
	}
	maps.Copy(all, named)
	keys := slices.Sorted(maps.Keys(all))
	snap, err := readSnapshot(k, idx, keys)
	if err != nil {
		return nil, fmt.Errorf("reading the ethtool settings of %s: %w", name, err)
	}
	e := &items.Ethtool{Interface: name, Settings: map[string]uint32{}}
	for _, key := range keys {
		v, ok := snap.value(key)
		_, isNamed := named[key]
		if ok && (isNamed || v != orig[key]) {
			e.Settings[key] = v
		}
	}
	if named == nil && len(e.Settings) == 0 {
		return nil, nil
	}
	return e, nil
}
