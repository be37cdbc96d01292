package main

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
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

// versionInfo is what `version --json` prints.
type versionInfo struct {
	// Version is the module version: a release (v1.2.3), a
	// pseudo-version, or "(devel)" for a build from a checkout.
	Version string `json:"version"`
	// Revision, Time and Modified describe the checkout the binary was
	// built from (go build stamps them, -buildvcs); Modified: it had
	// uncommitted changes.
	Revision string `json:"revision,omitempty"`
	Time     string `json:"time,omitempty"`
	Modified bool   `json:"modified"`
	// Go is the Go version the binary was built with, Platform its
	// GOOS/GOARCH.
	Go       string `json:"go"`
	Platform string `json:"platform"`
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
	v := buildVersion(bi, version)
	if *asJSON {
		if writeJSON(g, v) != nil {
			return exitInternal
		}
		return exitOK
	}
	fmt.Fprintln(g.stdout, v)
	return exitOK
}

// buildVersion reads the version out of the build info (nil: none);
// override, when set, is the version.
func buildVersion(bi *debug.BuildInfo, override string) versionInfo {
	v := versionInfo{Version: "unknown", Go: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if bi != nil {
		if bi.Main.Version != "" {
			v.Version = bi.Main.Version
		}
		if bi.GoVersion != "" {
			v.Go = bi.GoVersion
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				v.Revision = s.Value
			case "vcs.time":
				v.Time = s.Value
			case "vcs.modified":
				v.Modified = s.Value == "true"
			}
		}
	}
	if override != "" {
		v.Version = override
	}
	return v
}

// String is the line `version` prints:
// "netagent v1.2.3 (revision 0123abc…, 2026-11-23T18:00:00Z, modified) go1.26.8 linux/amd64".
func (v versionInfo) String() string {
	var vcs []string
	if v.Revision != "" {
		vcs = append(vcs, "revision "+v.Revision)
	}
	if v.Time != "" {
		vcs = append(vcs, v.Time)
	}
	if v.Modified {
		vcs = append(vcs, "modified")
	}
	s := "netagent " + v.Version
	if len(vcs) > 0 {
		s += " (" + strings.Join(vcs, ", ") + ")"
	}
	return s + " " + v.Go + " " + v.Platform
}
