package termsafe

import "testing"

func TestString(t *testing.T) {
	for in, want := range map[string]string{
		"eth0":                        "eth0",
		"10-uplink.json":              "10-uplink.json",
		`C:\path`:                     `C:\path`,
		"é ü 中":                       "é ü 中",
		"a\nb":                        `a\nb`,
		"x\rREADY":                    `x\rREADY`,
		"tab\there":                   `tab\there`,
		"\x1b[2Jcleared":              `\x1b[2Jcleared`,
		"\x1b]0;title\x07":            `\x1b]0;title\x07`,
		"del\x7f":                     `del\x7f`,
		"c1\u009b2J":                  `c1\u009b2J`,
		"bidi\u202etxt.json":          `bidi\u202etxt.json`,
		"iso\u2066x\u2069":            `iso\u2066x\u2069`,
		"sep\u2028line":               `sep\u2028line`,
		"bad\xffutf8\xc3":             `bad\xffutf8\xc3`,
		"\x00nul":                     `\x00nul`,
		"mixed é\n\x1b[31mred\x1b[0m": `mixed é\n\x1b[31mred\x1b[0m`,
	} {
		if got := String(in); got != want {
			t.Errorf("String(%q) = %q, want %q", in, got, want)
		}
	}
}

type inner struct {
	Name  string
	Notes []string
	Raw   []byte
	hid   string
}

type outer struct {
	File  string
	In    *inner
	List  []inner
	Arr   [1]string
	ByKey map[string]string
	Any   any
	Empty *inner
}

// Sanitize reaches every exported string: fields, pointers, slices,
// arrays, maps (keys too) and interfaces; raw bytes and unexported fields
// are left.
func TestSanitize(t *testing.T) {
	v := &outer{
		File:  "a\nb",
		In:    &inner{Name: "\x1b[2J", Notes: []string{"ok", "x\ry"}, Raw: []byte("r\n"), hid: "h\n"},
		List:  []inner{{Name: "l\u202e"}},
		Arr:   [1]string{"\t"},
		ByKey: map[string]string{"k\n": "v\x1b", "plain": "plain"},
		Any:   &inner{Name: "i\n"},
	}
	Sanitize(v)
	switch {
	case v.File != `a\nb`, v.In.Name != `\x1b[2J`, v.In.Notes[1] != `x\ry`, v.List[0].Name != `l\u202e`, v.Arr[0] != `\t`:
		t.Errorf("not escaped: %+v %+v", v, v.In)
	case v.ByKey[`k\n`] != `v\x1b`, v.ByKey["plain"] != "plain", len(v.ByKey) != 2:
		t.Errorf("the map: %q", v.ByKey)
	case v.Any.(*inner).Name != `i\n`:
		t.Errorf("through an interface: %q", v.Any.(*inner).Name)
	case string(v.In.Raw) != "r\n", v.In.hid != "h\n":
		t.Errorf("raw bytes or an unexported field changed: %q %q", v.In.Raw, v.In.hid)
	}
}
