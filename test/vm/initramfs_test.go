package vm

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakeKernel lays out a kernel package with two tiny modules.
func fakeKernel(t *testing.T) (*Kernel, *moduleIndex) {
	t.Helper()
	dir := t.TempDir()
	k := &Kernel{Dir: dir, Release: "1.0-test", ModulesDir: filepath.Join(dir, "lib/modules/1.0-test")}
	files := map[string]string{
		"modules.dep":           "kernel/llc.ko:\nkernel/stp.ko: kernel/llc.ko\n",
		"kernel/llc.ko":         "llc module",
		"kernel/stp.ko":         "stp module",
		"../../../boot/vmlinuz": "",
	}
	for name, data := range files {
		path := filepath.Join(k.ModulesDir, name)
		must(t, os.MkdirAll(filepath.Dir(path), 0o755))
		must(t, os.WriteFile(path, []byte(data), 0o644))
	}
	ix, err := readModuleIndex(k.ModulesDir)
	must(t, err)
	return k, ix
}

func gunzip(t *testing.T, b []byte) []byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(b))
	must(t, err)
	zr.Multistream(false) // the kernel skips the zero padding after the member; so do we
	out, err := io.ReadAll(zr)
	must(t, err)
	return out
}

func TestBuildBaseIsDeterministic(t *testing.T) {
	k, ix := fakeKernel(t)
	order, err := ix.loadOrder([]Module{{Name: "stp", Params: []string{"x=1"}}})
	must(t, err)
	build := func() []byte {
		parts := &baseParts{kernel: k, ix: ix, order: order, bb: []byte("busybox"), script: initScript(order, false),
			files: []guestFile{{path: "usr/lib/netagent-vm/libc.so.6", data: []byte("libc")}, {path: "usr/bin/ip", data: []byte("ip")}}}
		b, err := parts.build()
		must(t, err)
		return b
	}
	first, second := build(), build()
	if !bytes.Equal(first, second) {
		t.Fatal("two builds of the same base archive differ")
	}
	if len(first)%4 != 0 {
		t.Errorf("base archive length %d: the payload after it would not start on a 4-byte boundary", len(first))
	}
	got := map[string]string{}
	for _, e := range readCPIO(t, gunzip(t, first)) {
		got[e.name] = e.data
	}
	for name, data := range map[string]string{
		"bin/busybox": "busybox", "bin/sh": "busybox", "dev/console": "",
		"lib/modules/llc.ko": "llc module", "lib/modules/stp.ko": "stp module",
		"usr": "", "usr/bin": "", "usr/lib": "", "usr/lib/netagent-vm": "",
		"usr/bin/ip": "ip", "usr/lib/netagent-vm/libc.so.6": "libc",
	} {
		if d, ok := got[name]; !ok || d != data {
			t.Errorf("base archive entry %s = %q (present %v), want %q", name, d, ok, data)
		}
	}
}

func TestInitScriptLoadsModulesInOrder(t *testing.T) {
	script := initScript([]Module{{Name: "llc"}, {Name: "bonding", Params: []string{"max_bonds=0"}}}, false)
	llc := strings.Index(script, "insmod '/lib/modules/llc.ko' ||")
	bonding := strings.Index(script, "insmod '/lib/modules/bonding.ko' 'max_bonds=0' ||")
	if llc < 0 || bonding < llc {
		t.Errorf("init script does not load llc, then bonding with max_bonds=0:\n%s", script)
	}
	for _, want := range []string{"mount -t proc", "mount -t sysfs", "devtmpfs", "ip link set lo up", "/test/run", "poweroff -f"} {
		if !strings.Contains(script, want) {
			t.Errorf("init script lacks %q", want)
		}
	}
}

