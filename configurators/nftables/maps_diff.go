package nftables

import (
	"github.com/netagent/netagent/items"
)

func mapName(m *items.NftMap) string { return m.Name }

// maps diffs the verdict maps as sets does the sets: added, deleted,
// recreated (another key type or flags: the rules that look it up are
// not kept), or their elements deleted and added; an element whose
// verdict changes is deleted and added again, in the same batch. Map
// element deletions come before the chains' (an element may jump to a
// deleted chain), additions after the chains' (it may jump to an added
// one).
func (d *differ) maps(have, want []items.NftMap) {
	wantBy := byName(want, mapName)
	for _, h := range have {
		w, ok := wantBy[h.Name]
		if !ok || h.Type != w.Type || h.Interval != w.Interval {
			del := d.op(OpDeleteMap)
			del.Map = items.NftMap{Name: h.Name}
			d.delMaps = append(d.delMaps, del)
			d.recreatedSets[h.Name] = ok
			continue
		}
		d.mapElements(h, *w)
	}
	haveBy := byName(have, mapName)
	for _, w := range want {
		if _, ok := haveBy[w.Name]; !ok || d.recreatedSets[w.Name] {
			add := d.op(OpAddMap)
			add.Map = w
			d.addMaps = append(d.addMaps, add)
		}
	}
}

func (d *differ) mapElements(h, w items.NftMap) {
	del := items.MinusStrings(h.MapElementStrings(), w.MapElementStrings())
	add := items.MinusStrings(w.MapElementStrings(), h.MapElementStrings())
	for _, ch := range []struct {
		els  []string
		kind OpKind
		to   *[]Op
	}{{del, OpDeleteMapElements, &d.delMaps}, {add, OpAddMapElements, &d.addMaps}} {
		if len(ch.els) == 0 {
			continue
		}
		m := h
		m.Elements = nil
		for _, s := range ch.els {
			m.Elements = append(m.Elements, items.ParseNftMapElement(s))
		}
		op := d.op(ch.kind)
		op.Map = m
		*ch.to = append(*ch.to, op)
	}
}
