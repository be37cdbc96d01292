package systemd

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestUnitVerifies runs `systemd-analyze verify` on netagent.service, with
// ExecStart= pointing at an executable that exists (verify checks it). The
// tool comes with Debian's systemd package; without it the test skips on
// a developer's machine but fails in CI or as root, where scripts/setup.sh
// installs it.
func TestUnitVerifies(t *testing.T) {
	tool, err := exec.LookPath("systemd-analyze")
	if err != nil {
		if os.Getenv("CI") == "true" || os.Geteuid() == 0 {
			t.Fatal("systemd-analyze is missing: install Debian's systemd package (scripts/setup.sh)")
		}
		t.Skip("systemd-analyze is missing (apt-get install systemd)")
	}
	unit, err := os.ReadFile("netagent.service")
	if err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	text := strings.ReplaceAll(string(unit), "/usr/local/sbin/netagent", self)
	path := filepath.Join(t.TempDir(), "netagent.service")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(tool, "verify", path).CombinedOutput()
	if err != nil || strings.Contains(string(out), "netagent.service") {
		t.Fatalf("systemd-analyze verify: %v\n%s", err, out)
	}
}

// TestUnitSettings pins the settings the agent's design relies on.
func TestUnitSettings(t *testing.T) {
	raw, err := os.ReadFile("netagent.service")
	if err != nil {
		t.Fatal(err)
	}
	settings := map[string]string{}
	for _, line := range strings.Split(string(raw), "\n") {
		if k, v, ok := strings.Cut(line, "="); ok && !strings.HasPrefix(line, "#") {
			settings[k] = v
		}
	}
	want := map[string]string{
		"Type":                    "notify",
		"Restart":                 "on-failure",
		"ExecReload":              "/bin/kill -HUP $MAINPID",
		"NotifyAccess":            "main",
		"CapabilityBoundingSet":   "CAP_NET_ADMIN CAP_NET_RAW CAP_SYS_ADMIN",
		"ProtectSystem":           "strict",
		"ProtectHome":             "yes",
		"PrivateTmp":              "yes",
		"NoNewPrivileges":         "yes",
		"RuntimeDirectory":        "netagent",
		"RuntimeDirectoryMode":    "0700",
		"RestrictAddressFamilies": "AF_UNIX AF_NETLINK AF_INET AF_INET6",
	}
	for k, v := range want {
		if settings[k] != v {
			t.Errorf("%s=%q, want %q", k, settings[k], v)
		}
	}
	if settings["WatchdogSec"] == "" {
		t.Error("WatchdogSec is not set")
	}
	if !strings.Contains(settings["ReadWritePaths"], "/var/lib/netagent") {
		t.Errorf("ReadWritePaths=%q does not hold the state directory", settings["ReadWritePaths"])
	}
	if _, set := settings["ProtectKernelTunables"]; set {
		t.Error("ProtectKernelTunables would make /proc/sys/net read-only: the sysctl configurator writes there")
	}
	exec := settings["ExecStart"]
	for _, arg := range []string{" run ", "--intent-dir /etc/netagent", "--socket /run/netagent/"} {
		if !strings.Contains(exec, arg) {
			t.Errorf("ExecStart=%q lacks %q", exec, arg)
		}
	}
}
