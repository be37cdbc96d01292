package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestImportNetplan(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "01.yaml")
	body := "network:\n  ethernets:\n    e0: {addresses: [192.0.2.1/24]}\n  wifis:\n    wl0: {}\n"
	if err := os.WriteFile(f, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runCLI("import", "netplan", f)
	if code != exitFailed || out != "" || !strings.Contains(errOut, f+":5:5: network.wifis.wl0: netagent configures no wireless") {
		t.Errorf("refused: exit %d\n%s\n%s", code, out, errOut)
	}
	code, out, errOut = runCLI("import", "--skip-unsupported", "netplan", f)
	if code != exitOK || !strings.Contains(out, `"192.0.2.1/24"`) || !strings.Contains(errOut, "netagent configures no wireless interfaces (left out)") {
		t.Errorf("skipped: exit %d\n%s\n%s", code, out, errOut)
	}
	ns := filepath.Join(dir, "02.yaml")
	if err := os.WriteFile(ns, []byte("network:\n  ethernets:\n    e0: {nameservers: {addresses: [192.0.2.53]}}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = runCLI("import", "netplan", ns)
	if code != exitOK || !strings.Contains(out, `"192.0.2.53"`) || !strings.Contains(errOut, ":3:10: nameservers: netagent's dns is the host's") ||
		strings.Contains(errOut, "left out") {
		t.Errorf("a kept warning: exit %d\n%s\n%s", code, out, errOut)
	}
	if code, _, _ = runCLI("import", "netplan"); code != exitUsage {
		t.Errorf("no file: exit %d", code)
	}
	if code, _, _ = runCLI("import", "netplan", filepath.Join(dir, "missing.yaml")); code != exitInternal {
		t.Errorf("missing file: exit %d", code)
	}
}
