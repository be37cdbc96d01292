// Package jsonstr writes JSON strings into byte slices without
// reflection, for the hand-written encoders of large documents (the
// intent, the trial journal, the firewall's records).
package jsonstr

import (
	"encoding/json"
	"fmt"
	"strconv"
)

// Append appends s quoted exactly as json.Marshal quotes it. A string of
// printable ASCII that needs no escape (addresses, names, most rules) is
// copied; any other goes through json.Marshal (HTML escapes, control
// characters, invalid UTF-8, U+2028 and U+2029).
func Append(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s) // a string always marshals
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// NumberOrString decodes a JSON value that is an int32 or a string (an
// nftables priority, a duration of the intent): the string when isString,
// else the number; what is neither is an error naming the value and what
// a string stands for.
func NumberOrString(b []byte, what string) (s string, n int, isString bool, err error) {
	if len(b) > 0 && b[0] == '"' {
		s, err = strconv.Unquote(string(b))
		return s, 0, true, err
	}
	v, err := strconv.ParseInt(string(b), 10, 32)
	if err != nil {
		return "", 0, false, fmt.Errorf("%s: not an integer or %s", b, what)
	}
	return "", int(v), false, nil
}

// AppendMember appends the member name (`,"via":`) and s quoted, unless
// s is empty (omitempty).
func AppendMember(b []byte, name, s string) []byte {
	if s == "" {
		return b
	}
	return Append(append(b, name...), s)
}

// AppendList appends open (`,"routes":[`), the elements of list as each
// writes them (a method expression: (*Route).appendJSON), separated by commas, and "]"; nothing for an empty list
// (omitempty).
func AppendList[T any](b []byte, open string, list []T, each func(*T, []byte) []byte) []byte {
	if len(list) == 0 {
		return b
	}
	b = append(b, open...)
	for i := range list {
		if i > 0 {
			b = append(b, ',')
		}
		b = each(&list[i], b)
	}
	return append(b, ']')
}

// Object writes a JSON object whose members are all optional: Member puts
// the comma before each but the first.
type Object struct {
	B     []byte
	start int
}

// OpenObject starts an object at the end of b.
func OpenObject(b []byte) Object {
	b = append(b, '{')
	return Object{B: b, start: len(b)}
}

// Member appends a member's name (`"via":`), after a comma unless it is
// the first; the caller appends its value to o.B.
func (o *Object) Member(name string) {
	if len(o.B) > o.start {
		o.B = append(o.B, ',')
	}
	o.B = append(o.B, name...)
}

// String appends member name with s quoted, unless s is empty
// (omitempty).
func (o *Object) String(name, s string) {
	if s != "" {
		o.Member(name)
		o.B = Append(o.B, s)
	}
}

// Close ends the object and returns the bytes.
func (o *Object) Close() []byte { return append(o.B, '}') }
