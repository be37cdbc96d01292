package profiling

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/metrics"
	"runtime/pprof"
	"strings"
)

// peakSampleRate is the heap profile's sampling interval while the peak is
// watched: finer than the runtime's 512 KiB, for a profile of a heap of
// some 100 MB that names the small allocations too.
const peakSampleRate = 64 << 10

// watchPeak writes the heap profile to path after every collection whose
// live heap is the largest yet (see EnvPeakProfile); a %d in path is
// replaced by the profile's number (1, 2, ...), to keep each. A finalizer on a
// sentinel object runs once after each collection and sets up the next.
func watchPeak(path string, stderr io.Writer) {
	runtime.MemProfileRate = peakSampleRate
	w := &peakWatch{path: path, stderr: stderr}
	w.sample = []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	w.arm()
}

type peakWatch struct {
	path   string
	stderr io.Writer
	sample []metrics.Sample
	max    uint64
	n      int // profiles written
}

// sentinel is allocated only to be collected.
type sentinel struct{ _ [16]byte }

func (w *peakWatch) arm() {
	runtime.SetFinalizer(&sentinel{}, func(*sentinel) { w.collected() })
}

// collected writes the profile when the live heap grew by more than 1 %
// over the largest yet, and arms the next collection.
func (w *peakWatch) collected() {
	defer w.arm()
	metrics.Read(w.sample)
	live := w.sample[0].Value.Uint64()
	if live <= w.max+w.max/100 {
		return
	}
	w.max = live
	w.n++
	path := w.path
	if strings.Contains(path, "%d") {
		path = fmt.Sprintf(path, w.n)
	}
	if err := writeProfile(path, "heap"); err != nil {
		fmt.Fprintf(w.stderr, "netagent: %s: %v\n", EnvPeakProfile, err)
	}
}

// writeProfile writes the named profile to path, through a file beside it
// renamed into place: a profile is whole or absent.
func writeProfile(path, name string) error {
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	if err := pprof.Lookup(name).WriteTo(f, 0); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
