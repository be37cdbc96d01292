package vm

import (
	"crypto/rand"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// Tag is the build tag that in-VM test files carry (//go:build vmtest).
const Tag = "vmtest"

// TestPattern selects the in-VM tests: their names start with TestInVM.
const TestPattern = "^TestInVM"

// GuestEnv is set to "1" in the VM's environment.
const GuestEnv = "NETAGENT_VM"

// Defaults for a zero Config.
const (
	DefaultTimeout  = 5 * time.Minute
	DefaultMemoryMB = 512
)

// bootAllowance is the part of the timeout left for booting and powering off
// when the test binary gets its own -test.timeout.
const bootAllowance = time.Minute

// Config describes the VM. The zero value is usable.
type Config struct {
	Timeout  time.Duration // the whole run, qemu start to exit; 0 means DefaultTimeout
	MemoryMB int           // 0 means DefaultMemoryMB
	Modules  []Module      // loaded at boot with their dependencies; nil means DefaultModules
}

func (c Config) timeout() time.Duration {
	if c.Timeout > 0 {
		return c.Timeout
	}
	return DefaultTimeout
}

// timeoutFor shortens the timeout to end a little before the test binary's
// own deadline (go test -timeout), so the harness reports a hung VM itself
// instead of the whole binary panicking.
func (c Config) timeoutFor(t testing.TB) time.Duration {
	d := c.timeout()
	if dl, ok := t.(interface{ Deadline() (time.Time, bool) }); ok {
		if end, ok := dl.Deadline(); ok && time.Until(end)-deadlineMargin < d {
			d = max(time.Until(end)-deadlineMargin, time.Second)
		}
	}
	return d
}

// deadlineMargin is what timeoutFor leaves before the test's deadline.
const deadlineMargin = 10 * time.Second

func (c Config) memoryMB() int {
	if c.MemoryMB > 0 {
		return c.MemoryMB
	}
	return DefaultMemoryMB
}

func (c Config) modules() []Module {
	if c.Modules != nil {
		return c.Modules
	}
	return DefaultModules
}

// InGuest reports whether the calling code runs inside the harness's VM.
func InGuest() bool { return os.Getenv(GuestEnv) == "1" }

// RunVMTests runs the calling package's in-VM tests (files tagged vmtest,
// names matching TestPattern) in a VM with the default Config.
func RunVMTests(t testing.TB) Result {
	t.Helper()
	return Config{}.RunPackageTests(t, ".", []string{Tag}, TestPattern)
}

// RunPackageTests runs the package's tests in a VM with the default Config.
func RunPackageTests(t testing.TB, pkgDir string, tags []string, runRegex string) Result {
	t.Helper()
	return Config{}.RunPackageTests(t, pkgDir, tags, runRegex)
}

// RunTestBinary runs a static test binary in a VM with the default Config.
func RunTestBinary(t testing.TB, binary string, args ...string) Result {
	t.Helper()
	return Config{}.RunTestBinary(t, binary, args...)
}

// RunPackageTests builds the tests of the package in pkgDir (relative to the
// calling test's directory, or an import path) with the given build tags,
// runs those matching runRegex in the VM, and fails t unless at least one ran
// and none failed or skipped.
func (c Config) RunPackageTests(t testing.TB, pkgDir string, tags []string, runRegex string) Result {
	t.Helper()
	requireTools(t) // before the build: a missing tool skips or fails at once
	bin := BuildTestBinary(t, pkgDir, tags)
	args := []string{"-test.run=" + runRegex}
	if d := c.timeoutFor(t) - bootAllowance; d > 0 {
		args = append(args, "-test.timeout="+d.String())
	}
	res := c.RunTestBinary(t, bin, args...)
	checkTests(t, res, runRegex)
	return res
}

// RunTestBinary boots the VM and runs binary with -test.v and args in it. It
// fails t if the VM cannot boot or does not get the binary to finish; the
// binary's own exit status is left to the caller, in Result.ExitCode.
func (c Config) RunTestBinary(t testing.TB, binary string, args ...string) Result {
	t.Helper()
	if InGuest() {
		t.Fatal("vm: the harness was called inside the VM; give the host-side test file //go:build !" + Tag)
	}
	tl := requireTools(t)
	tmp := t.TempDir()
	base, err := baseImage(tl.kernel, tl.busybox, c.modules(), tmp)
	if err != nil {
		t.Fatalf("vm: %v", err)
	}
	nonce := rand.Text()
	pl, err := payload(binary, append([]string{"-test.v"}, args...), nonce)
	if err != nil {
		t.Fatalf("vm: building initramfs payload for %s: %v", binary, err)
	}
	initrd := filepath.Join(tmp, "initrd.img")
	if err := writeInitrd(initrd, base, pl); err != nil {
		t.Fatalf("vm: %v", err)
	}
	res, err := boot(t, tl.qemu, qemuArgs(tl.kernel, initrd, c.memoryMB()), c.timeoutFor(t), nonce)
	if err != nil {
		t.Fatalf("vm: %v\nlast console lines:\n%s", err, orNone(tail(res.Output, 40)))
	}
	t.Logf("vm: kernel %s booted in %v, run took %v, test binary exited %d",
		tl.kernel.Release, res.Boot.Round(time.Millisecond), res.Duration.Round(time.Millisecond), res.ExitCode)
	return res
}

// BuildTestBinary compiles the tests of the package in pkgDir into a static
// binary (CGO_ENABLED=0 go test -c) in a temporary directory that t removes.
func BuildTestBinary(t testing.TB, pkgDir string, tags []string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "pkg.test")
	cmd := exec.Command(goTool(), "test", "-c", "-o", out, "-tags", strings.Join(tags, ","), pkgDir)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("vm: building test binary for %s: %v\n%s", pkgDir, err, msg)
	}
	if _, err := os.Stat(out); err != nil {
		t.Fatalf("vm: building test binary for %s: no test files with tags %q", pkgDir, tags)
	}
	return out
}

// goTool is the go command of the toolchain running the tests.
func goTool() string {
	if path, err := exec.LookPath("go"); err == nil {
		return path
	}
	return filepath.Join(runtime.GOROOT(), "bin", "go")
}

// checkTests fails t for every in-VM test that failed or skipped, and when
// none ran; it logs how many passed.
func checkTests(t testing.TB, res Result, runRegex string) {
	t.Helper()
	for _, name := range res.Failed {
		t.Errorf("vm: in-VM test %s failed", name)
	}
	for _, name := range res.Skipped {
		t.Errorf("vm: in-VM test %s skipped; the VM has everything, so a skip hides a broken test", name)
	}
	if res.ExitCode != 0 && len(res.Failed) == 0 {
		t.Errorf("vm: test binary exited with status %d", res.ExitCode)
	}
	passed := topLevel(res.Passed)
	if len(passed) == 0 && len(res.Failed) == 0 {
		t.Errorf("vm: no in-VM test matched %q", runRegex)
	}
	t.Logf("vm: %d in-VM tests passed: %s", len(passed), strings.Join(passed, " "))
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}
