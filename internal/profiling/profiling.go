// Package profiling writes the profiles developers ask for through the
// environment (EnvCPUProfile, EnvMemProfile), for any command and the
// daemon: Start at the start of a command, HeapOnSignal in the daemon.
// Errors go to the writer given: a profile never fails a command.
package profiling

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"runtime/pprof"
	"syscall"
)

// Profiling for developers: NETAGENT_CPUPROFILE=FILE writes a CPU profile of
// the whole command to FILE and NETAGENT_MEMPROFILE=FILE a heap profile taken
// when it ends (read both with `go tool pprof`). They are environment
// variables rather than flags so that a profile of any command line, the
// daemon's included, needs no change to it. The daemon also writes the
// heap profile whenever it gets SIGUSR1 (HeapOnSignal): at its end
// its state is gone. NETAGENT_PEAKPROFILE=FILE writes the heap profile
// after every collection that found more live heap than any before, so
// that FILE ends up holding the profile of the peak (what a max RSS is
// made of; the profile at the end shows only what is left); with a %d in
// FILE, each such profile is kept, numbered.
const (
	EnvCPUProfile  = "NETAGENT_CPUPROFILE"
	EnvMemProfile  = "NETAGENT_MEMPROFILE"
	EnvPeakProfile = "NETAGENT_PEAKPROFILE"
)

// Start starts what the environment asks for; the returned function
// stops and writes them. Errors go to stderr: a profile never fails a command.
func Start(stderr io.Writer) (stop func()) {
	var cpu *os.File
	if path := os.Getenv(EnvCPUProfile); path != "" {
		f, err := os.Create(path)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintf(stderr, "netagent: %s: %v\n", EnvCPUProfile, err)
		} else {
			cpu = f
		}
	}
	if path := os.Getenv(EnvPeakProfile); path != "" {
		watchPeak(path, stderr)
	}
	return func() {
		if cpu != nil {
			pprof.StopCPUProfile()
			cpu.Close()
		}
		if path := os.Getenv(EnvMemProfile); path != "" {
			if err := writeHeapProfile(path); err != nil {
				fmt.Fprintf(stderr, "netagent: %s: %v\n", EnvMemProfile, err)
			}
		}
	}
}

func writeHeapProfile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	runtime.GC()
	if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// HeapOnSignal writes the heap profile to NETAGENT_MEMPROFILE's file
// whenever the process gets SIGUSR1, until ctx ends; without the variable
// it does nothing (SIGUSR1 keeps its default action). The channel it
// returns gets a value after each profile written (for tests; nobody need
// read it).
func HeapOnSignal(ctx context.Context, stderr io.Writer) <-chan struct{} {
	wrote := make(chan struct{}, 1)
	path := os.Getenv(EnvMemProfile)
	if path == "" {
		return wrote
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGUSR1)
	go func() {
		defer signal.Stop(sig)
		for {
			select {
			case <-ctx.Done():
				return
			case <-sig:
				if err := writeHeapProfile(path); err != nil {
					fmt.Fprintf(stderr, "netagent: %s: %v\n", EnvMemProfile, err)
				}
				select {
				case wrote <- struct{}{}:
				default:
				}
			}
		}
	}()
	return wrote
}
