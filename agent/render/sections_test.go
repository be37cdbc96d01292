package render

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/netagent/netagent/agent/intent"
)

// TestSectionsCoverTheFormat: every top-level member of the intent format
// but version has exactly one entry in sections, in the order of the
// schema, each rendering and inverting its items.
func TestSectionsCoverTheFormat(t *testing.T) {
	var want []string
	typ := reflect.TypeFor[intent.Intent]()
	for i := range typ.NumField() {
		name, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
		if name != "" && name != "-" && name != "version" && name != "drift" { // drift: no section
			want = append(want, name)
		}
	}
	var got []string
	for _, s := range sections {
		first, _, _ := strings.Cut(s.path, ".")
		got = append(got, first)
		if s.render == nil || s.toIntent == nil {
			t.Errorf("section %s lacks render or toIntent", s.path)
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("sections %q, want the members of intent.Intent %q", got, want)
	}
}
