// Package buildinfo is the version of the netagent binary, read out of
// the build info the Go toolchain stamps into it (module version, VCS
// revision and time, Go version, platform).
package buildinfo

import (
	"runtime"
	"runtime/debug"
	"strings"
)

// Info is what `netagent version --json` prints.
type Info struct {
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

// Stamp is what a build can set with -ldflags -X where the build info
// lacks it (scripts/install.sh sets both from git: a build with
// -buildvcs=false, as packaging environments use, has no VCS settings).
type Stamp struct {
	// Version, when set, is the version (git describe).
	Version string
	// Revision, when set and the build info has none, is the revision.
	Revision string
}

// Read reads the version out of the build info (nil: none), with what
// the stamp sets.
func Read(bi *debug.BuildInfo, stamp Stamp) Info {
	v := Info{Version: "unknown", Go: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
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
	if stamp.Version != "" {
		v.Version = stamp.Version
	}
	if v.Revision == "" {
		v.Revision = stamp.Revision
	}
	return v
}

// String is the line `netagent version` prints:
// "netagent v1.2.3 (revision 0123abc…, 2026-11-23T18:00:00Z, modified) go1.26.8 linux/amd64".
func (v Info) String() string {
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
