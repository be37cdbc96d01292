package profiling

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestHeapProfileOnSignal: with NETAGENT_MEMPROFILE set, SIGUSR1 writes the
// heap profile while the daemon runs.
func TestHeapProfileOnSignal(t *testing.T) {
	mem := filepath.Join(t.TempDir(), "mem.pprof")
	t.Setenv(EnvMemProfile, mem)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	wrote := HeapOnSignal(ctx, io.Discard)
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
