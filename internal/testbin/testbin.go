// Package testbin builds the netagent binary once per test process, for
// the tests that run it as a user would (the CLI, the daemon, the corpus).
// The binary lives in a temporary directory that Main removes when the
// package's tests end, so that no run leaves anything behind in the
// system's temporary directory; the directory of a test process that died
// first (a -timeout panic, a kill) is removed by the next build.
package testbin

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"golang.org/x/sys/unix"
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
	sweep()
	dir, err = os.MkdirTemp("", fmt.Sprintf("netagent-testbin-%d-", os.Getpid()))
	if err != nil {
		return
	}
	path = filepath.Join(dir, "netagent")
	out, berr := exec.Command("go", "build", "-o", path, "github.com/netagent/netagent/cmd/netagent").CombinedOutput()
	if berr != nil {
		err = fmt.Errorf("go build: %v\n%s", berr, out)
	}
}

// sweep removes the binaries of test processes that died before their
// Main could (a -timeout panic, a kill): "netagent-testbin-<pid>-*" whose
// process no longer runs.
func sweep() {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), "netagent-testbin-*-*"))
	for _, d := range dirs {
		f := strings.Split(filepath.Base(d), "-")
		pid, perr := strconv.Atoi(f[2])
		if perr != nil || unix.Kill(pid, 0) != unix.ESRCH {
			continue
		}
		os.RemoveAll(d)
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

// Result is what a run of the binary printed and its exit code.
type Result struct {
	Stdout, Stderr string
	Code           int
}

// Run runs bin with argv, the environment env added to the test's, and
// returns its output and exit code; a binary that cannot be run at all
// fails the test.
func Run(t testing.TB, bin string, env []string, argv ...string) Result {
	t.Helper()
	cmd := exec.Command(bin, argv...)
	if env != nil {
		cmd.Env = append(os.Environ(), env...)
	}
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	res := Result{Stdout: out.String(), Stderr: errOut.String()}
	if err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			t.Fatalf("running %s %v: %v", bin, argv, err)
		}
		res.Code = ee.ExitCode()
	}
	return res
}
