package intent

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/netagent/netagent/internal/suggest"
)

// shapeChecker walks a JSON document token by token alongside the Go type it
// should decode into, collecting every mismatch with its path. It stops only
// at a syntax error, after which no path is trustworthy.
type shapeChecker struct {
	dec  *json.Decoder
	data []byte
	errs []error
}

// checkShape reports every way data does not fit an Intent.
func checkShape(data []byte) error {
	s := &shapeChecker{dec: json.NewDecoder(bytes.NewReader(data)), data: data}
	s.dec.UseNumber()
	if err := s.value(reflect.TypeFor[Intent](), Origin{}); err == nil {
		s.end()
	}
	return errors.Join(s.errs...)
}

// fail records a non-fatal error at o.
func (s *shapeChecker) fail(o Origin, format string, args ...any) {
	s.errs = append(s.errs, fieldError(o, format, args...))
}

// token reads the next token, recording a syntax error (fatal) at o.
func (s *shapeChecker) token(o Origin) (json.Token, error) {
	before := s.dec.InputOffset()
	tok, err := s.dec.Token()
	if err == nil {
		return tok, nil
	}
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	hint := ""
	if before == 0 && looksLikeYAML(s.data) {
		hint = "; intents are JSON, and this looks like YAML (netplan's YAML converts with `netagent import netplan FILE`)"
	}
	s.fail(o, "invalid JSON %s: %v%s", s.position(before, err), err, hint)
	return nil, errSyntax
}

