package intent

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/netagent/netagent/internal/schemadoc"
)

const intentDoc = "../../docs/intent.md"

// TestIntentDocIsCurrent checks that docs/intent.md's field reference is
// the one schema.json's descriptions make (run go generate ./agent/intent
// after changing the schema), and so that every property of the schema
// has a description. With TestSchemaMatchesTypes (every Go field is a
// schema property and the reverse) a field of the format is documented
// in the schema and in the page, or a test fails.
func TestIntentDocIsCurrent(t *testing.T) {
	page, err := os.ReadFile(intentDoc)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := schemadoc.Reference(Schema())
	if err != nil {
		t.Fatalf("schema.json: %v", err)
	}
	want, err := schemadoc.Splice(page, ref)
	if err != nil {
		t.Fatalf("docs/intent.md: %v", err)
	}
	if !bytes.Equal(page, want) {
		t.Errorf("docs/intent.md's field reference is not what schema.json's descriptions make: run go generate ./agent/intent")
	}
}

// recorder collects what a comparison reports.
type recorder []string

func (r *recorder) Errorf(format string, args ...any) { *r = append(*r, fmt.Sprintf(format, args...)) }

// TestNewFieldCannotBeDocumentedInOnePlace adds a field to the format the
// three ways it could be half done, and shows that a test fails each time:
// in the Go types only (TestSchemaMatchesTypes's comparison), in the
// schema without a description (schemadoc.Reference, which
// TestIntentDocIsCurrent calls), and in the schema with one but not in
// docs/intent.md (the page is stale for TestIntentDocIsCurrent).
func TestNewFieldCannotBeDocumentedInOnePlace(t *testing.T) {
	type vlanWithPriority struct {
		VLAN
		Priority int `json:"priority"`
	}
	sc := loadSchema(t)
	var rec recorder
	sc.compare(&rec, reflect.TypeFor[vlanWithPriority](), sc.root["$defs"].(map[string]any)["vlan"], "vlan")
	if !strings.Contains(strings.Join(rec, "\n"), `vlan: Go field "priority" is not in the schema`) {
		t.Errorf("a Go field missing from the schema: the comparison reported %q", rec)
	}

	withField := func(prop map[string]any) []byte {
		sc := loadSchema(t)
		sc.root["$defs"].(map[string]any)["vlan"].(map[string]any)["properties"].(map[string]any)["priority"] = prop
		b, err := json.Marshal(sc.root)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	_, err := schemadoc.Reference(withField(map[string]any{"type": "integer", "minimum": 0, "maximum": 7}))
	if err == nil || !strings.Contains(err.Error(), "vlan.priority: the property has no description") {
		t.Errorf("a schema property without a description: Reference returned %v", err)
	}

	const desc = "The 802.1p priority of the frames sent."
	ref, err := schemadoc.Reference(withField(map[string]any{"type": "integer", "minimum": 0, "maximum": 7, "description": desc}))
	if err != nil {
		t.Fatal(err)
	}
	line := "- `priority` (integer 0-7): " + desc + "\n"
	if !bytes.Contains(ref, []byte(line)) {
		t.Fatalf("the reference does not list the new field as %q", line)
	}
	page, err := os.ReadFile(intentDoc)
	if err != nil {
		t.Fatal(err)
	}
	if spliced, err := schemadoc.Splice(page, ref); err != nil || bytes.Equal(spliced, page) {
		t.Errorf("a described field the page lacks: the page does not read as stale (%v)", err)
	}
}
