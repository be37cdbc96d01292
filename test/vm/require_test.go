package vm

import (
	"os"
	"strings"
	"testing"
)

func TestMustHaveTools(t *testing.T) {
	for _, c := range []struct {
		ci   string
		euid int
		want bool
	}{
		{"true", 0, true}, {"true", 1000, true}, {"", 0, true}, {"", 1000, false}, {"false", 1000, false},
	} {
		if got := mustHaveTools(c.ci, c.euid); got != c.want {
			t.Errorf("mustHaveTools(CI=%q, euid %d) = %v, want %v", c.ci, c.euid, got, c.want)
		}
	}
}

func TestMissingKernelIsNamed(t *testing.T) {
	missing := t.TempDir() + "/no-kernel"
	t.Setenv(KernelDirEnv, missing)
	r := record(t, func(tb testing.TB) { requireTools(tb) })
	msg := r.fatal
	if !mustHaveTools(os.Getenv("CI"), os.Geteuid()) {
		msg = r.skipped
	}
	for _, want := range []string{"unpacked Debian kernel", missing, "run scripts/setup.sh"} {
		if !strings.Contains(msg, want) {
			t.Errorf("missing kernel: fatal %q, skip %q; want the one policy picks to say %q", r.fatal, r.skipped, want)
		}
	}
}
