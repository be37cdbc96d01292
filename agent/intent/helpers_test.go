package intent

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// doc wraps the members of an intent in a version 1 document.
func doc(members string) string {
	if members == "" {
		return `{"version": 1}`
	}
	return `{"version": 1, ` + members + `}`
}

// mustParse parses a document that must parse.
func mustParse(t *testing.T, data string) *Intent {
	t.Helper()
	in, err := Parse([]byte(data))
	if err != nil {
		t.Fatalf("Parse(%s): %v", data, err)
	}
	return in
}

// messages lists the messages of the field errors in err.
func messages(err error) []string {
	var out []string
	for _, fe := range FieldErrors(err) {
		out = append(out, fe.Error())
	}
	return out
}

// checkMessages compares error messages with the wanted ones, in order.
func checkMessages(t *testing.T, err error, want []string) {
	t.Helper()
	got := messages(err)
	if !slices.Equal(got, want) {
		t.Errorf("errors:\n  got  %s\n  want %s", strings.Join(got, "\n       "), strings.Join(want, "\n       "))
	}
}

// readTestdata returns the contents of testdata/name.
func readTestdata(t testing.TB, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}
