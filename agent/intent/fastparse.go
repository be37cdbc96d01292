package intent

import (
	"encoding/json"
	"reflect"
	"slices"
	"sync"
	"unicode/utf8"
)

// parseFast decodes a well-formed document that fits an Intent exactly in
// one pass over its bytes, without the token-by-token shape check and the
// second decoding of the slow path (checkVersion, checkShape and
// encoding/json). It refuses, returning false, anything it is not sure of:
// every document the slow path rejects (syntax, types, null, integer
// ranges, unknown or duplicate members, trailing data, the version), and
// also what it leaves to the slow path to decode (numbers that are not
// plain integers, strings with invalid UTF-8). Parse then takes the slow
// path, which reports the problems with their JSON paths, so the errors
// are the slow path's. When it accepts, the result is what the slow path
// returns; the fuzz test compares them.
func parseFast(data []byte) (*Intent, bool) {
	p := planOf(reflect.TypeFor[Intent]())
	fastSlots.Lock()
	d := fastDecoder{data: data, last: make([]string, fastSlots.n)}
	fastSlots.Unlock()
	var in Intent
	seen, ok := d.object(p, reflect.ValueOf(&in).Elem())
	if !ok || d.space() != len(data) || in.Version != Version || seen&1 == 0 {
		return nil, false
	}
	return &in, true
}

// fastPlan is how parseFast decodes a Go type; nil for a type it leaves to
// the slow path.
type fastPlan struct {
	kind   reflect.Kind
	typ    reflect.Type
	elem   *fastPlan      // slice, pointer and map elements
	fields []fastField    // a struct's JSON members, at most 64
	byName map[string]int // index in fields
	bits   int            // integer size
	// numberOrName: a type of numberOrName (an nftables priority), an
	// integer or a string given to its own UnmarshalJSON, as encoding/json
	// does after the shape check.
	numberOrName bool
	centi        bool // a Duration: an integer or a string
	table        bool // a TableID: an integer or a name
}

// fastField is a struct member: its name, its field index and its plan.
type fastField struct {
	name  string
	index []int // of the field, through embedded structs
	plan  *fastPlan
	slot  int // of the field's last string, in fastDecoder.last
}

// fastSlots counts the string fields of all plans.
var fastSlots struct {
	sync.Mutex
	n int
}

var fastPlans sync.Map // reflect.Type -> *fastPlan (nil: unsupported)

// planOf returns the plan of t, nil if parseFast cannot decode it.
func planOf(t reflect.Type) *fastPlan {
	if p, ok := fastPlans.Load(t); ok {
		return p.(*fastPlan)
	}
	p := buildPlan(t)
	fastPlans.Store(t, p)
	return p
}

// buildPlan makes the plan of t: plain strings, booleans, integers,
// slices, pointers, maps with string keys and structs of them, with no
// method of their own that encoding/json would call.
func buildPlan(t reflect.Type) *fastPlan {
	if reflect.PointerTo(t).Implements(reflect.TypeFor[durationSetter]()) { // its UnmarshalJSON, in fastDecoder.duration
		return &fastPlan{kind: reflect.Struct, typ: t, centi: true}
	}
	if t == reflect.TypeFor[TableID]() { // its UnmarshalJSON, in fastDecoder.value
		return &fastPlan{kind: reflect.Uint32, typ: t, bits: 32, table: true}
	}
	if reflect.PointerTo(t).Implements(numberOrName) && reflect.PointerTo(t).Implements(reflect.TypeFor[json.Unmarshaler]()) {
		return &fastPlan{kind: reflect.Invalid, typ: t, numberOrName: true}
	}
	if reflect.PointerTo(t).Implements(reflect.TypeFor[json.Unmarshaler]()) ||
		reflect.PointerTo(t).Implements(reflect.TypeFor[interface{ UnmarshalText([]byte) error }]()) {
		return nil
	}
	p := &fastPlan{kind: t.Kind(), typ: t}
	switch t.Kind() {
	case reflect.String, reflect.Bool:
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		p.bits = t.Bits()
	case reflect.Slice, reflect.Pointer:
		p.elem = planOf(t.Elem())
		if p.elem == nil {
			return nil
		}
	case reflect.Map:
		p.elem = planOf(t.Elem())
		if p.elem == nil || t.Key().Kind() != reflect.String || t.Key() != reflect.TypeFor[string]() {
			return nil
		}
	case reflect.Struct:
		if !p.addFields(t, nil, map[string]bool{}) {
			return nil
		}
	default:
		return nil
	}
	return p
}

