package vm

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// qemuBinary is the emulator; it comes with Debian's qemu-system-x86.
const qemuBinary = "qemu-system-x86_64"

// kernelCmdline keeps the console to the test's output: kernel messages below
// error level stay out, a panic powers the VM off (with -no-reboot).
const kernelCmdline = "console=ttyS0 quiet loglevel=3 panic=-1 rdinit=/init"

// qemuArgs are the options of every run: the pc machine (its root bus
// pci.0 has ACPI hotplug), no default devices, the serial console on stdio,
// and QMP, the monitor's JSON protocol, on the unix socket monitor.
func qemuArgs(k *Kernel, initrd string, memoryMB int, monitor string) []string {
	return []string{
		"-accel", "tcg", // KVM is present on the build hosts but not usable
		"-m", fmt.Sprintf("%dM", memoryMB), "-smp", "1",
		"-nodefaults", "-no-user-config", "-display", "none", "-serial", "stdio",
		"-no-reboot",
		"-kernel", k.Image, "-initrd", initrd, "-append", kernelCmdline,
		"-qmp", "unix:" + monitor + ",server=on,wait=off",
	}
}

// monitorSocket returns a path for the QMP socket in a directory that t
// removes. It is short: a unix socket's path has at most 107 bytes, which a
// t.TempDir named after a long subtest can pass.
func monitorSocket(t testing.TB) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "netagent-vm-")
	if err != nil {
		t.Fatalf("vm: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return filepath.Join(dir, "qmp.sock")
}

// boot runs qemu until the VM powers off or timeout passes, and reports what
// the console showed. The error says why the run did not reach the exit marker.
func boot(t testing.TB, qemu string, args []string, timeout time.Duration, con *console) (Result, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, qemu, args...)
	cmd.WaitDelay = 5 * time.Second
	// If the test binary dies (go test -timeout panics), take qemu with it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return Result{ExitCode: -1}, fmt.Errorf("starting %s: %w", qemu, err)
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return Result{ExitCode: -1}, fmt.Errorf("starting %s: %w", qemu, err)
	}
	con.start = start
	con.read(stdout)
	waitErr := cmd.Wait()
	res := con.result()
	res.Duration = time.Since(start)
	return res, bootError(ctx, con, res, waitErr, stderr.String())
}

func bootError(ctx context.Context, con *console, res Result, waitErr error, stderr string) error {
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return fmt.Errorf("qemu still running after %v, killed it", res.Duration.Round(time.Second))
	case con.setupErr != nil:
		return con.setupErr
	case waitErr != nil:
		return fmt.Errorf("%s: %w: %s", qemuBinary, waitErr, strings.TrimSpace(stderr))
	case res.ExitCode < 0:
		return errors.New("vm powered off before the test binary finished")
	}
	return nil
}
