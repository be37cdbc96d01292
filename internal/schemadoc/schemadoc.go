// Package schemadoc writes the field reference of docs/intent.md from the
// intent's JSON Schema (agent/intent/schema.json), so that the schema's
// descriptions are the one statement of what each field means: editors
// show them, and the reference is generated from them.
//
// Reference renders one section per object of the schema (the document,
// each object of $defs, each object nested in one), in the order a
// depth-first walk from the document first meets them, and one entry per value type (the
// $defs that are not objects, like ifname). Each field is a list item:
// its key, its type (with the range, enum, default and whether it is
// required, as the schema states them) and its description. A property
// must have a description of its own, or be an object (or a list of
// objects) whose schema has one: Reference fails naming every property
// that has none, so that a field cannot enter the schema undocumented.
//
// Splice puts the reference between the markers of a page, BeginMarker
// and EndMarker, leaving the hand-written text around it alone.
package schemadoc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// The markers around the generated part of a page (HTML comments: neither
// GitHub nor go-md2man shows them).
const (
	BeginMarker = "<!-- generated from agent/intent/schema.json by `go generate ./agent/intent`: do not edit -->"
	EndMarker   = "<!-- end of the generated part -->"
)

// Splice returns page with the text between its markers replaced by ref.
func Splice(page, ref []byte) ([]byte, error) {
	before, rest, ok := bytes.Cut(page, []byte(BeginMarker+"\n"))
	if !ok {
		return nil, fmt.Errorf("the page has no line %q", BeginMarker)
	}
	_, after, ok := bytes.Cut(rest, []byte(EndMarker+"\n"))
	if !ok {
		return nil, fmt.Errorf("the page has no line %q after the first marker", EndMarker)
	}
	var out bytes.Buffer
	out.Write(before)
	out.WriteString(BeginMarker + "\n")
	out.Write(ref)
	out.WriteString(EndMarker + "\n")
	out.Write(after)
	return out.Bytes(), nil
}

// Reference renders the field reference of a schema.
func Reference(schema []byte) ([]byte, error) {
	root, err := decode(schema)
	if err != nil {
		return nil, fmt.Errorf("schema: %w", err)
	}
	w := &writer{root: root, defs: root.obj("$defs"), done: map[string]bool{}}
	w.queue = []section{{title: "document", s: root}}
	for len(w.queue) > 0 {
		s := w.queue[0]
		w.queue = w.queue[1:]
		w.object(s)
		// What s refers to first comes right after it.
		w.queue = append(w.next, w.queue...)
		w.next = nil
	}
	w.valueTypes()
	return w.out.Bytes(), errors.Join(w.errs...)
}

type section struct {
	title string
	s     *node
}

type writer struct {
	root, defs *node
	queue      []section
	next       []section       // the sections the object being written refers to first
	done       map[string]bool // sections queued, by title
	out        bytes.Buffer
	errs       []error
}

// object writes one object's section: its description and its fields.
func (w *writer) object(sec section) {
	fmt.Fprintf(&w.out, "### %s\n\n", sec.title)
	if d := sec.s.str("description"); d != "" {
		fmt.Fprintf(&w.out, "%s\n\n", d)
	}
	required := map[string]bool{}
	for _, r := range sec.s.list("required") {
		required[r.scalar()] = true
	}
	props := sec.s.obj("properties")
	for _, k := range props.keys {
		p := props.vals[k]
		typ := w.typeOf(p, sec.title+"."+k)
		var notes []string
		if required[k] {
			notes = append(notes, "required")
		}
		desc := w.description(p)
		if desc == "" {
			w.errs = append(w.errs, fmt.Errorf("%s.%s: the property has no description", sec.title, k))
		}
		fmt.Fprintf(&w.out, "- `%s` (%s): %s%s\n", k, strings.Join(append([]string{typ}, notes...), ", "), desc, w.facts(p))
	}
	w.out.WriteString("\n")
}

// description is p's own description, or that of the object (or the
// list's object) it refers to.
func (w *writer) description(p *node) string {
	if d := p.str("description"); d != "" {
		return d
	}
	if it := p.obj("items"); it != nil {
		p = it
	}
	if t := w.resolve(p); t != p && t.obj("properties") != nil {
		return t.str("description")
	}
	return ""
}

// facts states the enum, the constant and the default of p (resolved).
func (w *writer) facts(p *node) string {
	var b strings.Builder
	t := w.resolve(p)
	if e := t.list("enum"); e != nil && t.obj("not") == nil {
		vals := make([]string, len(e))
		for i, v := range e {
			vals[i] = "`" + v.scalar() + "`"
		}
		fmt.Fprintf(&b, " One of %s.", strings.Join(vals, ", "))
	}
	for _, d := range []*node{p, t} {
		if v, ok := d.vals["default"]; ok {
			fmt.Fprintf(&b, " Default: `%s`.", v.scalar())
			break
		}
	}
	return b.String()
}

