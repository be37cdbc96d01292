package agent

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/netagent/netagent/internal/statefile"
)

// An accepted document changed on disk (still valid JSON) is damaged: the
// start fails naming it, never applies the forged version nor drops the
// document with a warning. A set-aside one is no document. Before, the
// file was plain JSON, and the forged route was loaded as accepted.
func TestAcceptedDocumentDamageIsReported(t *testing.T) {
	dir := t.TempDir()
	g := &goodStore{dir: dir, written: map[string][]byte{}}
	if err := os.MkdirAll(g.path(), 0o700); err != nil {
		t.Fatal(err)
	}
	doc := []byte(`{"version":1,"routes":[{"to":"198.51.100.0/24","via":"192.0.2.1"}]}`)
	if err := g.write("a.json", doc); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(g.path(), "a.json")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, bytes.Replace(data, []byte("192.0.2.1"), []byte("192.0.2.9"), 1), 0o600); err != nil {
		t.Fatal(err)
	}
	if got, err := g.load(); !errors.Is(err, statefile.ErrDamaged) {
		t.Fatalf("load of a changed document: %v, %v; want ErrDamaged", got, err)
	}
	if err := os.Rename(path, path+".damaged-20260101T000000.000000000Z"); err != nil {
		t.Fatal(err)
	}
	if got, err := g.load(); err != nil || len(got) != 0 {
		t.Errorf("load with the damaged document set aside: %v, %v; want none", got, err)
	}
}
