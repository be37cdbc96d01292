// Package testbin builds the netagent binary once per test process, for
// the tests that run it as a user would (the CLI, the daemon, the corpus).
// The binary lives in a temporary directory that Main removes when the
// package's tests end, so that no run leaves anything behind in the
// system's temporary directory.
package testbin

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

var (
	once sync.Once
	dir  string
	path string
	err  error
)

// Netagent builds cmd/netagent on first use and returns the binary's path;
// a failed build fails t (and every later caller).
func Netagent(t testing.TB) string {
	t.Helper()
	once.Do(build)
	if err != nil {
		t.Fatal(err)
	}
	return path
}

func build() {
	dir, err = os.MkdirTemp("", "netagent-testbin-")
	if err != nil {
		return
	}
	path = filepath.Join(dir, "netagent")
	out, berr := exec.Command("go", "build", "-o", path, "github.com/netagent/netagent/cmd/netagent").CombinedOutput()
	if berr != nil {
		err = fmt.Errorf("go build: %v\n%s", berr, out)
	}
}

// Main runs the package's tests (a TestMain calls it) and then removes
// the binary's directory.
func Main(m *testing.M) {
	code := m.Run()
	if dir != "" {
		os.RemoveAll(dir)
	}
	os.Exit(code)
}
