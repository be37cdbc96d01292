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
