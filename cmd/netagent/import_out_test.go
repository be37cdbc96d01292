package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/netagent/netagent/agent/intent"
)

// TestImportOut: --out writes the intent (mode 0600) instead of printing
// it, replaces a file already there, and the file parses back; a refusal
// writes nothing. The eni source is wired as netplan's is.
func TestImportOut(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "interfaces")
	body := "auto eth0\niface eth0 inet static\n    address 192.0.2.1/24\n"
	if err := os.WriteFile(src, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "intent.json")
	if err := os.WriteFile(out, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, errOut := runCLI("import", "eni", "--out", out, src)
	if code != exitOK || stdout != "" {
		t.Fatalf("import eni --out: exit %d\n%s\n%s", code, stdout, errOut)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := intent.Parse(data); err != nil || !strings.Contains(string(data), `"192.0.2.1/24"`) {
		t.Fatalf("the written intent: %v\n%s", err, data)
	}
	if st, _ := os.Stat(out); st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", st.Mode().Perm())
	}

	if err := os.WriteFile(src, []byte(body+"    post-up true\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut = runCLI("import", "eni", "--out", out, src); code != exitFailed || !strings.Contains(errOut, src+":4:") {
		t.Fatalf("refused: exit %d\n%s", code, errOut)
	}
	if again, _ := os.ReadFile(out); string(again) != string(data) {
		t.Errorf("a refused import changed --out's file:\n%s", again)
	}
}
