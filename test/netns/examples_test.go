//go:build !vmtest

package netns_test

import (
	"path/filepath"
	"strings"
	"testing"
)

// Every example of examples/ is a valid intent (`netagent validate`).
func TestExamplesValidate(t *testing.T) {
	files, err := filepath.Glob("../../examples/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no examples: %v", err)
	}
	e := &cliEnv{t: t, bin: cliBinary(t), stateDir: t.TempDir()}
	for _, f := range files {
		if res := e.mustRun(0, "validate", f); !strings.HasPrefix(res.stdout, "valid: 1 file") {
			t.Errorf("validate %s: %s", f, res)
		}
	}
	t.Logf("%d examples valid", len(files))
}
