package vm

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

// The initramfs is two archives, concatenated (the kernel unpacks them in turn):
//
//	base    (gzip, cached)  /init, busybox, the modules: the same for every run
//	payload (plain, per run) /test/test.bin and /test/run, the command line,
//	                         and Config.Binaries (a netagent binary) in /test
//
// so a run costs one cpio of the test binary, not a rebuild of the whole image.

// baseFormat is mixed into the cache key; bump it when the base layout changes.
const baseFormat = "netagent-vm-base-2"

// markerPrefix starts every line the harness itself prints on the console.
const markerPrefix = "NETAGENT-VM-"

// baseParts is everything the base archive is made of.
type baseParts struct {
	kernel  *Kernel
	ix      *moduleIndex
	order   []Module // the modules to load, dependencies first
	busybox string   // its path on the host
	bb      []byte   // its contents
	files   []guestFile
	script  string // /init
}

// baseImage returns the path of the cached base archive for k, busybox,
// modules and programs, building it first if it is not cached yet. When
// the cache cannot be written (a user without a home, say) it builds into
// tmpDir instead.
func baseImage(k *Kernel, busybox string, modules []Module, programs []string, hostRoot bool, tmpDir string) (string, error) {
	b, err := collectBase(k, busybox, modules, programs, hostRoot)
	if err != nil {
		return "", err
	}
	path := filepath.Join(cacheDir(), "initramfs-"+b.key()+".cpio.gz")
	if _, err := os.Stat(path); err == nil {
		return path, nil
	}
	data, err := b.build()
	if err != nil {
		return "", fmt.Errorf("building initramfs %s: %w", path, err)
	}
	if err := writeFileAtomic(path, data); err != nil {
		path = filepath.Join(tmpDir, filepath.Base(path))
		if err := os.WriteFile(path, data, 0o600); err != nil {
			return "", fmt.Errorf("writing initramfs %s: %w", path, err)
		}
	}
	return path, nil
}

func collectBase(k *Kernel, busybox string, modules []Module, programs []string, hostRoot bool) (*baseParts, error) {
	b := &baseParts{kernel: k, busybox: busybox}
	var err error
	if b.ix, err = readModuleIndex(k.ModulesDir); err != nil {
		return nil, fmt.Errorf("kernel %s: %w", k.Dir, err)
	}
	if b.order, err = b.ix.loadOrder(modules); err != nil {
		return nil, fmt.Errorf("kernel %s: %w", k.Dir, err)
	}
	if b.bb, err = os.ReadFile(busybox); err != nil {
		return nil, fmt.Errorf("reading busybox: %w", err)
	}
	if b.files, err = programFiles(programs); err != nil {
		return nil, err
	}
	b.script = initScript(b.order, hostRoot)
	return b, nil
}

// key names everything the base archive is made of. The kernel directory
// carries the package version, so it stands for the module files.
func (b *baseParts) key() string {
	h := sha256.New()
	for _, part := range []string{baseFormat, b.kernel.Dir, b.kernel.Release, b.script} {
		h.Write([]byte(part))
		h.Write([]byte{0})
	}
	h.Write(b.bb)
	for _, f := range b.files {
		fmt.Fprintf(h, "%s\x00%d\x00", f.path, len(f.data))
		h.Write(f.data)
	}
	return hex.EncodeToString(h.Sum(nil))[:24]
}

func cacheDir() string {
	dir, err := os.UserCacheDir()
	if err != nil {
		dir = os.TempDir()
	}
	return filepath.Join(dir, "netagent-vm")
}

func (b *baseParts) build() ([]byte, error) {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf) // no name, zero mtime: deterministic
	cw := newCPIOWriter(zw)
	if err := b.writeTree(cw); err != nil {
		return nil, err
	}
	for _, m := range b.order {
		ko, err := readModule(filepath.Join(b.kernel.ModulesDir, b.ix.paths[m.Name]), b.busybox)
		if err != nil {
			return nil, err
		}
		if err := cw.File("lib/modules/"+m.Name+".ko", 0o644, ko); err != nil {
			return nil, err
		}
	}
	if err := cw.Close(); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	// The kernel looks for the next archive at a four-byte boundary.
	buf.Write(make([]byte, (4-buf.Len()%4)%4))
	return buf.Bytes(), nil
}

// baseDirs are the directories of every base archive.
var baseDirs = []string{"bin", "dev", "lib", "lib/modules", "proc", "root", "sys", "test", "tmp"}

func (b *baseParts) writeTree(cw *cpioWriter) error {
	for _, d := range append(slices.Clone(baseDirs), parentDirs(b.files, baseDirs)...) {
		if err := cw.Dir(d, 0o755); err != nil {
			return err
		}
	}
	// init's stdin/out/err: the kernel opens /dev/console before devtmpfs is up.
	if err := cw.CharDev("dev/console", 0o600, 5, 1); err != nil {
		return err
	}
	if err := cw.File("bin/busybox", 0o755, b.bb); err != nil {
		return err
	}
	if err := cw.Symlink("bin/sh", "busybox"); err != nil {
		return err
	}
	for _, f := range b.files {
		if err := cw.File(f.path, 0o755, f.data); err != nil {
			return err
		}
	}
	return cw.File("init", 0o755, []byte(b.script))
}