// yamlStart is how a YAML document's first line begins: a document
// marker, or a plain key and a colon ("network:", "version: 2").
var yamlStart = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(---|%YAML|[A-Za-z_][A-Za-z0-9_-]*:(\s|$))`) })

// looksLikeYAML reports whether data, which is no JSON, begins as YAML
// does: its first line that is no comment or blank.
func looksLikeYAML(data []byte) bool {
	for line := range bytes.Lines(data[:min(len(data), 4096)]) {
		line = bytes.TrimSpace(line)
		if len(line) == 0 || line[0] == '#' {
			continue
		}
		return yamlStart().Match(line)
	}
	return false
}

// position returns "at line L, column C" for the first non-space byte at or
// after offset off, or after the offset a syntax error err names. (The
// decoder's offsets are approximate: the place is close, not exact.)
func (s *shapeChecker) position(off int64, err error) string {
	if err != nil {
		off = max(off, s.dec.InputOffset())
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		off = max(off, se.Offset)
	}
	for off < int64(len(s.data)) && strings.IndexByte(" \t\r\n", s.data[off]) >= 0 {
		off++
	}
	before := s.data[:min(off, int64(len(s.data)))]
	line := bytes.Count(before, []byte("\n")) + 1
	col := len(before) - bytes.LastIndexByte(before, '\n')
	return fmt.Sprintf("at line %d, column %d", line, col)
}

// end checks that nothing but white space follows the top-level value.
func (s *shapeChecker) end() {
	before := s.dec.InputOffset()
	if _, err := s.dec.Token(); err != io.EOF {
		s.fail(Origin{}, "%v %s", errTrailing, s.position(before, nil))
	}
}

// boolOrObject is the interface of the sections that may also be given
// as a boolean (DHCP4).
var boolOrObject = reflect.TypeFor[interface{ jsonBoolOrObject() }]()

// numberOrName is the interface of the values that are a number or a
// name (an nftables chain's priority).
var numberOrName = reflect.TypeFor[interface{ JSONNumberOrName() }]()

// nameChecker is a number-or-name type whose names the shape check
// resolves (TableID: an unknown name is refused with its path).
type nameChecker interface{ checkJSONName(string) error }

// numberOrName checks that tok is an integer or a string (a name t
// knows, when t checks its names).
func (s *shapeChecker) numberOrName(tok json.Token, t reflect.Type, o Origin) error {
	if n, ok := tok.(json.Number); ok && isInteger(n.String()) {
		if k := t.Kind(); k >= reflect.Int && k <= reflect.Uint64 { // TableID: the number's range
			s.integer(n, t, o)
		}
		return nil
	} else if ok {
		s.fail(o, "expected an integer or a name, got %s", n)
		return nil
	}
	if name, ok := tok.(string); ok {
		if nc, ok := reflect.Zero(t).Interface().(nameChecker); ok {
			if err := nc.checkJSONName(name); err != nil {
				s.fail(o, "%v", err)
			}
		}
		return nil
	}
	s.fail(o, "expected an integer or a name, got %s", tokenName(tok))
	return s.skipRest(tok, o)
}

// value checks the next value against t.
func (s *shapeChecker) value(t reflect.Type, o Origin) error {
	tok, err := s.token(o)
	if err != nil {
		return err
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if _, ok := tok.(bool); ok && reflect.PointerTo(t).Implements(boolOrObject) {
		return nil // "dhcp4": true
	}
	if reflect.PointerTo(t).Implements(numberOrName) {
		return s.numberOrName(tok, t, o) // "priority": 0 or "filter"
	}
	if !fits(tok, t) {
		s.fail(o, "expected %s, got %s", wantName(t), tokenName(tok))
		return s.skipRest(tok, o)
	}
	switch t.Kind() {
	case reflect.Struct:
		return s.object(t, o)
	case reflect.Map:
		return s.mapObject(t.Elem(), o)
	case reflect.Slice:
		return s.array(t.Elem(), o)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		s.integer(tok.(json.Number), t, o)
	}
	return nil
}

// object checks the members of a JSON object against the struct t; the
// opening brace has been read.
func (s *shapeChecker) object(t reflect.Type, o Origin) error {
	fields := jsonFields(t)
	return s.members(o, "field", func(name string) (reflect.Type, Origin, bool) {
		ft, ok := fields[name]
		if !ok {
			s.fail(o, "unknown field %q%s", name, closestField(name, fields))
		}
		return ft, o.field(name), ok
	})
}

// closestField is "; did you mean "X"?" when X is a field of fields
// close enough to name to be a typo of it ("adresses").
func closestField(name string, fields map[string]reflect.Type) string {
	if len(name) > 64 {
		return ""
	}
	names := make([]string, 0, len(fields))
	for n := range fields {
		names = append(names, n)
	}
	slices.Sort(names)
	if c := suggest.Closest(name, names); c != "" {
		return fmt.Sprintf("; did you mean %q?", c)
	}
	return ""
}

// mapObject checks the members of a JSON object against a map whose
// values have type elem; the opening brace has been read.
func (s *shapeChecker) mapObject(elem reflect.Type, o Origin) error {
	return s.members(o, "key", func(name string) (reflect.Type, Origin, bool) {
		return elem, o.key(name), true
	})
}

// members walks an object's members up to its closing brace. For each key,
// lookup returns the type and origin of its value, or false to skip it.
// A key given twice is reported as a duplicate noun ("field" or "key"), and
// its second value skipped.
func (s *shapeChecker) members(o Origin, noun string, lookup func(string) (reflect.Type, Origin, bool)) error {
	seen := map[string]bool{}
	for s.dec.More() {
		tok, err := s.token(o)
		if err != nil {
			return err
		}
		name := tok.(string) // the decoder allows only strings as keys
		t, at, ok := lookup(name)
		if ok && seen[name] {
			s.fail(o, "duplicate %s %q", noun, name)
			ok = false
		}
		seen[name] = true
		if err := s.memberValue(t, at, ok); err != nil {
			return err
		}
	}
	_, err := s.token(o) // '}'
	return err
}

// memberValue checks the next value against t, or skips it if !check.
func (s *shapeChecker) memberValue(t reflect.Type, o Origin, check bool) error {
	if check {
		return s.value(t, o)
	}
	tok, err := s.token(o)
	if err != nil {
		return err
	}
	return s.skipRest(tok, o)
}

// array checks the elements of a JSON array against elem; the opening
// bracket has been read.
func (s *shapeChecker) array(elem reflect.Type, o Origin) error {
	for i := 0; s.dec.More(); i++ {
		if err := s.value(elem, o.index(i)); err != nil {
			return err
		}
	}
	_, err := s.token(o) // ']'
	return err
}

// skipRest skips the rest of a value whose first token was tok.
func (s *shapeChecker) skipRest(tok json.Token, o Origin) error {
	for depth := openDepth(tok); depth > 0; {
		t, err := s.token(o)
		if err != nil {
			return err
		}
		depth += openDepth(t)
	}
	return nil
}

// openDepth returns +1 for an opening delimiter, -1 for a closing one.
func openDepth(tok json.Token) int {
	switch tok {
	case json.Delim('{'), json.Delim('['):
		return 1
	case json.Delim('}'), json.Delim(']'):
		return -1
	}
	return 0
}

// integer checks that n is an integer within the range of t.
func (s *shapeChecker) integer(n json.Number, t reflect.Type, o Origin) {
	text := n.String()
	if !isInteger(text) {
		s.fail(o, "expected an integer, got %s", text)
		return
	}
	if !inTypeRange(text, t) {
		lo, hi := typeRange(t)
		s.fail(o, "%s is out of range %s-%s", text, lo, hi)
	}
}

// isInteger reports whether a JSON number is written as an integer.
func isInteger(text string) bool {
	digits := strings.TrimPrefix(text, "-")
	return digits != "" && strings.Trim(digits, "0123456789") == ""
}

// inTypeRange reports whether the integer text fits the integer type t.
func inTypeRange(text string, t reflect.Type) bool {
	if t.Kind() >= reflect.Uint && t.Kind() <= reflect.Uint64 {
		_, err := strconv.ParseUint(text, 10, t.Bits())
		return err == nil
	}
	_, err := strconv.ParseInt(text, 10, t.Bits())
	return err == nil
}

// typeRange returns the bounds of the integer type t, as text.
func typeRange(t reflect.Type) (lo, hi string) {
	if t.Kind() >= reflect.Uint && t.Kind() <= reflect.Uint64 {
		return "0", strconv.FormatUint(1<<t.Bits()-1, 10)
	}
	return strconv.FormatInt(-1<<(t.Bits()-1), 10), strconv.FormatInt(1<<(t.Bits()-1)-1, 10)
}

// fits reports whether the token tok can start a value of type t.
func fits(tok json.Token, t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Struct, reflect.Map:
		return tok == json.Delim('{')
	case reflect.Slice:
		return tok == json.Delim('[')
	case reflect.String:
		_, ok := tok.(string)
		return ok
	case reflect.Bool:
		_, ok := tok.(bool)
		return ok
	}
	_, ok := tok.(json.Number)
	return ok
}

// wantName names the JSON type a Go type decodes from.
func wantName(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Struct, reflect.Map:
		return "an object"
	case reflect.Slice:
		return "an array"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	}
	return "an integer"
}

// tokenName names the JSON type of the value a token starts.
func tokenName(tok json.Token) string {
	switch v := tok.(type) {
	case json.Delim:
		if v == '{' {
			return "an object"
		}
		return "an array"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case json.Number:
		return "a number"
	}
	return "null"
}

var fieldCache sync.Map // reflect.Type -> map[string]reflect.Type

// jsonFields returns the JSON member names of the struct t and their types:
// exported fields without the tag "-".
func jsonFields(t reflect.Type) map[string]reflect.Type {
	if m, ok := fieldCache.Load(t); ok {
		return m.(map[string]reflect.Type)
	}
	m := map[string]reflect.Type{}
	for f := range fieldsOf(t) {
		m[f.name] = f.typ
	}
	fieldCache.Store(t, m)
	return m
}

// jsonField is a struct field as JSON sees it.
type jsonField struct {
	name string
	typ  reflect.Type
}

// fieldsOf yields the JSON members of the struct t in declaration order.
func fieldsOf(t reflect.Type) iter.Seq[jsonField] {
	return func(yield func(jsonField) bool) {
		for f := range t.Fields() {
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if !f.IsExported() || name == "-" {
				continue
			}
			if f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct {
				for ef := range fieldsOf(f.Type) { // an embedded struct's members are the outer's
					if !yield(ef) {
						return
					}
				}
				continue
			}
			if name == "" {
				name = f.Name
			}
			if !yield(jsonField{name, f.Type}) {
				return
			}
		}
	}
}