// addFields adds the JSON members of struct t (at index path at in the
// plan's struct) to p's fields: those of an embedded struct without a tag
// as its own (encoding/json's promotion), refusing (false) any name given
// twice, where encoding/json's rules of depth would decide.
func (p *fastPlan) addFields(t reflect.Type, at []int, names map[string]bool) bool {
	for i := range t.NumField() {
		f := t.Field(i)
		index := append(slices.Clone(at), i)
		name, opts, _ := cutTag(f.Tag.Get("json"))
		if f.Anonymous {
			if name != "" || opts != "" || f.Type.Kind() != reflect.Struct || !p.addFields(f.Type, index, names) {
				return false
			}
			continue
		}
		if !f.IsExported() || name == "-" { // as fieldsOf
			continue
		}
		if opts != "" && opts != "omitempty" && opts != "omitzero" {
			return false
		}
		if name == "" {
			name = f.Name
		}
		// A field parseFast cannot decode (one with its own
		// UnmarshalJSON: dhcp4) keeps a nil plan: a document that has it
		// goes to parseSlow, one without it stays fast.
		fp := planOf(f.Type)
		if names[name] || len(p.fields) == 64 {
			return false
		}
		names[name] = true
		fastSlots.Lock()
		slot := fastSlots.n
		fastSlots.n++
		fastSlots.Unlock()
		p.fields = append(p.fields, fastField{name, index, fp, slot})
	}
	return true
}

// cutTag splits a json tag into its name and options.
func cutTag(tag string) (name, opts string, found bool) {
	for i := range len(tag) {
		if tag[i] == ',' {
			return tag[:i], tag[i+1:], true
		}
	}
	return tag, "", false
}

// fastDecoder reads one document.
type fastDecoder struct {
	data []byte
	pos  int
	last []string // the last string of each string field, to share repeats
}

// space skips white space and returns the position.
func (d *fastDecoder) space() int {
	for d.pos < len(d.data) {
		switch d.data[d.pos] {
		case ' ', '\t', '\n', '\r':
			d.pos++
		default:
			return d.pos
		}
	}
	return d.pos
}

// peek returns the next byte after white space, 0 at the end.
func (d *fastDecoder) peek() byte {
	if d.space() == len(d.data) {
		return 0
	}
	return d.data[d.pos]
}

// value decodes the next value into v, which has plan p.
func (d *fastDecoder) value(p *fastPlan, v reflect.Value) bool {
	if p == nil {
		return false
	}
	if p.centi {
		return d.duration(v)
	}
	if p.table && d.peek() == '"' { // a name: an unknown one is the slow path's to name
		s, ok := d.str(nil)
		n, err := LookupTable(s)
		v.SetUint(uint64(n))
		return ok && err == nil
	}
	if p.numberOrName {
		return d.numberOrName(v)
	}
	switch p.kind {
	case reflect.String:
		s, ok := d.str(nil)
		v.SetString(s)
		return ok
	case reflect.Bool:
		return d.boolean(v)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n, ok := d.integer(p.bits, true)
		v.SetInt(n)
		return ok
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		n, ok := d.integer(p.bits, false)
		v.SetUint(uint64(n))
		return ok
	case reflect.Slice:
		return d.array(p, v)
	case reflect.Pointer:
		if d.peek() != '{' && p.elem.kind == reflect.Struct {
			return false
		}
		e := reflect.New(p.elem.typ)
		v.Set(e)
		return d.value(p.elem, e.Elem())
	case reflect.Map:
		return d.mapObject(p, v)
	case reflect.Struct:
		_, ok := d.object(p, v)
		return ok
	}
	return false
}

// duration decodes a Duration as its UnmarshalJSON does: a string is
// its Text, an integer its Count.
func (d *fastDecoder) duration(v reflect.Value) bool {
	set := v.Addr().Interface().(durationSetter)
	if d.peek() == '"' {
		s, ok := d.str(nil)
		set.setDuration(s, 0)
		return ok
	}
	n, ok := d.integer(32, true)
	set.setDuration("", int(n))
	return ok
}

