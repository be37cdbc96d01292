package vm

import (
	"crypto/rand"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"runtime"
	"slices"
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
	// NICs are emulated network cards on one qemu hub that reaches nothing
	// outside the VM; their drivers are loaded at boot besides Modules.
	// Those with Hot set are plugged only when the guest calls HotAdd.
	NICs []NIC
	// Programs are host programs (names on PATH, or paths) the guest gets
	// in /usr/bin with their shared libraries, e.g. ProgramsIPEthtool.
	Programs []string
	// Binaries are files the test built (BuildBinary: a netagent binary)
	// that the guest gets as GuestBinary(base name), in this run's payload
	// rather than the cached base archive, which would keep a copy of every
	// build. They must be static, as the test binary is.
	Binaries []string
	// HostRoot shares the host's root file system with the guest,
	// read-only, over virtio-9p (see hostroot.go): /init mounts it at
	// GuestHostRoot, for tests that run host programs too big for the
	// initramfs (python3 and ifupdown2) in a chroot there.
	HostRoot bool
}

// GuestBinaryDir is where the test binary and Config.Binaries are in the VM.
const GuestBinaryDir = "/test"

// GuestBinary is the path in the VM of the Config.Binaries entry whose
// base name is name.
func GuestBinary(name string) string { return GuestBinaryDir + "/" + name }

// ProgramsIPEthtool are the tools that read NICs back independently of
// netagent: iproute2's ip and ethtool (Debian packages iproute2, ethtool).
var ProgramsIPEthtool = []string{"ip", "ethtool"}

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
	mods := DefaultModules
	if c.Modules != nil {
		mods = c.Modules
	}
	if c.HostRoot {
		mods = withModules(mods, hostRootModules)
	}
	return nicModules(mods, c.NICs)
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
	if err := validateNICs(c.NICs); err != nil {
		t.Fatalf("vm: Config.%v", err)
	}
	if err := c.validateHostRoot(); err != nil {
		t.Fatalf("vm: Config.%v", err)
	}
	tl := requireTools(t)
	nonce := rand.Text()
	initrd := c.initrd(t, tl, binary, append([]string{"-test.v"}, args...), nonce)
	sock := monitorSocket(t)
	qargs := slices.Concat(qemuArgs(tl.kernel, initrd, c.memoryMB(), sock), nicArgs(c.NICs), c.hostRootArgs())
	res, err := boot(t, tl.qemu, qargs, c.timeoutFor(t), newConsole(t, nonce, c.hotAdder(t, sock)))
	if err != nil {
		t.Fatalf("vm: %v\nlast console lines:\n%s", err, orNone(tail(res.Output, 40)))
	}
	t.Logf("vm: kernel %s booted in %v, run took %v, test binary exited %d",
		tl.kernel.Release, res.Boot.Round(time.Millisecond), res.Duration.Round(time.Millisecond), res.ExitCode)
	return res
}

// initrd writes the VM's initramfs, the cached base and this run's payload,
// into a temporary directory and returns its path.
func (c Config) initrd(t testing.TB, tl *tools, binary string, args []string, nonce string) string {
	t.Helper()
	tmp := t.TempDir()
	base, err := baseImage(tl.kernel, tl.busybox, c.modules(), c.Programs, c.HostRoot, tmp)
	if err != nil {
		t.Fatalf("vm: %v", err)
	}
	pl, err := payload(binary, c.Binaries, args, nonce, []string{NICsEnv + "=" + encodeNICs(c.NICs)})
	if err != nil {
		t.Fatalf("vm: building initramfs payload for %s: %v", binary, err)
	}
	initrd := filepath.Join(tmp, "initrd.img")
	if err := writeInitrd(initrd, base, pl); err != nil {
		t.Fatalf("vm: %v", err)
	}
	return initrd
}

// hotAdder returns what the console calls when the guest asks for a NIC:
// it plugs the Hot NIC with that ID in through the monitor at sock.
func (c Config) hotAdder(t testing.TB, sock string) func(id string) {
	return func(id string) {
		t.Helper()
		i := slices.IndexFunc(c.NICs, func(n NIC) bool { return n.ID == id && n.Hot })
		if i < 0 {
			t.Errorf("vm: the guest asked to hot-add NIC %q; Config.NICs has no such NIC with Hot set", id)
			return
		}
		if err := hotAdd(sock, c.NICs[i]); err != nil {
			t.Errorf("vm: hot-adding: %v", err)
			return
		}
		t.Logf("vm: hot-added NIC %s: %s", id, c.NICs[i].deviceOption())
	}
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

// BuildBinary compiles the command pkg (an import path) into a static
// binary (CGO_ENABLED=0 go build) named after its last element, in a
// temporary directory that t removes, for Config.Binaries.
func BuildBinary(t testing.TB, pkg string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), path.Base(pkg))
	cmd := exec.Command(goTool(), "build", "-o", out, pkg)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("vm: building %s: %v\n%s", pkg, err, msg)
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
