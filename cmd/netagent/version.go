package main

import (
	"fmt"
	"runtime/debug"

	"github.com/netagent/netagent/internal/buildinfo"
)

// version, when set at build time with -ldflags "-X main.version=...",
// takes the place of the module version of the build info.
var version = ""

func init() {
	register(&command{
		name:    "version",
		summary: "print the version: module version, VCS revision, Go version (from the build info)",
		usage:   "[--json]",
		run:     runVersion,
	})
}

func runVersion(g *globals, args []string) int {
	fs := newFlagSet(g, "version", "")
	asJSON := fs.Bool("json", false, "print the version as JSON")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() > 0 {
		return usageError(g, fs, "unexpected arguments")
	}
	bi, _ := debug.ReadBuildInfo()
	v := buildinfo.Read(bi, version)
	if *asJSON {
		if writeJSON(g, v) != nil {
			return exitInternal
		}
		return exitOK
	}
	fmt.Fprintln(g.stdout, v)
	return exitOK
}
