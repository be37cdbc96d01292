package systemd

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// migratingDoc is the switch-over these tests check.
const migratingDoc = "../docs/migrating.md"

// unitSettings are a unit file's settings by section and key, each key's
// values (space-separated lists split, repeated keys appended).
func unitSettings(t *testing.T, path string) map[string][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string][]string{}
	section := ""
	for sc := bufio.NewScanner(f); sc.Scan(); {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "" || strings.HasPrefix(line, "#"):
		case strings.HasPrefix(line, "["):
			section = strings.Trim(line, "[]")
		default:
			k, v, _ := strings.Cut(line, "=")
			out[section+"."+k] = append(out[section+"."+k], strings.Fields(v)...)
		}
	}
	return out
}

// TestMigratingUnitTakesOver: the unit can take over from the old tools at
// boot, as docs/migrating.md says in step 5: it is ordered where the
// host's systemd-networkd.service is (after network-pre.target, which it
// pulls in, and before network.target), waits for nothing later,
// `systemctl enable` makes it start at boot (WantedBy=multi-user.target),
// and it conflicts with no unit (a Conflicts= on an old tool's unit would
// stop it at `enable --now`: for ifupdown, ifdown -a).
func TestMigratingUnitTakesOver(t *testing.T) {
	ours := unitSettings(t, "netagent.service")
	networkd := unitSettings(t, "/lib/systemd/system/systemd-networkd.service")
	for _, c := range []struct{ key, target string }{
		{"Unit.After", "network-pre.target"}, {"Unit.Before", "network.target"},
	} {
		if !slices.Contains(networkd[c.key], c.target) {
			t.Fatalf("the host's systemd-networkd.service has no %s=%s: %v", c.key, c.target, networkd[c.key])
		}
		if !slices.Contains(ours[c.key], c.target) {
			t.Errorf("netagent.service lacks %s=%s, which systemd-networkd.service has", c.key, c.target)
		}
	}
	if !slices.Contains(ours["Unit.Wants"], "network-pre.target") {
		t.Error("netagent.service does not pull in network-pre.target (Wants=): ordering after it does nothing without")
	}
	for _, late := range []string{"network.target", "network-online.target", "multi-user.target"} {
		if slices.Contains(ours["Unit.After"], late) {
			t.Errorf("netagent.service is ordered After=%s: it would come up after what needs the network", late)
		}
	}
	if !slices.Contains(ours["Install.WantedBy"], "multi-user.target") {
		t.Errorf("WantedBy=%v: systemctl enable would not start it at boot", ours["Install.WantedBy"])
	}
	if c := ours["Unit.Conflicts"]; len(c) > 0 {
		t.Errorf("Conflicts=%v: starting netagent would stop those units", c)
	}
}

// eniCache is where scripts/setup.sh unpacks ifupdown2 (never installed).
const eniCache = "/var/cache/netagent-ifupdown2"

// TestMigratingIfupdown2StopsByIfdown: the reason docs/migrating.md says
// never to stop the old tool, checked on ifupdown2 itself: its
// networking.service stops with `start-networking stop`, which runs
// `ifdown -a`; and the page disables that unit and never stops,
// restarts or reloads it.
func TestMigratingIfupdown2StopsByIfdown(t *testing.T) {
	unit := filepath.Join(eniCache, "lib/systemd/system/networking.service")
	if _, err := os.Stat(unit); err != nil {
		if os.Getenv("CI") == "true" || os.Geteuid() == 0 {
			t.Fatalf("ifupdown2 is not unpacked (scripts/setup.sh): %v", err)
		}
		t.Skip("ifupdown2 is not unpacked in " + eniCache + " (scripts/setup.sh)")
	}
	stop := unitSettings(t, unit)["Service.ExecStop"]
	if len(stop) != 2 || stop[1] != "stop" {
		t.Fatalf("ifupdown2's ExecStop=%v, want start-networking stop", stop)
	}
	script, err := os.ReadFile(filepath.Join(eniCache, stop[0]))
	if err != nil {
		t.Fatal(err)
	}
	_, branch, _ := strings.Cut(string(script), "\nstop)")
	branch, _, _ = strings.Cut(branch, ";;")
	if !regexp.MustCompile(`\n\s*ifdown -a\b`).MatchString(branch) {
		t.Errorf("%s stop does not run ifdown -a:\n%s", stop[0], branch)
	}
	doc := migratingText(t)
	if !strings.Contains(doc, "systemctl disable networking.service") {
		t.Error("docs/migrating.md does not disable networking.service")
	}
	if m := regexp.MustCompile(`systemctl (stop|restart|reload|try-restart|kill)[^\n]*(networking|networkd)`).FindString(doc); m != "" {
		t.Errorf("docs/migrating.md runs %q", m)
	}
}

// TestMigratingCommands: every `netagent` command line in the page's
// shell blocks names a command netagent has, and options that command's
// help lists.
func TestMigratingCommands(t *testing.T) {
	bin := buildNetagent(t)
	lines := migratingCommands(t)
	if len(lines) < 6 {
		t.Fatalf("docs/migrating.md has %d netagent command lines, want the switch-over's", len(lines))
	}
	help := map[string]string{}
	for _, args := range lines {
		cmd := args[1]
		if _, ok := help[cmd]; !ok {
			out, err := exec.Command(bin, "help", cmd).CombinedOutput()
			if err != nil {
				t.Errorf("%v: netagent help %s: %v\n%s", args, cmd, err, out)
			}
			help[cmd] = string(out)
		}
		for _, a := range args[2:] {
			if strings.HasPrefix(a, "--") && !strings.Contains(help[cmd], "  "+strings.SplitN(a, "=", 2)[0]+"\n") &&
				!strings.Contains(help[cmd], "  "+strings.SplitN(a, "=", 2)[0]+" ") {
				t.Errorf("%v: netagent %s has no option %s", args, cmd, a)
			}
		}
	}
}

// migratingText is docs/migrating.md.
func migratingText(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(migratingDoc)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// migratingCommands are the netagent command lines in the page's ```sh
// blocks, as fields.
func migratingCommands(t *testing.T) [][]string {
	t.Helper()
	var out [][]string
	in := false
	for _, l := range strings.Split(migratingText(t), "\n") {
		l = strings.TrimSpace(l)
		switch {
		case strings.HasPrefix(l, "```"):
			in = l == "```sh"
		case in && strings.HasPrefix(l, "netagent "):
			out = append(out, strings.Fields(l))
		}
	}
	return out
}