// readModule returns a module file's contents, decompressed: busybox insmod
// takes plain .ko files only.
func readModule(path, busybox string) ([]byte, error) {
	switch {
	case strings.HasSuffix(path, ".ko"):
		return os.ReadFile(path)
	case strings.HasSuffix(path, ".ko.xz"):
		out, err := exec.Command(busybox, "xzcat", path).Output()
		if err != nil {
			return nil, fmt.Errorf("decompressing module %s: %w", path, err)
		}
		return out, nil
	}
	return nil, fmt.Errorf("module %s: unsupported compression", path)
}

// initScript is /init: mount the pseudo file systems, load the modules in
// order, bring lo up, mount the host's root when hostRoot is set
// (Config.HostRoot), run /test/run, power off. A failed step prints a
// SETUP-FAILED marker and powers off at once.
func initScript(order []Module, hostRoot bool) string {
	var b strings.Builder
	b.WriteString(`#!/bin/sh
# Generated by netagent test/vm.
/bin/busybox mount -t devtmpfs devtmpfs /dev
/bin/busybox --install -s /bin
export PATH=` + guestBinDir + `:/bin LD_LIBRARY_PATH=` + GuestLibDir + ` HOME=/root TMPDIR=/tmp ` + GuestEnv + `=1
fail() { echo; echo "` + markerPrefix + `SETUP-FAILED: $*"; poweroff -f; }
mount -t proc proc /proc || fail "mount /proc"
mount -t sysfs sysfs /sys || fail "mount /sys"
mount -t tmpfs tmpfs /tmp || fail "mount /tmp"
`)
	for _, m := range order {
		args := append([]string{"/lib/modules/" + m.Name + ".ko"}, m.Params...)
		fmt.Fprintf(&b, "insmod %s || fail \"insmod %s\"\n", shellQuote(args), m.Name)
	}
	b.WriteString(`ip link set lo up || fail "ip link set lo up"
`)
	if hostRoot {
		b.WriteString(hostRootMount)
	}
	b.WriteString(`cd /test && /bin/sh /test/run
poweroff -f
`)
	return b.String()
}

// payload is the per-run archive: the test binary and the script that runs it
// between the start and exit markers, with env ("KEY=value") and NonceEnv
// in its environment, and the binaries (Config.Binaries) beside it in
// GuestBinaryDir.
func payload(binary string, binaries, args []string, nonce string, env []string) ([]byte, error) {
	bin, err := os.ReadFile(binary)
	if err != nil {
		return nil, fmt.Errorf("reading test binary: %w", err)
	}
	run := fmt.Sprintf("#!/bin/sh\nexport %s\necho\necho %sSTART-%s\n%s\nrc=$?\necho\necho \"%sEXIT-%s $rc\"\n",
		shellQuote(append([]string{NonceEnv + "=" + nonce}, env...)), markerPrefix, nonce,
		shellQuote(append([]string{"/test/test.bin"}, args...)), markerPrefix, nonce)
	var buf bytes.Buffer
	cw := newCPIOWriter(&buf)
	if err := cw.File("test/test.bin", 0o755, bin); err != nil {
		return nil, err
	}
	if err := cw.File("test/run", 0o755, []byte(run)); err != nil {
		return nil, err
	}
	if err := writeBinaries(cw, binaries); err != nil {
		return nil, err
	}
	if err := cw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// writeBinaries adds each binary as GuestBinary(its base name); a name
// the payload has already is refused.
func writeBinaries(cw *cpioWriter, binaries []string) error {
	seen := map[string]bool{"test.bin": true, "run": true}
	for _, b := range binaries {
		name := filepath.Base(b)
		if seen[name] {
			return fmt.Errorf("binary %s: the payload has a %s already", b, GuestBinary(name))
		}
		seen[name] = true
		data, err := os.ReadFile(b)
		if err != nil {
			return fmt.Errorf("reading binary: %w", err)
		}
		if err := cw.File(strings.TrimPrefix(GuestBinary(name), "/"), 0o755, data); err != nil {
			return err
		}
	}
	return nil
}

// writeInitrd writes the base archive followed by the payload to path.
func writeInitrd(path, base string, payload []byte) error {
	data, err := os.ReadFile(base)
	if err != nil {
		return fmt.Errorf("writing initrd %s: %w", path, err)
	}
	if err := os.WriteFile(path, append(data, payload...), 0o600); err != nil {
		return fmt.Errorf("writing initrd %s: %w", path, err)
	}
	return nil
}

func shellQuote(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return strings.Join(q, " ")
}

func writeFileAtomic(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name()) // fails harmlessly once renamed
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}
