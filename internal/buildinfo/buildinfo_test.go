package buildinfo

import (
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
)

// version reads the module version, the VCS revision, its time, the
// dirty flag and the Go version out of the build info.
func TestBuildVersion(t *testing.T) {
	bi := &debug.BuildInfo{GoVersion: "go1.99.1", Main: debug.Module{Path: "github.com/netagent/netagent", Version: "v1.2.3"},
		Settings: []debug.BuildSetting{
			{Key: "vcs", Value: "git"},
			{Key: "vcs.revision", Value: "0123456789abcdef0123456789abcdef01234567"},
			{Key: "vcs.time", Value: "2026-11-23T18:00:00Z"},
			{Key: "vcs.modified", Value: "true"},
		}}
	v := Read(bi, Stamp{})
	want := Info{Version: "v1.2.3", Revision: "0123456789abcdef0123456789abcdef01234567", Time: "2026-11-23T18:00:00Z",
		Modified: true, Go: "go1.99.1", Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if v != want {
		t.Errorf("got %+v, want %+v", v, want)
	}
	line := "netagent v1.2.3 (revision 0123456789abcdef0123456789abcdef01234567, 2026-11-23T18:00:00Z, modified) go1.99.1 " + want.Platform
	if v.String() != line {
		t.Errorf("line %q, want %q", v.String(), line)
	}
	bi.Settings[3].Value = "false"
	if s := Read(bi, Stamp{}).String(); strings.Contains(s, "modified") {
		t.Errorf("clean checkout: %q", s)
	}
	if s := Read(bi, Stamp{Version: "v2.0.0-rc1"}).Version; s != "v2.0.0-rc1" {
		t.Errorf("-X main.version: %q", s)
	}
	if v := Read(bi, Stamp{Revision: "fedcba"}); v.Revision != want.Revision {
		t.Errorf("a stamped revision over the build info's: %q", v.Revision)
	}
	if v := Read(&debug.BuildInfo{}, Stamp{Version: "v1.0.0-3-gabc", Revision: "abc"}); v.Version != "v1.0.0-3-gabc" || v.Revision != "abc" {
		t.Errorf("-buildvcs=false, stamped: %+v", v)
	}
	if v := Read(nil, Stamp{}); v.Version != "unknown" || v.Go != runtime.Version() || v.String() != "netagent unknown "+runtime.Version()+" "+want.Platform {
		t.Errorf("no build info: %+v", v)
	}
}
