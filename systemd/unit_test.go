package systemd

import (
	"bytes"
	"cmp"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestUnitVerifiesAsInstalled installs the unit as shipped, with a netagent
// binary built from this tree by the script (buildNetagent), into a temporary root with
// scripts/install.sh (DESTDIR), and runs `systemd-analyze verify --root` on
// it: the unit's ExecStart= must name the installed binary, and every
// other command and unit it refers to must exist (the root gets copies of
// the host's systemd units and of the other commands the unit runs). The
// tool comes with Debian's systemd package; without it the test skips on
// a developer's machine but fails in CI or as root, where scripts/setup.sh
// installs it.
func TestUnitVerifiesAsInstalled(t *testing.T) {
	tool := systemdAnalyze(t)
	bin := buildNetagent(t)
	for _, c := range []struct {
		prefix, unitDir string
	}{
		{"", "/usr/local/lib/systemd/system"}, // the default: /usr/local
		{"/opt/netagent", "/etc/systemd/system"},
	} {
		t.Run("prefix="+c.prefix, func(t *testing.T) {
			root := t.TempDir()
			install(t, root, c.prefix, bin)
			prefix := cmp.Or(c.prefix, "/usr/local")
			unitPath := filepath.Join(root, c.unitDir, "netagent.service")
			unit, err := os.ReadFile(unitPath)
			if err != nil {
				t.Fatalf("the unit is not installed: %v", err)
			}
			if shipped, _ := os.ReadFile("netagent.service"); c.prefix == "" && !bytes.Equal(unit, shipped) {
				t.Error("with the default PREFIX the installed unit differs from systemd/netagent.service")
			}
			if !strings.Contains(string(unit), "\nExecStart="+prefix+"/sbin/netagent ") {
				t.Errorf("the installed unit does not run %s/sbin/netagent", prefix)
			}
			if !sameFile(t, bin, filepath.Join(root, prefix, "sbin/netagent")) {
				t.Error("the installed binary is not the one built")
			}
			if fi, err := os.Stat(filepath.Join(root, "etc/netagent")); err != nil || fi.Mode().Perm() != 0o750 {
				t.Errorf("the intent directory: %v %v", fi, err)
			}
			for path, first := range map[string]string{
				"share/bash-completion/completions/netagent":    "# bash completion for netagent",
				"share/zsh/site-functions/_netagent":            "#compdef netagent",
				"share/fish/vendor_completions.d/netagent.fish": "# fish completion for netagent",
			} {
				if b, err := os.ReadFile(filepath.Join(root, prefix, path)); err != nil || !bytes.HasPrefix(b, []byte(first)) {
					t.Errorf("%s/%s: not the completion script (%v)", prefix, path, err)
				}
			}
			hostTree(t, root, string(unit))
			out, err := exec.Command(tool, "verify", "--root="+root, "netagent.service").CombinedOutput()
			if err != nil || len(bytes.TrimSpace(out)) > 0 {
				t.Fatalf("systemd-analyze verify --root: %v\n%s", err, out)
			}
			// The check has teeth: without the binary, verify fails.
			os.Remove(filepath.Join(root, prefix, "sbin/netagent"))
			if out, err := exec.Command(tool, "verify", "--root="+root, "netagent.service").CombinedOutput(); err == nil {
				t.Errorf("verify passed without the binary:\n%s", out)
			}
		})
	}
}

func systemdAnalyze(t *testing.T) string {
	t.Helper()
	tool, err := exec.LookPath("systemd-analyze")
	if err != nil {
		if os.Getenv("CI") == "true" || os.Geteuid() == 0 {
			t.Fatal("systemd-analyze is missing: install Debian's systemd package (scripts/setup.sh)")
		}
		t.Skip("systemd-analyze is missing (apt-get install systemd)")
	}
	return tool
}

// buildNetagent builds netagent as scripts/install.sh without a binary
// does, into a temporary root, where the build environment turns VCS
// stamping off (GOFLAGS=-buildvcs=false, as packaging environments do),
// and checks that the script stamped the version and revision from git:
// `netagent version --json` names the checkout's revision and git
// describe's version (issue 29, point 17). It returns the binary.
func buildNetagent(t *testing.T) string {
	t.Helper()
	git := func(args ...string) string {
		out, err := exec.Command("git", append([]string{"-C", ".."}, args...)...).Output()
		if err != nil {
			t.Fatalf("git %v: %v (the tests run in a git checkout)", args, err)
		}
		return strings.TrimSpace(string(out))
	}
	rev, describe := git("rev-parse", "HEAD"), git("describe", "--tags", "--always", "--dirty")
	root := t.TempDir()
	cmd := exec.Command("sh", "../scripts/install.sh")
	cmd.Env = append(os.Environ(), "DESTDIR="+root, "GOFLAGS=-buildvcs=false")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("install.sh: %v\n%s", err, out)
	}
	bin := filepath.Join(root, "usr/local/sbin/netagent")
	out, err := exec.Command(bin, "version", "--json").Output()
	if err != nil {
		t.Fatalf("version --json: %v", err)
	}
	var v struct{ Version, Revision string }
	if err := json.Unmarshal(out, &v); err != nil || v.Revision != rev || v.Version != describe {
		t.Errorf("installed version %s (%v), want revision %s, version %s", out, err, rev, describe)
	}
	return bin
}

