// Package termsafe escapes text from outside the program (document and
// item names, reasons, errors a daemon or a store returned, anything a
// DHCP server or another writer chose) before it is printed to a
// terminal, so that it can neither start a line of its own nor move the
// cursor, clear the screen, retitle the window or reorder what follows.
//
// String escapes, Go-style, every rune that a terminal does not show as
// itself: C0 controls (newline, carriage return and tab included: a name
// never spans lines or columns), DEL, C1 controls (U+0080 to U+009F, the
// 8-bit CSI among them), the bidirectional formatting characters
// (U+061C, U+200E, U+200F, U+202A to U+202E, U+2066 to U+2069), the line
// and paragraph separators (U+2028, U+2029) and bytes that are not UTF-8.
// Printable text, backslashes included, is left as it is, so that an
// ordinary name reads the same. Sanitize does the same to every string
// reachable from a value (the daemon's status, an event, a fleet status)
// before a printer formats it. JSON output is never passed through
// either: encoding/json escapes it for its own grammar.
package termsafe

import (
	"fmt"
	"reflect"
	"strings"
	"unicode/utf8"
)

// String returns s with every rune a terminal would act on escaped
// (\n, \r, \t, \x1b, \u202e, \xff for a byte that is not UTF-8).
func String(s string) string {
	if safe(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x80 && unsafeRune(r):
			fmt.Fprintf(&b, `\x%02x`, r)
		case unsafeRune(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// safe reports whether s needs no escape: the common case, checked
// without allocating.
func safe(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == 0x7f {
			return false
		} else if c >= 0x80 {
			for _, r := range s[i:] {
				if r == utf8.RuneError || unsafeRune(r) {
					return false
				}
			}
			return true
		}
	}
	return true
}

// unsafeRune: a control, or a character that changes how the text
// around it is shown.
func unsafeRune(r rune) bool {
	switch {
	case r < 0x20, r == 0x7f, r >= 0x80 && r <= 0x9f:
		return true
	case r == 0x061c, r == 0x200e, r == 0x200f, r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true
	case r == 0x2028, r == 0x2029:
		return true
	}
	return false
}

// Sanitize escapes, in place, every string that v (a pointer) reaches
// through exported struct fields, pointers, slices, arrays and maps (keys
// and values): what a printer of v then writes is safe on a terminal.
// Byte slices (raw JSON) are left alone.
func Sanitize(v any) {
	sanitize(reflect.ValueOf(v), 0)
}

// maxDepth bounds the walk (the values are trees of a few levels).
const maxDepth = 32

func sanitize(v reflect.Value, depth int) {
	if depth > maxDepth {
		return
	}
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			sanitize(v.Elem(), depth+1)
		}
	case reflect.String:
		if v.CanSet() {
			if s := v.String(); !safe(s) {
				v.SetString(String(s))
			}
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				sanitize(v.Field(i), depth+1)
			}
		}
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return
		}
		fallthrough
	case reflect.Array:
		for i := range v.Len() {
			sanitize(v.Index(i), depth+1)
		}
	case reflect.Map:
		sanitizeMap(v, depth)
	}
}

// sanitizeMap replaces each entry by its escaped key and value (map
// entries are not addressable: each is copied, escaped and put back).
func sanitizeMap(m reflect.Value, depth int) {
	if m.Len() == 0 {
		return
	}
	type entry struct{ k, v reflect.Value }
	var entries []entry
	for it := m.MapRange(); it.Next(); {
		k := reflect.New(it.Key().Type()).Elem()
		k.Set(it.Key())
		val := reflect.New(it.Value().Type()).Elem()
		val.Set(it.Value())
		sanitize(k, depth+1)
		sanitize(val, depth+1)
		entries = append(entries, entry{k, val})
	}
	m.Clear()
	for _, e := range entries {
		m.SetMapIndex(e.k, e.v)
	}
}
