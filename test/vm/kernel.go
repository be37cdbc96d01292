package vm

import (
	"fmt"
	"os"
	"path/filepath"
)

// DefaultKernelDir is where scripts/setup.sh unpacks the Debian kernel
// package; "current" is a symlink to the version it fetched last.
const DefaultKernelDir = "/var/cache/netagent-vm/current"

// KernelDirEnv names the environment variable that overrides DefaultKernelDir.
const KernelDirEnv = "NETAGENT_VM_KERNEL_DIR"

// Kernel is an unpacked kernel package: the image qemu boots and the modules
// that go into the initramfs.
type Kernel struct {
	Dir        string // the unpacked package, symlinks resolved
	Release    string // uname -r inside the VM, e.g. "6.1.0-56-amd64"
	Image      string // what qemu boots: vmlinux if setup.sh extracted it, else boot/vmlinuz-<release>
	ModulesDir string // lib/modules/<release>, with the modules.dep depmod made
}

// kernelDir returns the directory to look for the kernel in.
func kernelDir() string {
	if dir := os.Getenv(KernelDirEnv); dir != "" {
		return dir
	}
	return DefaultKernelDir
}

// FindKernel checks that dir holds a complete unpacked kernel package, as
// scripts/setup.sh leaves it, and describes it.
func FindKernel(dir string) (*Kernel, error) {
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return nil, fmt.Errorf("kernel %s: %w", dir, err)
	}
	if _, err := os.Stat(filepath.Join(real, ".complete")); err != nil {
		return nil, fmt.Errorf("kernel %s: unpacking never finished: %w", dir, err)
	}
	images, err := filepath.Glob(filepath.Join(real, "boot", "vmlinuz-*"))
	if err != nil || len(images) != 1 {
		return nil, fmt.Errorf("kernel %s: want exactly one boot/vmlinuz-*, found %d", dir, len(images))
	}
	release := filepath.Base(images[0])[len("vmlinuz-"):]
	k := &Kernel{Dir: real, Release: release, Image: images[0],
		ModulesDir: filepath.Join(real, "lib", "modules", release)}
	// The uncompressed ELF boots in half the time: TCG is slow at decompressing.
	if vmlinux := filepath.Join(real, "vmlinux"); fileExists(vmlinux) {
		k.Image = vmlinux
	}
	if _, err := os.Stat(filepath.Join(k.ModulesDir, "modules.dep")); err != nil {
		return nil, fmt.Errorf("kernel %s: %w", dir, err)
	}
	return k, nil
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
