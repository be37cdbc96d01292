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
		orig := newFound(0)
		if f := recs[name]; f != nil {
			orig = f.filled()
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

// hinted are the items the hint names, by link name.
func hinted(hint *dg.Graph) map[string]*items.Ethtool {
	out := map[string]*items.Ethtool{}
	if hint == nil {
		return out
	}
	for it := range hint.Unordered() {
		if e, ok := it.(*items.Ethtool); ok {
			out[e.Interface] = e
		}
	}
	return out
}

// readItem reads one link's settings (and, when the hint's item follows
// an MTU, the link's MTU); nil when there is nothing to show.
func readItem(k Kernel, name string, named *items.Ethtool, orig *found) (dg.Item, error) {
	idx, err := k.Index(name)
	if errors.Is(err, ErrNoLink) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	if named == nil {
		named = &items.Ethtool{}
	}
	keys := slices.Concat(slices.Collect(maps.Keys(orig.Settings)), slices.Collect(maps.Keys(named.Settings)),
		slices.Collect(maps.Keys(orig.Sets)), slices.Collect(maps.Keys(named.Sets)))
	slices.Sort(keys)
	keys = slices.Compact(keys)
	snap, err := readSnapshot(k, idx, keys)
	if err != nil {
		return nil, fmt.Errorf("reading the ethtool settings of %s: %w", name, err)
	}
	e := &items.Ethtool{Interface: name, Settings: map[string]uint32{}, Sets: map[string][]string{}}
	shown(e.Settings, snap.value, named.Settings, orig.Settings, func(a, b uint32) bool { return a == b })
	shown(e.Sets, snap.setValue, named.Sets, orig.Sets, slices.Equal)
	if named.MTU != 0 {
		if e.MTU, err = k.MTU(name); err != nil {
			return nil, err
		}
	}
	if named.Interface == "" && len(e.Settings)+len(e.Sets) == 0 {
		return nil, nil
	}
	if len(e.Settings) == 0 {
		e.Settings = nil // as render leaves an intent's: check compares fields
	}
	if len(e.Sets) == 0 {
		e.Sets = nil
	}
	return e, nil
}

// shown puts into out the current value of each setting named, and of
// each recorded one that does not hold its original.
func shown[V any](out map[string]V, value func(string) (V, bool), named, orig map[string]V, equal func(a, b V) bool) {
	for key := range named {
		if v, ok := value(key); ok {
			out[key] = v
		}
	}
	for key, o := range orig {
		if v, ok := value(key); ok && !equal(v, o) {
			out[key] = v
		}
	}
}
