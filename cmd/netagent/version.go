package main

import (
	"fmt"
	"runtime/debug"

	"github.com/netagent/netagent/internal/buildinfo"
)

// version and revision, when set at build time with -ldflags
// "-X main.version=... -X main.revision=..." (scripts/install.sh does, from
// git), are the version in place of the build info's module version, and
// the revision where the build info has none (-buildvcs=false).
var version, revision = "", ""

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
	v := buildinfo.Read(bi, buildinfo.Stamp{Version: version, Revision: revision})
	if *asJSON {
		if writeJSON(g, v) != nil {
			return exitInternal
		}
		return exitOK
	}
	fmt.Fprintln(g.stdout, v)
	return exitOK
}
