package intent

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
)

// A file with shape errors (an unknown field, a value of the wrong type)
// is not the whole story of its problems: every problem of a file is
// reported in one run. ParsePartial gives what Validate can still judge:
// the document without the objects its shape errors are in. An element
// of a list (an interface, a route, a rule, a neighbour, a chain, an
// nftables table) with a problem anywhere inside is left out alone, the
// others keep their positions (Intent.renumber), so that every path
// Validate reports is the document's own; a member that is no list (dns,
// sysctls, drift) with a problem is left out whole. The names of the
// interfaces left out are kept (Intent.broken): a reference to one is not
// reported as undefined, since its own entry's problem is reported.

// partialLists are the list sections ParsePartial judges element by
// element, by their JSON paths: each a member of the document or of one
// of its objects.
var partialLists = []string{"interfaces", "routes", "rules", "neighbors", "firewall.chains", "nftables.tables"}

// ParsePartial returns the intent of data without the objects that the
// problems errs (Parse's error for data) are in, for Validate to report
// the problems of the rest; nil when data is no JSON object or the
// version is not Version (then errs is all there is to say).
func ParsePartial(data []byte, errs error) *Intent {
	bad := map[string]bool{} // the paths of the problems, and every path they are inside
	for _, fe := range FieldErrors(errs) {
		for i := range len(fe.Path) {
			if fe.Path[i] == '.' || fe.Path[i] == '[' {
				bad[fe.Path[:i]] = true
			}
		}
		bad[fe.Path] = true
	}
	var top map[string]json.RawMessage
	if len(data) > MaxDocumentSize || json.Unmarshal(data, &top) != nil || checkVersion(data) != nil {
		return nil
	}
	p := &partial{bad: bad, renumber: map[string][]int{}, broken: map[string]bool{}}
	kept := p.object(reflect.TypeFor[Intent](), "", top)
	doc, err := json.Marshal(kept)
	if err != nil {
		return nil
	}
	var in Intent
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.DisallowUnknownFields()
	if dec.Decode(&in) != nil {
		return nil
	}
	in.renumber, in.broken = p.renumber, p.broken
	return &in
}

// partial is one ParsePartial.
type partial struct {
	bad      map[string]bool // the paths problems are at or inside
	renumber map[string][]int
	broken   map[string]bool
}

// object keeps the members of the object at path (of type t) that decode
// and hold no problem; the lists of partialLists element by element.
func (p *partial) object(t reflect.Type, path string, members map[string]json.RawMessage) map[string]json.RawMessage {
	fields := jsonFields(t)
	out := map[string]json.RawMessage{}
	for name, raw := range members {
		ft, ok := fields[name]
		if !ok {
			continue // an unknown field: reported, and nothing to keep
		}
		at := memberPath(path, name)
		for ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		var sub map[string]json.RawMessage
		switch {
		case isPartialList(at) && ft.Kind() == reflect.Slice:
			if list, ok := p.list(ft.Elem(), at, raw); ok {
				out[name] = list
			}
		case ft.Kind() == reflect.Struct && p.hasListIn(at) && json.Unmarshal(raw, &sub) == nil:
			if o, err := json.Marshal(p.object(ft, at, sub)); err == nil {
				out[name] = o
			}
		case !p.problemIn(at) && decodes(ft, raw):
			out[name] = raw
		}
	}
	return out
}

// list keeps the elements of the list at path that decode as t and hold
// no problem, recording the position of each kept one.
func (p *partial) list(t reflect.Type, path string, raw json.RawMessage) (json.RawMessage, bool) {
	var elems []json.RawMessage
	if json.Unmarshal(raw, &elems) != nil {
		return nil, false
	}
	var kept []json.RawMessage
	var at []int
	for i, e := range elems {
		if p.problemIn(Origin{Path: path}.index(i).Path) || !decodes(t, e) {
			if t == reflect.TypeFor[Interface]() {
				p.brokenName(e)
			}
			continue
		}
		kept, at = append(kept, e), append(at, i)
	}
	if len(kept) < len(elems) {
		p.renumber[path] = at
	}
	out, err := json.Marshal(kept)
	return out, err == nil
}

// brokenName records the name of an interface entry left out, if it has
// a readable one.
func (p *partial) brokenName(e json.RawMessage) {
	var named struct {
		Name string `json:"name"`
	}
	if json.Unmarshal(e, &named) == nil && named.Name != "" {
		p.broken[named.Name] = true
	}
}

// problemIn reports whether a problem is at path or inside it.
func (p *partial) problemIn(path string) bool { return p.bad[path] }

// hasListIn reports whether one of partialLists is inside the object at
// path.
func (p *partial) hasListIn(path string) bool {
	for _, l := range partialLists {
		if strings.HasPrefix(l, path+".") {
			return true
		}
	}
	return false
}

func isPartialList(path string) bool {
	for _, l := range partialLists {
		if l == path {
			return true
		}
	}
	return false
}

func memberPath(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// decodes reports whether raw decodes strictly as a t.
func decodes(t reflect.Type, raw json.RawMessage) bool {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	return dec.Decode(reflect.New(t).Interface()) == nil
}

// origIndex is the position in the document of element i of the list
// kind: i, unless ParsePartial left elements of it out.
func (in *Intent) origIndex(kind string, i int) int {
	if at, ok := in.renumber[kind]; ok && i < len(at) {
		return at[i]
	}
	return i
}
