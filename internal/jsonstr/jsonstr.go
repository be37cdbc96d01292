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
