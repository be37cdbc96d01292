package progress

import (
	"bytes"
	"strings"
	"testing"
	"time"

	dg "github.com/netagent/netagent/depgraph"
)

// The progress of an apply: nothing in its first second, then the
// operations and items done out of the intent's, on one line rewritten in
// place, cleared at the end.
func TestApplyProgress(t *testing.T) {
	var w bytes.Buffer
	p := New(&w, 3)
	ops := []dg.ItemRef{{Type: "interface", Name: "br0"}, {Type: "interface", Name: "br0"}, {Type: "route", Name: "r"}} // as planSample: a recreate, then a route
	p.Op(ops[0])
	if w.Len() != 0 {
		t.Errorf("progress within the first second: %q", w.String())
	}
	p.start = time.Now().Add(-2 * time.Second)
	p.Op(ops[1])
	p.last = time.Time{}
	p.Op(ops[2])
	p.End()
	text := w.String()
	if !strings.Contains(text, "\rapply: 3 operations, 2/3 items, 2s\033[K") || !strings.HasSuffix(text, "\r\033[K") {
		t.Errorf("progress %q", text)
	}
}
