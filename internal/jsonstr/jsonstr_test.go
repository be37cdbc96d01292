package jsonstr

import (
	"encoding/json"
	"testing"
)

// Append writes every string byte for byte as json.Marshal does.
func TestAppendAsMarshal(t *testing.T) {
	for _, s := range []string{"", "eth0", "10.0.0.0/24", `a"b`, `a\b`, "<&>", "tab\there", "é", "\u2028", "\xff", "-m comment --comment \"x y\""} {
		want, _ := json.Marshal(s)
		if got := Append([]byte("x"), s); string(got) != "x"+string(want) {
			t.Errorf("Append(%q) = %s, want x%s", s, got, want)
		}
	}
}

func FuzzAppendAsMarshal(f *testing.F) {
	f.Add("eth0")
	f.Add(`"\<`)
	f.Fuzz(func(t *testing.T, s string) {
		want, _ := json.Marshal(s)
		if got := Append(nil, s); string(got) != string(want) {
			t.Errorf("Append(%q) = %s, want %s", s, got, want)
		}
	})
}
