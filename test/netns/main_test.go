package netns_test

import (
	"fmt"
	"os"
	"testing"
)

// binDir holds what the package's tests build once and share (the netagent
// binary): a temporary directory made before the tests run and removed
// after them, so that no run leaves anything in the system's temporary
// directory. A test's own files go in t.TempDir.
var binDir string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "netagent-netns-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}
