package oneshot

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Change is one difference between two intents: an object added (+),
// removed (-) or changed (~), at a JSON path.
type Change struct {
	kind     byte
	path     string
	old, new any
}

func (c Change) String() string {
	switch c.kind {
	case '+':
		return fmt.Sprintf("+ %s: %s", c.path, compact(c.new))
	case '-':
		return fmt.Sprintf("- %s: %s", c.path, compact(c.old))
	}
	return fmt.Sprintf("~ %s: %s -> %s", c.path, compact(c.old), compact(c.new))
}

func compact(v any) string {
	data, _ := json.Marshal(v)
	return string(data)
}

// intentDiff compares two canonical intents object by object: the objects
// of a list section are matched by their identity (an interface by name, a
// route by family, table, destination and metric, ...), so that a changed
// object shows its changed fields, not a removal and an addition.
func intentDiff(a, b []byte) ([]Change, error) {
	var va, vb any
	for _, x := range []struct {
		raw []byte
		v   *any
	}{{a, &va}, {b, &vb}} {
		d := json.NewDecoder(bytes.NewReader(x.raw))
		d.UseNumber()
		if err := d.Decode(x.v); err != nil {
			return nil, fmt.Errorf("reading a version's intent: %w", err)
		}
	}
	var out []Change
	diffValue("", va, vb, &out)
	return out, nil
}

// identities are the fields that identify an object of a list section,
// by the section's path.
var identities = map[string][]string{
	"interfaces":      {"name"},
	"routes":          {"family", "table", "to", "metric"},
	"rules":           {"family", "priority"},
	"neighbors":       {"dev", "ip"},
	"firewall.chains": {"family", "table", "name"},
}

func diffValue(path string, a, b any, out *[]Change) {
	ma, aMap := a.(map[string]any)
	mb, bMap := b.(map[string]any)
	if aMap && bMap {
		keys := slices.Sorted(maps.Keys(ma))
		for k := range mb {
			if _, ok := ma[k]; !ok {
				keys = append(keys, k)
			}
		}
		slices.Sort(keys)
		for _, k := range keys {
			va, inA := ma[k]
			vb, inB := mb[k]
			p := joinPath(path, k)
			switch {
			case !inA:
				*out = append(*out, Change{kind: '+', path: p, new: vb})
			case !inB:
				*out = append(*out, Change{kind: '-', path: p, old: va})
			default:
				diffValue(p, va, vb, out)
			}
		}
		return
	}
	la, aList := a.([]any)
	lb, bList := b.([]any)
	if id, ok := identities[path]; ok && aList && bList {
		diffList(path, id, la, lb, out)
		return
	}
	if compact(a) != compact(b) {
		*out = append(*out, Change{kind: '~', path: path, old: a, new: b})
	}
}

// diffList matches the objects of two lists by identity.
func diffList(path string, id []string, a, b []any, out *[]Change) {
	key := func(v any) string {
		m, _ := v.(map[string]any)
		var parts []string
		for _, f := range id {
			if x, ok := m[f]; ok {
				parts = append(parts, fmt.Sprint(x))
			}
		}
		return strings.Join(parts, " ")
	}
	inB := map[string]any{}
	for _, v := range b {
		inB[key(v)] = v
	}
	seen := map[string]bool{}
	for _, v := range a {
		k := key(v)
		seen[k] = true
		p := fmt.Sprintf("%s[%s]", path, k)
		if w, ok := inB[k]; ok {
			diffValue(p, v, w, out)
		} else {
			*out = append(*out, Change{kind: '-', path: p, old: v})
		}
	}
	for _, v := range b {
		if k := key(v); !seen[k] {
			*out = append(*out, Change{kind: '+', path: fmt.Sprintf("%s[%s]", path, k), new: v})
		}
	}
}

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}
