package intent

import (
	"bytes"
	"strings"
	"testing"
)

// A document larger than MaxDocumentSize is refused, whatever its source
// (a store's value, the socket's apply), naming the limit; one at the
// limit parses. Before, any size was parsed.
func TestParseRefusesATooLargeDocument(t *testing.T) {
	doc := []byte(`{"version":1}`)
	at := append(bytes.Clone(doc), bytes.Repeat([]byte(" "), MaxDocumentSize-len(doc))...)
	if _, err := Parse(at); err != nil {
		t.Fatalf("a document of MaxDocumentSize bytes: %v", err)
	}
	if _, err := Parse(append(at, ' ')); err == nil || !strings.Contains(err.Error(), "32 MiB") {
		t.Errorf("a document of MaxDocumentSize+1 bytes: %v; want it refused naming the limit", err)
	}
}