// install runs scripts/install.sh with DESTDIR=root (and PREFIX, if set).
func install(t *testing.T, root, prefix, bin string) {
	t.Helper()
	cmd := exec.Command("sh", "../scripts/install.sh", bin)
	cmd.Env = append(os.Environ(), "DESTDIR="+root)
	if prefix != "" {
		cmd.Env = append(cmd.Env, "PREFIX="+prefix)
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("install.sh: %v\n%s", err, out)
	}
}

func sameFile(t *testing.T, a, b string) bool {
	t.Helper()
	x, err := os.ReadFile(a)
	if err != nil {
		t.Fatal(err)
	}
	y, err := os.ReadFile(b)
	return err == nil && bytes.Equal(x, y)
}

// hostTree gives root what the unit needs from the host besides netagent:
// the host's top-level links (/bin -> usr/bin on a merged-/usr system),
// its systemd units (the targets the unit is ordered against), and a copy
// of every other absolute command the unit runs.
func hostTree(t *testing.T, root, unit string) {
	t.Helper()
	for _, top := range []string{"bin", "sbin", "lib", "lib64"} {
		if target, err := os.Readlink("/" + top); err == nil && !filepath.IsAbs(target) {
			if err := os.Symlink(target, filepath.Join(root, top)); err != nil {
				t.Fatal(err)
			}
		}
	}
	units, err := filepath.EvalSymlinks("/lib/systemd/system")
	if err != nil {
		t.Fatalf("the host's systemd units: %v", err)
	}
	if err := os.MkdirAll(filepath.Join(root, filepath.Dir(units)), 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("cp", "-a", units, filepath.Join(root, filepath.Dir(units))).CombinedOutput(); err != nil {
		t.Fatalf("copying %s: %v\n%s", units, err, out)
	}
	for _, line := range strings.Split(unit, "\n") {
		k, v, ok := strings.Cut(line, "=")
		if !ok || !strings.HasPrefix(k, "Exec") {
			continue
		}
		cmd := strings.TrimLeft(strings.Fields(v)[0], "+-@:!")
		if strings.HasSuffix(cmd, "/netagent") {
			continue
		}
		real, err := filepath.EvalSymlinks(cmd)
		if err != nil {
			t.Fatalf("%s runs %s, which the host lacks: %v", k, cmd, err)
		}
		out, err := exec.Command("install", "-D", "-m", "0755", real, filepath.Join(root, real)).CombinedOutput()
		if err != nil {
			t.Fatalf("copying %s: %v\n%s", real, err, out)
		}
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
	if !strings.Contains(string(raw), "\nExecStartPre=/usr/local/sbin/netagent --state-dir /var/lib/netagent/host recover --all\n") {
		t.Error("no ExecStartPre runs `netagent recover --all`: a trial left pending by a crash or a reboot would not be reverted at boot")
	}
	exec := settings["ExecStart"]
	for _, arg := range []string{" run ", "--intent-dir /etc/netagent", "--socket /run/netagent/"} {
		if !strings.Contains(exec, arg) {
			t.Errorf("ExecStart=%q lacks %q", exec, arg)
		}
	}
}
