package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/netagent/netagent/agent/intent"
	"github.com/netagent/netagent/agent/oneshot"
)

// Several files sent to the daemon become one document holding every
// object of each; a single file goes as it is.
func TestDaemonDocument(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.json"), filepath.Join(dir, "b.json")
	os.WriteFile(a, []byte(`{"version": 1, "interfaces": [{"name": "br0", "type": "bridge"}], "sysctls": {"net.ipv4.ip_forward": "1"}}`), 0o600)
	os.WriteFile(b, []byte(`{"version": 1, "routes": [{"to": "10.0.0.0/8", "dev": "br0", "scope": "link"}]}`), 0o600)
	one, err := oneshot.DaemonDocument([]string{a})
	if raw, _ := os.ReadFile(a); err != nil || string(one) != string(raw) {
		t.Errorf("one file: %s, %v", one, err)
	}
	doc, err := oneshot.DaemonDocument([]string{a, b})
	if err != nil {
		t.Fatal(err)
	}
	in, err := intent.Parse(doc)
	if err != nil {
		t.Fatalf("%v\n%s", err, doc)
	}
	if len(in.Interfaces) != 1 || len(in.Routes) != 1 || in.Sysctls["net.ipv4.ip_forward"] != "1" {
		t.Errorf("merged: %s", doc)
	}
	if _, err := oneshot.DaemonDocument([]string{a, filepath.Join(dir, "missing.json")}); err == nil {
		t.Error("a missing file is not an error")
	}
}
