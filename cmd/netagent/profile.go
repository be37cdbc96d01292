package main

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/pprof"
)

// Profiling for developers: NETAGENT_CPUPROFILE=FILE writes a CPU profile of
// the whole command to FILE and NETAGENT_MEMPROFILE=FILE a heap profile taken
// when it ends (read both with `go tool pprof`). They are environment
// variables rather than flags so that a profile of any command line, the
// daemon's included, needs no change to it.
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