func TestPayloadQuotesArguments(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "bin")
	must(t, os.WriteFile(bin, []byte("binary"), 0o755))
	p, err := payload(bin, nil, []string{"-test.run=^TestA$", "it's"}, "N0NCE", []string{"A=b c"})
	must(t, err)
	entries := readCPIO(t, p)
	if len(entries) != 2 || entries[0].name != "test/test.bin" || entries[0].data != "binary" {
		t.Fatalf("payload entries = %+v, want test/test.bin then test/run", entries)
	}
	run := entries[1].data
	for _, want := range []string{
		`'/test/test.bin' '-test.run=^TestA$' 'it'\''s'`,
		"echo " + markerPrefix + "START-N0NCE",
		"export '" + NonceEnv + "=N0NCE' 'A=b c'\n",
		`echo "` + markerPrefix + `EXIT-N0NCE $rc"`,
	} {
		if !strings.Contains(run, want) {
			t.Errorf("run script lacks %q:\n%s", want, run)
		}
	}
}

// xz -c of "fake module\n".
var fakeModuleXZ = []byte{0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00, 0x00, 0x04, 0xe6, 0xd6, 0xb4, 0x46,
	0x02, 0x00, 0x21, 0x01, 0x16, 0x00, 0x00, 0x00, 0x74, 0x2f, 0xe5, 0xa3, 0x01, 0x00, 0x0b, 0x66,
	0x61, 0x6b, 0x65, 0x20, 0x6d, 0x6f, 0x64, 0x75, 0x6c, 0x65, 0x0a, 0x00, 0xa6, 0x04, 0x35, 0x69,
	0xe2, 0x9a, 0x02, 0xd1, 0x00, 0x01, 0x24, 0x0c, 0xa6, 0x18, 0xd8, 0xd8, 0x1f, 0xb6, 0xf3, 0x7d,
	0x01, 0x00, 0x00, 0x00, 0x00, 0x04, 0x59, 0x5a}

func TestReadModuleDecompressesXZ(t *testing.T) {
	tl := requireTools(t)
	path := filepath.Join(t.TempDir(), "fake.ko.xz")
	must(t, os.WriteFile(path, fakeModuleXZ, 0o644))
	got, err := readModule(path, tl.busybox)
	if err != nil || string(got) != "fake module\n" {
		t.Errorf("readModule(%s) = %q, %v; want %q", path, got, err, "fake module\n")
	}
	if _, err := readModule(strings.TrimSuffix(path, ".xz")+".zst", tl.busybox); err == nil {
		t.Error("readModule(.ko.zst) succeeded, want an unsupported-compression error")
	}
}

// Config.Binaries go into the payload beside the test binary, under their
// base names; one named like the payload's own files, or twice, is refused.
func TestPayloadCarriesBinaries(t *testing.T) {
	dir := t.TempDir()
	bin, tool := filepath.Join(dir, "bin"), filepath.Join(dir, "netagent")
	must(t, os.WriteFile(bin, []byte("binary"), 0o755))
	must(t, os.WriteFile(tool, []byte("tool"), 0o755))
	p, err := payload(bin, []string{tool}, nil, "N0NCE", nil)
	must(t, err)
	entries := readCPIO(t, p)
	if len(entries) != 3 || entries[2].name != "test/netagent" || entries[2].data != "tool" || GuestBinary("netagent") != "/test/netagent" {
		t.Fatalf("payload entries = %+v, want test/test.bin, test/run, test/netagent", entries)
	}
	run := filepath.Join(t.TempDir(), "run")
	must(t, os.WriteFile(run, []byte("x"), 0o755))
	for _, bad := range [][]string{{run}, {tool, tool}} {
		if _, err := payload(bin, bad, nil, "N0NCE", nil); err == nil || !strings.Contains(err.Error(), "has a /test/") {
			t.Errorf("payload with binaries %v: %v, want a refusal", bad, err)
		}
	}
}

func TestInitScriptMountsHostRootOnlyWhenAsked(t *testing.T) {
	mount := "mount -t 9p -o trans=virtio,version=9p2000.L,ro,cache=loose hostroot " + GuestHostRoot
	with, without := initScript(nil, true), initScript(nil, false)
	if !strings.Contains(with, mount) || strings.Index(with, mount) > strings.Index(with, "/test/run") {
		t.Errorf("init script with HostRoot does not mount the share before the tests:\n%s", with)
	}
	if strings.Contains(without, "9p") {
		t.Errorf("init script without HostRoot mounts a 9p share:\n%s", without)
	}
}
