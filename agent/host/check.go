package host

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/items"
)

// DiffKind says how a running item differs from the intended one.
type DiffKind string

// The kinds of difference.
const (
	// Missing: intended, not in the kernel.
	Missing DiffKind = "missing"
	// Extra: owned by netagent and in the kernel, not intended.
	Extra DiffKind = "extra"
	// Differs: in both, with different values.
	Differs DiffKind = "differs"
)

// Difference is one item whose running state is not the intended one.
type Difference struct {
	Ref  dg.ItemRef
	Kind DiffKind
	// Fields lists, for Differs, the fields whose values differ.
	Fields []FieldDiff
	// Want and Have are the intended and running items (nil when absent).
	Want, Have dg.Item
	// HeldBy, for Missing, lists the objects netagent does not own that
	// hold the item's identity in the kernel (items.Foreign): why it is
	// missing, and why apply would fail with ErrNotOwned.
	HeldBy []dg.Item
}

// FieldDiff is one field of an item, with the intended and running values.
// Field is the Go field path in the item ("MTU", "Vxlan.Learning").
type FieldDiff struct {
	Field      string
	Want, Have string
}

// String renders the difference on one line per field:
//
//	route/main 0.0.0.0/0 metric 100: Gw: want 192.0.2.1, have 192.0.2.9
func (d Difference) String() string {
	var want, have string
	if d.Want != nil {
		want = d.Want.String()
	}
	if d.Have != nil {
		have = d.Have.String()
	}
	held := make([]string, len(d.HeldBy))
	for i, h := range d.HeldBy {
		held[i] = h.String()
	}
	text := DiffText(d.Ref.String(), d.Kind, want, have, d.Fields, held)
	if d.Kind == Missing {
		text += missingNICNote(d.Want)
	}
	return text
}

// missingNICNote says, for a physical interface that is missing, that its
// NIC does not exist on this host (by name; a matched one is not there
// under its name: apply renames the NIC its match finds); "" for any other
// item.
func missingNICNote(want dg.Item) string {
	ifc, ok := want.(*items.Interface)
	switch {
	case !ok || ifc.Kind != items.KindPhysical:
		return ""
	case ifc.Match == nil:
		return "; NIC " + ifc.IfName + " does not exist on this host"
	}
	return "; no NIC on this host is named " + ifc.IfName + " (apply renames the NIC that matches " + ifc.Match.String() + ", if one does)"
}

// DiffText is check's text of a difference of the item ref (Difference's,
// and that of an item of a check through the daemon): missing with the
// intended item and who holds its place, extra with the running one, or
// one line per field that differs.
func DiffText(ref string, kind DiffKind, want, have string, fields []FieldDiff, heldBy []string) string {
	switch kind {
	case Missing:
		held := ""
		for _, h := range heldBy {
			held += "; held by " + h
		}
		return fmt.Sprintf("%s: missing (want %s)%s", ref, want, held)
	case Extra:
		return fmt.Sprintf("%s: extra (have %s)", ref, have)
	}
	var b strings.Builder
	for i, f := range fields {
		if i > 0 {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "%s: %s: want %s, have %s", ref, f.Field, f.Want, f.Have)
	}
	return b.String()
}

// Report is the outcome of a Check.
type Report struct {
	Diffs []Difference // sorted by ref
	// Foreign lists the objects that carry netagent's mark but that no
	// item can describe (items.Foreign with Owned): netagent leaves them
	// alone; they do not make the state differ from the intent.
	Foreign []dg.Item
}

// Converged reports whether running matches intended.
func (r *Report) Converged() bool { return len(r.Diffs) == 0 }

// Check compares the running state with intended, like `ifquery --check`:
// every intended item missing from the kernel, every owned item in the
// kernel that is not intended, and, for items in both that are not Equal,
// each field whose value differs (found by reflection over the item
// structs). External items are not compared. Nothing changes.
func (r *Runtime) Check(intended *dg.Graph) (*Report, error) {
	cur, nodes, err := r.readCurrent(intended)
	if err != nil {
		return nil, err
	}
	return compare(cur, intended, nodes), nil
}

// Compare is Check on graphs already read: current against intended.
func Compare(current, intended *dg.Graph) *Report { return compare(current, intended, nil) }

// compare is Compare with, in curNodes, the nodes current was built from
// (nil: unknown), which spare it sorting current's.
func compare(current, intended *dg.Graph, curNodes []*dg.Node) *Report {
	if intended == nil {
		intended = dg.New("intended")
	}
	rep := &Report{}
	heldBy := make(map[dg.ItemRef][]dg.Item)
	for w, h := range eachPairListed(intended, current, curNodes) {
		want, have := itemOf(w), itemOf(h)
		if f, ok := have.(*items.Foreign); ok {
			if f.Holds != (dg.ItemRef{}) {
				heldBy[f.Holds] = append(heldBy[f.Holds], f)
			}
			if f.Owned {
				rep.Foreign = append(rep.Foreign, f)
			}
		}
		switch ref := refOf(w, h); {
		case have != nil && have.External() || want != nil && want.External():
		case have == nil:
			rep.Diffs = append(rep.Diffs, Difference{Ref: ref, Kind: Missing, Want: want})
		case want == nil:
			rep.Diffs = append(rep.Diffs, Difference{Ref: ref, Kind: Extra, Have: have})
		case !identical(have, want) && !have.Equal(want):
			rep.Diffs = append(rep.Diffs, Difference{Ref: ref, Kind: Differs, Want: want, Have: have,
				Fields: DiffFields(want, have)})
		}
	}
	for i, d := range rep.Diffs {
		if d.Kind == Missing {
			rep.Diffs[i].HeldBy = heldBy[d.Ref]
			slices.SortFunc(rep.Diffs[i].HeldBy, func(a, b dg.Item) int { return dg.Ref(a).Compare(dg.Ref(b)) })
		}
	}
	// In no particular order above (sorting every item cost more than the
	// rest of the comparison): sorted here.
	slices.SortFunc(rep.Foreign, func(a, b dg.Item) int { return strings.Compare(a.Name(), b.Name()) })
	slices.SortFunc(rep.Diffs, func(a, b Difference) int { return a.Ref.Compare(b.Ref) })
	return rep
}