// object decodes an object into the struct v, returning the members seen
// as a bit set of p.fields.
func (d *fastDecoder) object(p *fastPlan, v reflect.Value) (uint64, bool) {
	var seen uint64
	if p == nil || d.peek() != '{' {
		return 0, false
	}
	d.pos++
	if d.peek() == '}' {
		d.pos++
		return 0, true
	}
	for {
		key, ok := d.key()
		if !ok {
			return 0, false
		}
		i := p.field(key)
		if i < 0 || seen&(1<<i) != 0 {
			return 0, false
		}
		seen |= 1 << i
		f := &p.fields[i]
		if f.plan == nil {
			return 0, false // see buildPlan: parseSlow decodes it
		}
		if f.plan.kind == reflect.String {
			s, ok := d.str(&d.last[f.slot])
			if !ok {
				return 0, false
			}
			v.FieldByIndex(f.index).SetString(s)
		} else if !d.value(f.plan, v.FieldByIndex(f.index)) {
			return 0, false
		}
		switch d.peek() {
		case ',':
			d.pos++
		case '}':
			d.pos++
			return seen, true
		default:
			return 0, false
		}
	}
}

// field returns the index in p.fields of the member named key, or -1.
func (p *fastPlan) field(key []byte) int {
	for i := range p.fields {
		if p.fields[i].name == string(key) {
			return i
		}
	}
	return -1
}

// key reads a member name and its colon. The name is the document's bytes
// when it has no escapes.
func (d *fastDecoder) key() ([]byte, bool) {
	if d.peek() != '"' {
		return nil, false
	}
	start := d.pos + 1
	for i := start; i < len(d.data); i++ {
		if c := d.data[i]; c == '"' {
			d.pos = i + 1
			if !utf8.Valid(d.data[start:i]) || d.peek() != ':' {
				return nil, false
			}
			d.pos++
			return d.data[start:i], true
		} else if c == '\\' || c < 0x20 {
			break
		}
	}
	k, ok := d.escaped(start - 1)
	if !ok || d.peek() != ':' {
		return nil, false
	}
	d.pos++
	return []byte(k), true
}

// mapObject decodes an object into the map v.
func (d *fastDecoder) mapObject(p *fastPlan, v reflect.Value) bool {
	if d.peek() != '{' {
		return false
	}
	d.pos++
	m := reflect.MakeMap(p.typ)
	v.Set(m)
	if d.peek() == '}' {
		d.pos++
		return true
	}
	for {
		key, ok := d.key()
		if !ok {
			return false
		}
		k := reflect.ValueOf(string(key))
		if m.MapIndex(k).IsValid() {
			return false // given twice
		}
		e := reflect.New(p.elem.typ).Elem()
		if !d.value(p.elem, e) {
			return false
		}
		m.SetMapIndex(k, e)
		switch d.peek() {
		case ',':
			d.pos++
		case '}':
			d.pos++
			return true
		default:
			return false
		}
	}
}

// array decodes an array into the slice v, made to the array's length.
func (d *fastDecoder) array(p *fastPlan, v reflect.Value) bool {
	if d.peek() != '[' {
		return false
	}
	n, ok := d.count()
	if !ok {
		return false
	}
	d.pos++
	s := reflect.MakeSlice(p.typ, n, n)
	v.Set(s)
	for i := range n {
		if i > 0 {
			if d.peek() != ',' {
				return false
			}
			d.pos++
		}
		if !d.value(p.elem, s.Index(i)) {
			return false
		}
	}
	if d.peek() != ']' {
		return false
	}
	d.pos++
	return true
}

