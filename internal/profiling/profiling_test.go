package profiling

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
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

// TestPeakProfile: NETAGENT_PEAKPROFILE's file holds a heap profile once a
// collection found more live heap than before; %d numbers them.
func TestPeakProfile(t *testing.T) {
	defer func(r int) { runtime.MemProfileRate = r }(runtime.MemProfileRate)
	path := filepath.Join(t.TempDir(), "peak.%d")
	watchPeak(path, io.Discard)
	var keep [][]byte
	for i := 0; i < 4; i++ {
		keep = append(keep, make([]byte, 4<<20))
		runtime.GC()
		runtime.GC() // the finalizer of the first runs before the second ends
	}
	runtime.KeepAlive(keep)
	if fi, err := os.Stat(fmt.Sprintf(path, 1)); err != nil || fi.Size() == 0 {
		t.Errorf("want a non-empty first profile, got %v (err %v)", fi, err)
	}
}
