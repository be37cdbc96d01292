package source

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sirupsen/logrus"

	"github.com/netagent/netagent/agent/intent"
)

// An intent file larger than an intent document may be
// (intent.MaxDocumentSize) is refused, naming it and the limit, and read
// no further than the limit; the other files load. Before, it was read
// whole, however large (a planted huge file could exhaust the daemon's
// memory), and delivered as a document.
func TestDirSourceRefusesATooLargeFile(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.json"), []byte(`{"version":1}`), 0o600); err != nil {
		t.Fatal(err)
	}
	big := append([]byte(`{"version":1}`), bytes.Repeat([]byte(" "), intent.MaxDocumentSize)...) // whitespace: valid JSON
	if err := os.WriteFile(filepath.Join(dir, "big.json"), big, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/dev/zero", filepath.Join(dir, "zero.json")); err != nil { // endless: not a regular file, never read
		t.Fatal(err)
	}
	got, err := NewDirSource(dir, logrus.New()).Load()
	var refused *RefusedError
	if !errors.As(err, &refused) || refused.Docs["big.json"] == nil {
		t.Fatalf("Load: %v; want big.json refused", err)
	}
	if msg := refused.Docs["big.json"].Error(); !strings.Contains(msg, "big.json") || !strings.Contains(msg, "32 MiB") {
		t.Errorf("the refusal %q does not name the file and the limit", msg)
	}
	if _, ok := got["big.json"]; ok || len(got) != 1 || string(got["a.json"]) != `{"version":1}` {
		t.Errorf("Load delivered %d documents: big.json %v, a.json %q", len(got), ok, got["a.json"])
	}
}