// count returns the number of elements of the array at d.pos, by its
// commas at depth 1; it refuses what is not well nested.
func (d *fastDecoder) count() (int, bool) {
	n, depth, empty := 0, 0, true
	for i := d.pos; i < len(d.data); i++ {
		switch c := d.data[i]; c {
		case '"':
			for i++; i < len(d.data) && d.data[i] != '"'; i++ {
				if d.data[i] == '\\' {
					i++
				}
			}
			empty = false
		case '[', '{':
			if depth++; depth > 1 {
				empty = false
			}
		case ']', '}':
			if depth--; depth == 0 {
				if empty {
					return 0, c == ']'
				}
				return n + 1, c == ']'
			}
		case ',':
			if depth == 1 {
				n++
			}
		case ' ', '\t', '\n', '\r':
		default:
			empty = false
		}
	}
	return 0, false
}

// str reads a string. One with escapes goes through encoding/json; one
// with invalid UTF-8 is refused (encoding/json would replace the bytes).
// If last is not nil, it holds the field's previous string, which is
// returned again if equal (a route's via and dev repeat), else replaced.
func (d *fastDecoder) str(last *string) (string, bool) {
	if d.peek() != '"' {
		return "", false
	}
	start := d.pos + 1
	ascii := true
	for i := start; i < len(d.data); i++ {
		switch c := d.data[i]; {
		case c == '"':
			d.pos = i + 1
			b := d.data[start:i]
			if !ascii && !utf8.Valid(b) {
				return "", false
			}
			if last == nil {
				return string(b), true
			}
			if *last != string(b) {
				*last = string(b)
			}
			return *last, true
		case c == '\\':
			return d.escaped(start - 1)
		case c < 0x20:
			return "", false
		case c >= 0x80:
			ascii = false
		}
	}
	return "", false
}

// escaped reads the string with escapes that starts at start.
func (d *fastDecoder) escaped(start int) (string, bool) {
	i := start + 1
	for ; i < len(d.data) && d.data[i] != '"'; i++ {
		if d.data[i] == '\\' {
			i++
		}
	}
	if i >= len(d.data) {
		return "", false
	}
	raw := d.data[start : i+1]
	if !utf8.Valid(raw) {
		return "", false
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	d.pos = i + 1
	return s, true
}

// numberOrName reads an integer or a string (the shape check's
// numberOrName) and gives its bytes to v's UnmarshalJSON.
func (d *fastDecoder) numberOrName(v reflect.Value) bool {
	start := d.space()
	var ok bool
	if d.peek() == '"' {
		_, ok = d.str(nil)
	} else {
		_, ok = d.integer(64, true)
	}
	if !ok || !v.CanAddr() {
		return false
	}
	u, isU := v.Addr().Interface().(json.Unmarshaler)
	return isU && u.UnmarshalJSON(d.data[start:d.pos]) == nil
}

// boolean reads true or false into v.
func (d *fastDecoder) boolean(v reflect.Value) bool {
	d.space()
	switch rest := d.data[d.pos:]; {
	case len(rest) >= 4 && string(rest[:4]) == "true":
		d.pos += 4
		v.SetBool(true)
	case len(rest) >= 5 && string(rest[:5]) == "false":
		d.pos += 5
	default:
		return false
	}
	return d.delimited()
}

// delimited reports whether a literal or number ends where it should.
func (d *fastDecoder) delimited() bool {
	if d.pos == len(d.data) {
		return true
	}
	switch d.data[d.pos] {
	case ',', '}', ']', ' ', '\t', '\n', '\r':
		return true
	}
	return false
}

// integer reads a plain JSON integer (no fraction, no exponent) that fits
// bits bits, signed or not.
func (d *fastDecoder) integer(bits int, signed bool) (int64, bool) {
	d.space()
	neg := d.pos < len(d.data) && d.data[d.pos] == '-'
	if neg {
		if !signed {
			return 0, false
		}
		d.pos++
	}
	start := d.pos
	var u uint64
	for d.pos < len(d.data) && '0' <= d.data[d.pos] && d.data[d.pos] <= '9' {
		if d.pos-start == 19 {
			return 0, false
		}
		u = u*10 + uint64(d.data[d.pos]-'0')
		d.pos++
	}
	digits := d.pos - start
	if digits == 0 || digits > 1 && d.data[start] == '0' || !d.delimited() {
		return 0, false
	}
	switch {
	case !signed:
		return int64(u), u <= 1<<bits-1
	case neg:
		return -int64(u), u <= 1<<(bits-1)
	}
	return int64(u), u <= 1<<(bits-1)-1
}
