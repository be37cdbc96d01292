package vm

import (
	"debug/elf"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"testing"
)

// tools is what a VM run needs from the host.
type tools struct {
	qemu    string
	busybox string
	kernel  *Kernel
}

// findTools looks for qemu, a static busybox and the unpacked kernel, and
// names every one that is missing.
func findTools() (*tools, error) {
	var tl tools
	var errs []error
	var err error
	if tl.qemu, err = exec.LookPath(qemuBinary); err != nil {
		errs = append(errs, fmt.Errorf("%s (Debian package qemu-system-x86): %w", qemuBinary, err))
	}
	if tl.busybox, err = findStaticBusybox(); err != nil {
		errs = append(errs, fmt.Errorf("static busybox (Debian package busybox-static): %w", err))
	}
	if tl.kernel, err = FindKernel(kernelDir()); err != nil {
		errs = append(errs, fmt.Errorf("unpacked Debian kernel: %w", err))
	}
	return &tl, errors.Join(errs...)
}

func findStaticBusybox() (string, error) {
	path, err := exec.LookPath("busybox")
	if err != nil {
		return "", err
	}
	f, err := elf.Open(path)
	if err != nil {
		return "", fmt.Errorf("reading %s: %w", path, err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return "", fmt.Errorf("%s is dynamically linked", path)
		}
	}
	return path, nil
}

// requireTools returns the tools, or ends the test when one is missing. It
// fails where scripts/setup.sh could have installed them (as root, or in CI)
// and skips only when not root.
func requireTools(t testing.TB) *tools {
	t.Helper()
	tl, err := findTools()
	if err == nil {
		return tl
	}
	msg := fmt.Sprintf("vm: cannot run the VM tests; missing:\n%v\nrun scripts/setup.sh as root to install them", err)
	if mustHaveTools(os.Getenv("CI"), os.Geteuid()) {
		t.Fatal(msg)
	}
	t.Skip(msg + "\nskipped because not running as root (and CI is not true)")
	return nil
}

// mustHaveTools reports whether missing tools fail the test rather than skip
// it: in CI, and for root, who can run scripts/setup.sh.
func mustHaveTools(ci string, euid int) bool { return ci == "true" || euid == 0 }
