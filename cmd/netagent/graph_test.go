package main

import (
	"strings"
	"testing"
)

// graph prints the intended graph as DOT without touching the kernel, one
// cluster per file.
func TestGraphIntended(t *testing.T) {
	code, out, errOut := runCLI("graph", "../../examples/gateway.json")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{`digraph "intended"`, "cluster_", `"route/main 0.0.0.0/0 metric 100" -> "link/uplink0"`} {
		if !strings.Contains(out, want) {
			t.Errorf("DOT lacks %q:\n%s", want, out)
		}
	}
	if code, _, _ := runCLI("graph"); code != exitUsage {
		t.Errorf("no files, no --current: exit %d", code)
	}
}
