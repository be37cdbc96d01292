package intent

import (
	"maps"
	"slices"
	"strings"

	"github.com/netagent/netagent/items"
)

// nftMaps checks a table's verdict maps: names (unique among its sets and
// maps: they share the kernel's namespace), key types, elements (keys
// as a set's, each once; verdicts; jump and goto targets regular chains
// of the table).
func (c *checker) nftMaps(t *items.NftTable, at Origin, chains map[string]*items.NftChain, sets map[string]*items.NftSet) map[string]*items.NftMap {
	out := map[string]*items.NftMap{}
	for i := range t.Maps {
		m := &t.Maps[i]
		ma := at.field("maps").index(i)
		if _, dup := sets[m.Name]; dup {
			c.fail(ma.field("name"), "%q is already the name of a set of the table", m.Name)
		}
		if _, dup := out[m.Name]; dup {
			c.fail(ma.field("name"), "map %q is already defined in the table", m.Name)
		}
		out[m.Name] = m
		// A map's name, key type and keys are checked as a set's.
		c.nftSet(t.Family, &items.NftSet{Name: m.Name, Type: m.Type, Interval: m.Interval}, ma)
		c.nftMapElements(m, ma.field("elements"), chains)
	}
	return out
}

func (c *checker) nftMapElements(m *items.NftMap, at Origin, chains map[string]*items.NftChain) {
	seen := map[string]int{}
	for i, e := range m.Elements {
		ea := at.index(i)
		if err := items.CheckNftElement(m.Type, m.Interval, e.Key); err != nil {
			c.fail(ea.field("key"), "%v", err)
			continue
		}
		key := items.CanonicalNftElement(m.Type, m.Interval, e.Key)
		if j, dup := seen[key]; dup {
			c.fail(ea.field("key"), "key %q is already the key of elements[%d]", e.Key, j)
		}
		seen[key] = i
		c.nftVerdict(&items.NftRule{Verdict: e.Verdict, Target: e.Target}, ea, chains)
	}
}

// nftVmap checks a rule's vmap: a map of the table whose key type is the
// field's, and no verdict besides.
func (c *checker) nftVmap(r *items.NftRule, at Origin, vmaps map[string]*items.NftMap) {
	if r.Vmap == nil {
		return
	}
	types, ok := items.NftVmapKeys[r.Vmap.On]
	switch {
	case !ok:
		c.fail(at.field("vmap").field("on"), "%q is not a field a vmap looks up (want %s)", r.Vmap.On, strings.Join(slices.Sorted(maps.Keys(items.NftVmapKeys)), ", "))
	case (r.Vmap.On == "sport" || r.Vmap.On == "dport") && !nftPortProto(r.Protocol):
		c.fail(at.field("vmap").field("on"), "a port lookup needs protocol tcp or udp")
	}
	m, found := vmaps[r.Vmap.Map]
	switch {
	case !found:
		c.fail(at.field("vmap").field("map"), "map %q is not defined in the table", r.Vmap.Map)
	case ok && !slices.Contains(types, m.Type):
		c.fail(at.field("vmap").field("map"), "map %q has keys of %s, not %s (for %s)", m.Name, m.Type, strings.Join(types, " or "), r.Vmap.On)
	}
	if r.Verdict != "" {
		c.fail(at.field("verdict"), "a rule with a vmap takes its verdict from the map: no verdict besides")
	}
	if r.Reject != nil {
		c.fail(at.field("reject"), "a reject ends the rule: no vmap after it")
	}
}
