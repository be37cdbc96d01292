package main

import (
	"encoding/json"
	"runtime"
	"strings"
	"testing"

	"github.com/netagent/netagent/internal/buildinfo"
)

// `netagent version` prints this binary's build info, not "netagent dev";
// --json the same as a document.
func TestVersionCommand(t *testing.T) {
	code, out, _ := runCLI("version")
	if code != exitOK || !strings.HasPrefix(out, "netagent ") || strings.Contains(out, "dev\n") || !strings.Contains(out, runtime.Version()) {
		t.Errorf("version: exit %d: %q", code, out)
	}
	code, out, _ = runCLI("version", "--json")
	var v buildinfo.Info
	if code != exitOK || json.Unmarshal([]byte(out), &v) != nil || v.Go != runtime.Version() || v.Version == "" || v.Platform == "" {
		t.Errorf("version --json: exit %d: %s", code, out)
	}
	if code, _, _ := runCLI("version", "extra"); code != exitUsage {
		t.Errorf("version extra: exit %d", code)
	}
}
