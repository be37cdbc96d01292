// Package jsonstr writes JSON strings into byte slices without
// reflection, for the hand-written encoders of large documents (the
// intent, the trial journal, the firewall's records).
package jsonstr

import "encoding/json"

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
