package nftables

import (
	"bytes"
	"fmt"
	"slices"

	"github.com/google/nftables/expr"
	"golang.org/x/sys/unix"

	"github.com/netagent/netagent/items"
)

// fakeMap is a verdict map of the fake kernel.
type fakeMap struct {
	def   items.NftMap // without its elements
	elems []fakeMapElem
}

type fakeMapElem struct {
	r items.NftElementRange
	e items.NftMapElement
}

func (t *fakeTable) mapNamed(name string) *fakeMap {
	for _, m := range t.maps {
		if m.def.Name == name {
			return m
		}
	}
	return nil
}

// types are the key types of t's sets and maps.
func (t *fakeTable) types() setTypes {
	types := setTypes{}
	for _, s := range t.sets {
		types[s.def.Name] = s.def.Type
	}
	for _, m := range t.maps {
		types[m.def.Name] = m.def.Type
	}
	return types
}

func (t *fakeTable) mapOp(op Op) error {
	if op.Kind == OpAddMap {
		return t.addMap(op.Map)
	}
	m := t.mapNamed(op.Map.Name)
	if m == nil {
		return fmt.Errorf("map %s: %w", op.Map.Name, unix.ENOENT)
	}
	switch op.Kind {
	case OpDeleteMap:
		if t.uses(func(e expr.Any) bool { l, ok := e.(*expr.Lookup); return ok && l.SetName == m.def.Name }) {
			return fmt.Errorf("map %s: a rule looks it up: %w", m.def.Name, unix.EBUSY)
		}
		t.maps = slices.DeleteFunc(t.maps, func(x *fakeMap) bool { return x == m })
		return nil
	case OpAddMapElements:
		return t.mapElements(m, op.Map.Elements, true)
	}
	return t.mapElements(m, op.Map.Elements, false)
}

func (t *fakeTable) addMap(m items.NftMap) error {
	if _, ok := setDatatypes[m.Type]; !ok {
		return fmt.Errorf("map %s: type %q: %w", m.Name, m.Type, unix.EINVAL)
	}
	if t.set(m.Name) != nil || t.mapNamed(m.Name) != nil {
		return fmt.Errorf("map %s: %w", m.Name, unix.EEXIST)
	}
	def := m
	def.Elements = nil
	fm := &fakeMap{def: def}
	t.maps = append(t.maps, fm)
	return t.mapElements(fm, m.Elements, true)
}

// mapElements adds or deletes elements: an added key that is there with
// the same verdict is no change, with another EEXIST; a jump needs a
// regular chain of t; a deleted key must be there.
func (t *fakeTable) mapElements(m *fakeMap, els []items.NftMapElement, add bool) error {
	for _, e := range els {
		r, err := items.ParseNftElement(m.def.Type, m.def.Interval, e.Key)
		if err != nil {
			return fmt.Errorf("map %s: %v: %w", m.def.Name, err, unix.EINVAL)
		}
		i := slices.IndexFunc(m.elems, func(x fakeMapElem) bool { return bytes.Equal(x.r.Lo, r.Lo) && bytes.Equal(x.r.Hi, r.Hi) })
		switch {
		case !add && i < 0:
			return fmt.Errorf("map %s element %s: %w", m.def.Name, e.Key, unix.ENOENT)
		case !add:
			m.elems = slices.Delete(m.elems, i, i+1)
		case i >= 0 && m.elems[i].e.Verdict == e.Verdict && m.elems[i].e.Target == e.Target:
		case i >= 0:
			return fmt.Errorf("map %s element %s: has another verdict: %w", m.def.Name, e.Key, unix.EEXIST)
		default:
			if err := t.checkRef(&expr.Verdict{Kind: verdictKinds[e.Verdict], Chain: e.Target}); err != nil {
				return fmt.Errorf("map %s element %s: %w", m.def.Name, e.Key, err)
			}
			m.elems = append(m.elems, fakeMapElem{r, e})
		}
	}
	return nil
}

// mapJumpsTo says whether an element of a map of t jumps to chain.
func (t *fakeTable) mapJumpsTo(chain string) bool {
	for _, m := range t.maps {
		if slices.ContainsFunc(m.elems, func(e fakeMapElem) bool { return e.e.Target == chain }) {
			return true
		}
	}
	return false
}

// dumpMaps reads t's maps back as the kernel's dump does: keys in order.
func (t *fakeTable) dumpMaps() []items.NftMap {
	var out []items.NftMap
	for _, m := range t.maps {
		dm := m.def
		elems := slices.Clone(m.elems)
		slices.SortFunc(elems, func(a, b fakeMapElem) int { return bytes.Compare(a.r.Lo, b.r.Lo) })
		for _, e := range elems {
			el := e.e
			el.Key = items.NftElementString(m.def.Type, e.r)
			dm.Elements = append(dm.Elements, el)
		}
		out = append(out, dm)
	}
	return out
}
