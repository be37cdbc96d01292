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

// TestObjectAndList: the helpers of the hand-written encoders write what
// json.Marshal does for optional members and lists.
func TestObjectAndList(t *testing.T) {
	type v struct {
		A string   `json:"a,omitempty"`
		B []string `json:"b,omitempty"`
		C string   `json:"c,omitempty"`
	}
	for _, tc := range []v{{}, {A: "x"}, {C: "<&>"}, {B: []string{"1"}}, {A: "a", B: []string{"1", "2\n"}, C: "c"}, {B: []string{}}} {
		want, err := json.Marshal(tc)
		if err != nil {
			t.Fatal(err)
		}
		o := OpenObject([]byte("p"))
		o.String(`"a":`, tc.A)
		if len(tc.B) > 0 {
			o.Member(`"b":`)
			o.B = AppendList(o.B, `[`, tc.B, func(s *string, b []byte) []byte { return Append(b, *s) })
		}
		o.String(`"c":`, tc.C)
		if got := o.Close(); string(got) != "p"+string(want) {
			t.Errorf("%+v: %s, want %s", tc, got, want)
		}
		if got := AppendMember([]byte("{"), `"c":`, tc.C); tc.C == "" && string(got) != "{" {
			t.Errorf("AppendMember of an empty string: %s", got)
		}
	}
	if got := AppendList(nil, `,"l":[`, []int{}, func(*int, []byte) []byte { return nil }); len(got) != 0 {
		t.Errorf("AppendList of an empty list: %q", got)
	}
}
