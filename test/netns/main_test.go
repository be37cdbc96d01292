package netns_test

import (
	"testing"

	"github.com/netagent/netagent/internal/testbin"
)

// TestMain removes what the package's tests build once and share (the
// netagent binary, see testbin) when they end. A test's own files go in
// t.TempDir.
func TestMain(m *testing.M) { testbin.Main(m) }
