package main

import (
	"os"
	"path/filepath"
	"testing"
)

// writeUnitsIntent writes an intent file for the units tests.
func writeUnitsIntent(t *testing.T, name, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(`{"version": 1, `+body+`}`), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// A bridge's forward delay is centiseconds (the old number) or a duration
// with its unit, as show prints it; a wrong duration is named with its
// JSON path.
func TestBinaryForwardDelayUnits(t *testing.T) {
	for _, fd := range []string{`1500`, `"15s"`, `"2.5s"`} {
		f := writeUnitsIntent(t, "br.json", `"interfaces": [{"name": "br0", "type": "bridge", "bridge": {"stp": true, "forwardDelay": `+fd+`}}]`)
		if code, out, errOut := runBinary(t, "validate", f); code != exitOK || out != "valid: 1 file, 1 item\n" || errOut != "" {
			t.Errorf("validate forwardDelay %s: exit %d\n%s%s", fd, code, out, errOut)
		}
	}
	for fd, msg := range map[string]string{
		`"1s"`:     `"1s" is out of range 2s-30s with stp on`,
		`100`:      `100 is out of range 200-3000 (centiseconds) with stp on`,
		`"15"`:     `"15" is no duration: give centiseconds (1500) or a duration with its unit ("15s")`,
		`"2.005s"`: `"2.005s" is not a whole number of centiseconds (10ms)`,
	} {
		f := writeUnitsIntent(t, "br.json", `"interfaces": [{"name": "br0", "type": "bridge", "bridge": {"stp": true, "forwardDelay": `+fd+`}}]`)
		want := f + ": interfaces[0].bridge.forwardDelay: " + msg + "\nnetagent: invalid intent: 1 problem; nothing was changed\n"
		if code, out, errOut := runBinary(t, "validate", f); code != exitFailed || out != "" || errOut != want {
			t.Errorf("validate forwardDelay %s: exit %d\nstdout:\n%s\nstderr:\n%s\nwant:\n%s", fd, code, out, errOut, want)
		}
	}
}

// Routes and rules name their table: the kernel's main, local, default or
// one of /etc/iproute2/rt_tables; an unknown name is refused with its
// JSON path, local and default as their numbers are.
func TestBinaryTableNames(t *testing.T) {
	ok := writeUnitsIntent(t, "main.json", `"interfaces": [{"name": "eth0", "type": "physical"}],
	  "routes": [{"to": "10.0.0.0/8", "dev": "eth0", "table": "main"}],
	  "rules": [{"priority": 100, "from": "10.0.0.0/8", "table": "main"}]`)
	if code, out, errOut := runBinary(t, "validate", ok); code != exitOK || out != "valid: 1 file, 3 items\n" || errOut != "" {
		t.Errorf("validate table main: exit %d\n%s%s", code, out, errOut)
	}
	for table, msg := range map[string]string{
		`"nosuch"`: `unknown table name "nosuch": give a number, main, local, default or a name of /etc/iproute2/rt_tables`,
		`"local"`:  `255 is reserved for the kernel's local table`,
	} {
		f := writeUnitsIntent(t, "t.json", `"interfaces": [{"name": "eth0", "type": "physical"}], "routes": [{"to": "10.0.0.0/8", "dev": "eth0", "table": `+table+`}]`)
		want := f + ": routes[0].table: " + msg + "\nnetagent: invalid intent: 1 problem; nothing was changed\n"
		if code, out, errOut := runBinary(t, "validate", f); code != exitFailed || out != "" || errOut != want {
			t.Errorf("validate table %s: exit %d\nstdout:\n%s\nstderr:\n%s\nwant:\n%s", table, code, out, errOut, want)
		}
	}
	f := writeUnitsIntent(t, "vrf.json", `"interfaces": [{"name": "blue", "type": "vrf", "vrf": {"table": "main"}}]`)
	want := f + ": interfaces[0].vrf.table: 254 is the main table; a vrf needs a table of its own (1-252, 256-4294967295)\nnetagent: invalid intent: 1 problem; nothing was changed\n"
	if code, out, errOut := runBinary(t, "validate", f); code != exitFailed || out != "" || errOut != want {
		t.Errorf("validate vrf table main: exit %d\nstdout:\n%s\nstderr:\n%s\nwant:\n%s", code, out, errOut, want)
	}
}

// A bond's miimon takes milliseconds or a duration with its unit.
func TestBinaryMiimonUnits(t *testing.T) {
	bond := func(v string) string {
		return `"interfaces": [{"name": "bond0", "type": "bond", "bond": {"mode": "active-backup", "miimon": ` + v + `}}]`
	}
	for _, v := range []string{`100`, `"100ms"`, `"1s"`} {
		f := writeUnitsIntent(t, "bond.json", bond(v))
		if code, out, errOut := runBinary(t, "validate", f); code != exitOK || out != "valid: 1 file, 1 item\n" || errOut != "" {
			t.Errorf("validate miimon %s: exit %d\n%s%s", v, code, out, errOut)
		}
	}
	f := writeUnitsIntent(t, "bond.json", bond(`"1.5ms"`))
	want := f + `: interfaces[0].bond.miimon: "1.5ms" is not a whole number of milliseconds (1ms)` + "\nnetagent: invalid intent: 1 problem; nothing was changed\n"
	if code, out, errOut := runBinary(t, "validate", f); code != exitFailed || out != "" || errOut != want {
		t.Errorf("validate miimon 1.5ms: exit %d\nstdout:\n%s\nstderr:\n%s\nwant:\n%s", code, out, errOut, want)
	}
}
