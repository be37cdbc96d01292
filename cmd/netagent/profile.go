package main

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
// heap profile whenever it gets SIGUSR1 (heapProfileOnSignal): at its end
// its state is gone.
const (
	envCPUProfile = "NETAGENT_CPUPROFILE"
	envMemProfile = "NETAGENT_MEMPROFILE"
)

// startProfiles starts what the environment asks for; the returned function
// stops and writes them. Errors go to stderr: a profile never fails a command.
func startProfiles(stderr io.Writer) (stop func()) {
	var cpu *os.File
	if path := os.Getenv(envCPUProfile); path != "" {
		f, err := os.Create(path)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintf(stderr, "netagent: %s: %v\n", envCPUProfile, err)
		} else {
			cpu = f
		}
	}
	return func() {
		if cpu != nil {
			pprof.StopCPUProfile()
			cpu.Close()
		}
		if path := os.Getenv(envMemProfile); path != "" {
			if err := writeHeapProfile(path); err != nil {
				fmt.Fprintf(stderr, "netagent: %s: %v\n", envMemProfile, err)
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

// heapProfileOnSignal writes the heap profile to NETAGENT_MEMPROFILE's file
// whenever the process gets SIGUSR1, until ctx ends; without the variable
// it does nothing (SIGUSR1 keeps its default action). The channel it
// returns gets a value after each profile written (for tests; nobody need
// read it).
func heapProfileOnSignal(ctx context.Context, stderr io.Writer) <-chan struct{} {
	wrote := make(chan struct{}, 1)
	path := os.Getenv(envMemProfile)
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
					fmt.Fprintf(stderr, "netagent: %s: %v\n", envMemProfile, err)
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