// itemOf is n's item (nil: no node).
func itemOf(n *dg.Node) dg.Item {
	if n == nil {
		return nil
	}
	return n.Item()
}

// DiffFields compares two items of the same type field by field and lists
// the exported fields whose values differ, descending into pointers to
// structs and nested structs. Values that print themselves (addresses,
// prefixes, MACs, durations) and slices are compared whole. When nothing
// differs field by field although the items are not Equal, it returns one
// FieldDiff for the whole item.
//
// An item that tells its own differences (items.FieldDiffer: an
// nftables table, by chain, rule and attribute) is asked instead.
func DiffFields(want, have dg.Item) []FieldDiff {
	var out []FieldDiff
	if d, ok := want.(items.FieldDiffer); ok && reflect.TypeOf(want) == reflect.TypeOf(have) {
		for _, f := range d.DiffFields(have) {
			out = append(out, FieldDiff{Field: f.Field, Want: f.Want, Have: f.Have})
		}
		if len(out) > 0 || want.Equal(have) {
			return out
		}
		return []FieldDiff{{Field: "(item)", Want: want.String(), Have: have.String()}}
	}
	diffValue("", reflect.ValueOf(want), reflect.ValueOf(have), &out)
	if len(out) == 0 && !want.Equal(have) {
		out = append(out, FieldDiff{Field: "(item)", Want: want.String(), Have: have.String()})
	}
	return out
}

var stringer = reflect.TypeFor[fmt.Stringer]()

// diffValue appends the differences between w and h, found at path.
func diffValue(path string, w, h reflect.Value, out *[]FieldDiff) {
	if w.Type() != h.Type() {
		*out = append(*out, FieldDiff{Field: orWhole(path), Want: show(w), Have: show(h)})
		return
	}
	switch {
	case w.Kind() == reflect.Interface:
		diffDynamic(path, w, h, out)
	case w.Kind() == reflect.Pointer && isRecord(w.Type().Elem()):
		if w.IsNil() || h.IsNil() {
			if w.IsNil() != h.IsNil() {
				*out = append(*out, FieldDiff{Field: orWhole(path), Want: show(w), Have: show(h)})
			}
			return
		}
		diffValue(path, w.Elem(), h.Elem(), out)
	case isRecord(w.Type()):
		for i := range w.NumField() {
			f := w.Type().Field(i)
			if f.IsExported() {
				diffValue(join(path, f.Name), w.Field(i), h.Field(i), out)
			}
		}
	case !reflect.DeepEqual(w.Interface(), h.Interface()):
		*out = append(*out, FieldDiff{Field: orWhole(path), Want: show(w), Have: show(h)})
	}
}

// diffDynamic compares two values of an interface field (an Interface's
// kind attributes), named after their type: the field Attrs holding an
// *items.VxlanAttrs is "Vxlan".
func diffDynamic(path string, w, h reflect.Value, out *[]FieldDiff) {
	if w.IsNil() && h.IsNil() {
		return
	}
	set := w
	if set.IsNil() {
		set = h
	}
	t := set.Elem().Type()
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	name := strings.TrimSuffix(t.Name(), "Attrs")
	if i := strings.LastIndexByte(path, '.'); i >= 0 {
		name = path[:i+1] + name
	}
	if w.IsNil() || h.IsNil() {
		*out = append(*out, FieldDiff{Field: name, Want: show(w), Have: show(h)})
		return
	}
	diffValue(name, w.Elem(), h.Elem(), out)
}

// isRecord reports whether t is a struct to compare field by field: one
// that does not print itself as a value (as netip.Addr does).
func isRecord(t reflect.Type) bool { return t.Kind() == reflect.Struct && !t.Implements(stringer) }

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

func orWhole(path string) string {
	if path == "" {
		return "(item)"
	}
	return path
}

// show prints a value for a FieldDiff: "none" for a nil pointer or an
// empty value, the value's own String where it has one.
func show(v reflect.Value) string {
	if (v.Kind() == reflect.Pointer || v.Kind() == reflect.Slice || v.Kind() == reflect.Interface) && v.IsNil() {
		return "none"
	}
	if v.Kind() == reflect.Interface {
		v = v.Elem()
	}
	if v.Kind() == reflect.Pointer && isRecord(v.Type().Elem()) {
		v = v.Elem()
	}
	s := fmt.Sprintf("%v", v.Interface())
	if isRecord(v.Type()) {
		s = fmt.Sprintf("%+v", v.Interface())
	}
	if s == "" || s == "invalid IP" || s == "invalid Prefix" {
		return `""`
	}
	return s
}
