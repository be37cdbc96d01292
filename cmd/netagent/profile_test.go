package main

import (
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/netagent/netagent/internal/profiling"
)

func TestProfilesWrittenFromEnvironment(t *testing.T) {
	dir := t.TempDir()
	cpu, mem := filepath.Join(dir, "cpu.pprof"), filepath.Join(dir, "mem.pprof")
	t.Setenv(profiling.EnvCPUProfile, cpu)
	t.Setenv(profiling.EnvMemProfile, mem)
	if code := run([]string{"--state-dir", dir, "version"}, io.Discard, io.Discard); code != exitOK {
		t.Fatalf("version: exit %d", code)
	}
	for _, p := range []string{cpu, mem} {
		fi, err := os.Stat(p)
		if err != nil || fi.Size() == 0 {
			t.Errorf("%s: want a non-empty profile, got %v (err %v)", p, fi, err)
		}
	}
}
