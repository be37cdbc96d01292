package vm

import (
	"os/exec"
	"reflect"
	"slices"
	"testing"
)

// TestProgramFilesFollowsLibraries collects ethtool (which setup.sh
// installs): the program, its interpreter at the path it names, and its
// libraries with theirs, each once.
func TestProgramFilesFollowsLibraries(t *testing.T) {
	if _, err := exec.LookPath("ethtool"); err != nil {
		t.Fatal("ethtool is missing: run scripts/setup.sh")
	}
	files, err := programFiles([]string{"ethtool", "ethtool"})
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, f := range files {
		if len(f.data) == 0 {
			t.Errorf("%s is empty", f.path)
		}
		paths = append(paths, f.path)
	}
	for _, want := range []string{"usr/bin/ethtool", "usr/lib/netagent-vm/libc.so.6", "usr/lib/netagent-vm/libmnl.so.0"} {
		if !slices.Contains(paths, want) {
			t.Errorf("files %q lack %s", paths, want)
		}
	}
	if !slices.ContainsFunc(paths, func(p string) bool { return p == "lib64/ld-linux-x86-64.so.2" }) {
		t.Errorf("files %q lack the interpreter", paths)
	}
	if n := len(paths); n != len(slices.Compact(slices.Sorted(slices.Values(paths)))) {
		t.Errorf("files %q name one path twice", paths)
	}
}

func TestProgramFilesNamesWhatIsMissing(t *testing.T) {
	if _, err := programFiles([]string{"no-such-program-here"}); err == nil {
		t.Error("programFiles of a missing program succeeded")
	}
}

func TestParentDirsComeParentsFirst(t *testing.T) {
	files := []guestFile{{path: "usr/lib/x/libc.so"}, {path: "usr/bin/ip"}, {path: "lib64/ld.so"}, {path: "lib/y"}}
	got := parentDirs(files, []string{"lib"})
	want := []string{"lib64", "usr", "usr/bin", "usr/lib", "usr/lib/x"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("parentDirs = %q, want %q", got, want)
	}
}