// typeOf names p's type, linking to the section of an object or a value
// type and queueing that section.
func (w *writer) typeOf(p *node, path string) string {
	if ref := p.str("$ref"); ref != "" {
		name := strings.TrimPrefix(ref, "#/$defs/")
		t := w.defs.vals[name]
		if t == nil {
			w.errs = append(w.errs, fmt.Errorf("%s: $ref %q is not in $defs", path, ref))
			return name
		}
		if t.obj("properties") != nil {
			w.enqueue(name, t)
		} else if t.obj("items") != nil { // a named list, like bridgeVlans
			return w.typeOf(t, name)
		}
		return fmt.Sprintf("[%s](#%s)", name, anchor(name))
	}
	var types []string
	for _, t := range p.list("type") {
		types = append(types, t.scalar())
	}
	if t := p.str("type"); t != "" {
		types = []string{t}
	}
	if c, ok := p.vals["const"]; ok {
		return "`" + c.scalar() + "`"
	}
	switch {
	case p.obj("properties") != nil:
		w.enqueue(path, p)
		return fmt.Sprintf("%s, [fields](#%s)", strings.Join(types, " or "), anchor(path))
	case p.obj("items") != nil:
		return "list of " + w.typeOf(p.obj("items"), path+"[]")
	case p.obj("additionalProperties") != nil:
		return "object of " + w.typeOf(p.obj("additionalProperties"), path+"{}")
	}
	s := strings.Join(types, " or ")
	lo, hasLo := p.vals["minimum"]
	hi, hasHi := p.vals["maximum"]
	switch {
	case hasLo && hasHi:
		s += " " + lo.scalar() + "-" + hi.scalar()
	case hasLo:
		s += " >= " + lo.scalar()
	case hasHi:
		s += " <= " + hi.scalar()
	}
	if s == "" {
		return "any"
	}
	return s
}

func (w *writer) enqueue(title string, s *node) {
	if !w.done[title] {
		w.done[title] = true
		w.next = append(w.next, section{title: title, s: s})
	}
}

// valueTypes writes the $defs that are not objects.
func (w *writer) valueTypes() {
	w.out.WriteString("### value types\n\n")
	for _, k := range w.defs.keys {
		t := w.defs.vals[k]
		if t.obj("properties") != nil || t.obj("items") != nil {
			continue
		}
		d := t.str("description")
		if d == "" {
			w.errs = append(w.errs, fmt.Errorf("$defs.%s: the value type has no description", k))
		}
		fmt.Fprintf(&w.out, "- <a id=\"%s\"></a>`%s` (%s): %s%s\n", anchor(k), k, w.typeOf(t, "$defs."+k), d, w.facts(t))
	}
	w.out.WriteString("\n")
}

func (w *writer) resolve(p *node) *node {
	for p != nil && p.str("$ref") != "" {
		p = w.defs.vals[strings.TrimPrefix(p.str("$ref"), "#/$defs/")]
	}
	if p == nil {
		return &node{}
	}
	return p
}

// anchor is the fragment GitHub gives a heading: lower case, punctuation
// but '-' and '_' dropped, spaces as '-'.
func anchor(title string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(title) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
			b.WriteRune(r)
		}
	}
	return b.String()
}

// node is a decoded JSON value that keeps its object keys in order.
type node struct {
	keys  []string
	vals  map[string]*node
	items []*node
	value any // a scalar
	isArr bool
}

func (n *node) obj(k string) *node {
	if n == nil {
		return nil
	}
	if v := n.vals[k]; v != nil && v.vals != nil {
		return v
	}
	return nil
}

func (n *node) list(k string) []*node {
	if n == nil || n.vals[k] == nil || !n.vals[k].isArr {
		return nil
	}
	return n.vals[k].items
}

func (n *node) str(k string) string {
	if n == nil || n.vals[k] == nil {
		return ""
	}
	s, _ := n.vals[k].value.(string)
	return s
}

// scalar formats a scalar as JSON writes it, strings without quotes.
func (n *node) scalar() string {
	switch v := n.value.(type) {
	case string:
		return v
	case json.Number:
		return v.String()
	case bool:
		return strconv.FormatBool(v)
	case nil:
		if n.vals != nil {
			return "{}"
		}
		if n.isArr {
			return "[]"
		}
		return "null"
	}
	return fmt.Sprint(n.value)
}

func decode(data []byte) (*node, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	n, err := decodeValue(dec)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("data after the schema")
	}
	return n, nil
}

func decodeValue(dec *json.Decoder) (*node, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch tok {
	case json.Delim('{'):
		n := &node{vals: map[string]*node{}}
		for dec.More() {
			k, err := dec.Token()
			if err != nil {
				return nil, err
			}
			v, err := decodeValue(dec)
			if err != nil {
				return nil, err
			}
			key := k.(string)
			if _, dup := n.vals[key]; dup {
				return nil, fmt.Errorf("key %q given twice", key)
			}
			n.keys = append(n.keys, key)
			n.vals[key] = v
		}
		_, err := dec.Token()
		return n, err
	case json.Delim('['):
		n := &node{isArr: true}
		for dec.More() {
			v, err := decodeValue(dec)
			if err != nil {
				return nil, err
			}
			n.items = append(n.items, v)
		}
		_, err := dec.Token()
		return n, err
	}
	return &node{value: tok}, nil
}
