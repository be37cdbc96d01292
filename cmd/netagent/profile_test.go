package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

func TestProfilesWrittenFromEnvironment(t *testing.T) {
	dir := t.TempDir()
	cpu, mem := filepath.Join(dir, "cpu.pprof"), filepath.Join(dir, "mem.pprof")
	t.Setenv(envCPUProfile, cpu)
	t.Setenv(envMemProfile, mem)
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

// TestHeapProfileOnSignal: with NETAGENT_MEMPROFILE set, SIGUSR1 writes the
// heap profile while the daemon runs.
func TestHeapProfileOnSignal(t *testing.T) {
	mem := filepath.Join(t.TempDir(), "mem.pprof")
	t.Setenv(envMemProfile, mem)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	wrote := heapProfileOnSignal(ctx, io.Discard)
	if err := syscall.Kill(os.Getpid(), syscall.SIGUSR1); err != nil {
		t.Fatal(err)
	}
	select {
	case <-wrote:
	case <-time.After(time.Minute):
		t.Fatal("no profile written after SIGUSR1")
	}
	if fi, err := os.Stat(mem); err != nil || fi.Size() == 0 {
		t.Errorf("%s: want a non-empty profile, got %v (err %v)", mem, fi, err)
	}
}
