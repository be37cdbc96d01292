package vm

import (
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// The guest has busybox only. Config.Programs carries host programs into it
// (iproute2's ip, ethtool: the real tools, for reading back independently
// of netagent), each with the ELF interpreter and the shared libraries it
// loads, found the way ld.so would: DT_NEEDED, recursively, in the
// system's library directories.
//
//	host /usr/sbin/ip           → guest /usr/bin/ip     (before busybox's applets on PATH)
//	host /lib64/ld-linux-*.so.2 → guest the same path   (the PT_INTERP the program names)
//	host libbpf.so.1, libc.so.6 → guest GuestLibDir     (LD_LIBRARY_PATH)

// GuestLibDir is where the programs' shared libraries live in the VM.
const GuestLibDir = "/usr/lib/netagent-vm"

// guestBinDir is where the programs go; it comes first on the guest's PATH.
const guestBinDir = "/usr/bin"

// hostLibDirs are searched in order for a DT_NEEDED library.
var hostLibDirs = []string{"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64", "/usr/lib64", "/lib", "/usr/lib"}

// guestFile is a file for the base archive; path has no leading '/'.
type guestFile struct {
	path string
	data []byte
}

// programFiles returns the files the programs need in the guest, each once.
func programFiles(programs []string) ([]guestFile, error) {
	c := &libCollector{seen: map[string]bool{}}
	for _, p := range programs {
		if err := c.addProgram(p); err != nil {
			return nil, err
		}
	}
	return c.files, nil
}

type libCollector struct {
	files []guestFile
	seen  map[string]bool // guest paths already added
}

func (c *libCollector) addProgram(name string) error {
	host, err := exec.LookPath(name)
	if err != nil {
		return fmt.Errorf("program %s for the VM: %w", name, err)
	}
	f, err := openELF(host)
	if err != nil {
		return fmt.Errorf("program %s for the VM: %w", name, err)
	}
	defer f.Close()
	if err := c.add(path.Join(guestBinDir, filepath.Base(host)), host); err != nil {
		return err
	}
	if interp := interpreter(f); interp != "" {
		if err := c.add(interp, interp); err != nil {
			return fmt.Errorf("program %s: %w", name, err)
		}
	}
	if err := c.addNeeded(f); err != nil {
		return fmt.Errorf("program %s: %w", name, err)
	}
	return nil
}

// addNeeded adds the libraries f names in DT_NEEDED, and theirs.
func (c *libCollector) addNeeded(f *elf.File) error {
	libs, err := f.ImportedLibraries()
	if err != nil {
		return err
	}
	for _, lib := range libs {
		guest := path.Join(GuestLibDir, lib)
		if c.seen[guest] {
			continue
		}
		host, err := findLib(lib)
		if err != nil {
			return err
		}
		if err := c.addLib(guest, host); err != nil {
			return fmt.Errorf("library %s: %w", lib, err)
		}
	}
	return nil
}

func (c *libCollector) addLib(guest, host string) error {
	if err := c.add(guest, host); err != nil {
		return err
	}
	f, err := openELF(host)
	if err != nil {
		return err
	}
	defer f.Close()
	return c.addNeeded(f)
}

// add reads host (through its symlinks) into the guest path, once.
func (c *libCollector) add(guest, host string) error {
	if c.seen[guest] {
		return nil
	}
	c.seen[guest] = true
	data, err := os.ReadFile(host)
	if err != nil {
		return err
	}
	c.files = append(c.files, guestFile{path: strings.TrimPrefix(guest, "/"), data: data})
	return nil
}

// openELF opens an x86-64 ELF file, the only kind the VM runs.
func openELF(path string) (*elf.File, error) {
	f, err := elf.Open(path)
	if err != nil {
		return nil, err
	}
	if f.Machine != elf.EM_X86_64 {
		f.Close()
		return nil, fmt.Errorf("%s: machine %v, want %v", path, f.Machine, elf.EM_X86_64)
	}
	return f, nil
}

// interpreter returns the program's PT_INTERP, "" for a static program.
func interpreter(f *elf.File) string {
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			b := make([]byte, p.Filesz)
			if _, err := p.ReadAt(b, 0); err == nil {
				return strings.TrimRight(string(b), "\x00")
			}
		}
	}
	return ""
}

func findLib(name string) (string, error) {
	for _, dir := range hostLibDirs {
		if p := filepath.Join(dir, name); fileExists(p) {
			return p, nil
		}
	}
	return "", fmt.Errorf("shared library %s: not in %s", name, strings.Join(hostLibDirs, ", "))
}

// parentDirs lists, parents first, the directories the files need that are
// not in have.
func parentDirs(files []guestFile, have []string) []string {
	var dirs []string
	for _, f := range files {
		for d := path.Dir(f.path); d != "."; d = path.Dir(d) {
			if !slices.Contains(have, d) && !slices.Contains(dirs, d) {
				dirs = append(dirs, d)
			}
		}
	}
	slices.SortFunc(dirs, func(a, b string) int {
		if d := strings.Count(a, "/") - strings.Count(b, "/"); d != 0 {
			return d
		}
		return strings.Compare(a, b)
	})
	return dirs
}
