package testtool

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Without the binary the tests skip, except under CI, where they fail.
func TestMissingBinary(t *testing.T) {
	missing := func(string) (string, error) { return "", exec.ErrNotFound }
	tl := Tool{Name: "some-server", Fallback: filepath.Join(t.TempDir(), "some-server"), Package: "some-server"}
	if _, err := tl.look(missing, ""); err == nil || errors.Is(err, ErrMissingInCI) {
		t.Errorf("outside CI: %v, want an error to skip on", err)
	}
	if _, err := tl.look(missing, "true"); !errors.Is(err, ErrMissingInCI) {
		t.Errorf("in CI: %v, want ErrMissingInCI", err)
	}
	if err := os.WriteFile(tl.Fallback, nil, 0o755); err != nil {
		t.Fatal(err)
	}
	if bin, err := tl.look(missing, "true"); err != nil || bin != tl.Fallback {
		t.Errorf("with the fallback present: %q, %v", bin, err)
	}
}
