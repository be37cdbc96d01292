package intent

import (
	"reflect"
	"slices"
	"strings"
	"testing"
)

// topLevelFields lists the JSON names of Intent's members but version and
// drift (which belong to no section), in
// the order of the type (and of the schema).
func topLevelFields() []string {
	var out []string
	typ := reflect.TypeFor[Intent]()
	for i := range typ.NumField() {
		name, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
		if name != "" && name != "-" && name != "version" && name != "drift" {
			out = append(out, name)
		}
	}
	return out
}

// TestSectionsCoverTheFormat: every top-level member of the format has
// exactly one entry in sections, in the order of the schema, each with its
// check and merge.
func TestSectionsCoverTheFormat(t *testing.T) {
	var got []string
	for _, s := range sections {
		first, _, _ := strings.Cut(s.path, ".")
		got = append(got, first)
		if s.check == nil || s.merge == nil || s.without == nil {
			t.Errorf("section %s lacks a check, merge or without", s.path)
		}
	}
	if want := topLevelFields(); !slices.Equal(got, want) {
		t.Errorf("sections %q, want the members of Intent %q", got, want)
	}
}
