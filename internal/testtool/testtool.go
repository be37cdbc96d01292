// Package testtool finds the server binaries the integration tests run
// (Debian's etcd, dnsmasq): installed by scripts/setup.sh. Without one a
// test skips on a developer's machine but fails under CI, where every test
// must run.
package testtool

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"testing"
)

// Tool is a binary a test needs.
type Tool struct {
	Name     string // looked up on $PATH
	Fallback string // tried when $PATH lacks it (/usr/sbin is not always there)
	Package  string // the Debian package setup.sh installs it from
}

// ErrMissingInCI: the binary is missing where the tests must run.
var ErrMissingInCI = errors.New("CI must run the tests that need it")

// Find returns the tool's path; missing, it skips the test, or fails it
// when the CI variable is set.
func (tl Tool) Find(t testing.TB) string {
	t.Helper()
	bin, err := tl.look(exec.LookPath, os.Getenv("CI"))
	switch {
	case errors.Is(err, ErrMissingInCI):
		t.Fatal(err)
	case err != nil:
		t.Skip(err)
	}
	return bin
}

// look finds the tool with look ($PATH), then at Fallback. Missing, it is
// an error wrapping ErrMissingInCI when ci (the CI variable) is set.
func (tl Tool) look(look func(string) (string, error), ci string) (string, error) {
	bin, err := look(tl.Name)
	if err == nil {
		return bin, nil
	}
	if _, serr := os.Stat(tl.Fallback); tl.Fallback != "" && serr == nil {
		return tl.Fallback, nil
	}
	if ci != "" {
		return "", fmt.Errorf("%s not installed (%v): scripts/setup.sh installs Debian's %s, and %w", tl.Name, err, tl.Package, ErrMissingInCI)
	}
	return "", fmt.Errorf("%s not installed (%v): run scripts/setup.sh", tl.Name, err)
}
