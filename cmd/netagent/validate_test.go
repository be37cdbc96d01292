package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// runCLI runs the command line and returns its exit code and outputs.
func runCLI(args ...string) (code int, stdout, stderr string) {
	var out, errOut bytes.Buffer
	code = run(args, &out, &errOut)
	return code, out.String(), errOut.String()
}

// writeIntent writes an intent file into a temporary directory.
func writeIntent(t *testing.T, name, doc string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestValidateExamples(t *testing.T) {
	for _, f := range []string{"gateway.json", "bonded.json"} {
		code, out, errOut := runCLI("validate", "../../examples/"+f)
		if code != exitOK || !strings.HasPrefix(out, "valid: 1 file,") {
			t.Errorf("validate %s: exit %d\n%s%s", f, code, out, errOut)
		}
	}
}

// Every problem is printed with its file and JSON path, and the exit code
// is 1.
func TestValidateInvalid(t *testing.T) {
	bad := writeIntent(t, "bad.json", `{"version": 1,
		"interfaces": [{"name": "v", "type": "vlan", "vlan": {"parent": "eth9", "id": 5000}}],
		"routes": [{"to": "10.0.0.0/8", "via": "2001:db8::1"}]}`)
	code, _, errOut := runCLI("validate", bad)
	if code != exitFailed {
		t.Errorf("exit %d, want %d", code, exitFailed)
	}
	for _, want := range []string{
		bad + `: interfaces[0].vlan.parent: interface "eth9" is not defined`,
		bad + ": interfaces[0].vlan.id: 5000 is out of range 1-4094",
		bad + ": routes[0].via: 2001:db8::1 is IPv6, but to 10.0.0.0/8 is IPv4",
		"invalid intent: 3 problems; nothing was changed",
	} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
}

// Several files are merged: references cross files, and an object defined
// twice is reported on both files.
func TestValidateSeveralFiles(t *testing.T) {
	a := writeIntent(t, "a.json", `{"version": 1, "interfaces": [{"name": "eth0", "type": "physical"}]}`)
	b := writeIntent(t, "b.json", `{"version": 1, "routes": [{"to": "default", "via": "192.0.2.1", "dev": "eth0"}]}`)
	if code, out, errOut := runCLI("validate", a, b); code != exitOK {
		t.Errorf("exit %d\n%s%s", code, out, errOut)
	}
	c := writeIntent(t, "c.json", `{"version": 1, "interfaces": [{"name": "eth0", "type": "physical", "mtu": 9000}]}`)
	code, _, errOut := runCLI("validate", a, b, c)
	if code != exitFailed || !strings.Contains(errOut, a+`: interfaces[0]: interface "eth0" is also defined at interfaces[0] in `+c) {
		t.Errorf("exit %d\n%s", code, errOut)
	}
}

func TestValidateUsage(t *testing.T) {
	if code, _, _ := runCLI("validate"); code != exitUsage {
		t.Errorf("no files: exit %d", code)
	}
	if code, _, errOut := runCLI("validate", "/nonexistent.json"); code != exitInternal || !strings.Contains(errOut, "no such file") {
		t.Errorf("missing file: exit %d: %s", code, errOut)
	}
	if code, _, _ := runCLI("validate", "-h"); code != exitOK {
		t.Errorf("-h: exit %d", code)
	}
}

// The commands that change or read the kernel validate the intent before
// they open the namespace: an invalid intent is exit 1 even for a
// namespace that does not exist.
func TestInvalidIntentNeverReachesTheKernel(t *testing.T) {
	bad := writeIntent(t, "bad.json", `{"version": 1, "routes": [{"to": "10.0.0.0/8"}]}`)
	for _, cmd := range []string{"apply", "plan", "check"} {
		code, _, errOut := runCLI("--state-dir", t.TempDir(), cmd, "--netns", "na-does-not-exist", bad)
		if code != exitFailed || !strings.Contains(errOut, "routes[0]: a unicast route needs via or dev") {
			t.Errorf("%s: exit %d\n%s", cmd, code, errOut)
		}
	}
	code, _, _ := runCLI("--state-dir", t.TempDir(), "plan", "--netns", "na-does-not-exist", "../../examples/gateway.json")
	if code != exitInternal {
		t.Errorf("valid intent, missing namespace: exit %d, want %d", code, exitInternal)
	}
}

// Every problem of a file in one run, through the binary (issue 29,
// point 4): a shape error (an unknown key, a wrong type) leaves its own
// object out and the semantic errors of the others are reported with
// their paths; a route on the broken eth0 is not called undefined.
// validate --json lists the same problems.
func TestBinaryEveryProblemInOneRun(t *testing.T) {
	bad := writeIntent(t, "bad.json", `{"version": 1,
 "interfaces": [
   {"name": "eth0", "type": "physical", "adresses": ["192.0.2.10/24"]},
   {"name": "br0", "type": "bridge", "mtu": "big"},
   {"name": "br1", "type": "bridge", "addresses": ["198.51.100.1/33"]}],
 "routes": [
   {"to": "203.0.113.0/24", "via": "192.0.2.1", "dev": "eth0"},
   {"to": "203.0.114.0/24", "dev": "nosuch0"},
   {"to": "10.1.0.1/8", "dev": "br1"}]}`)
	code, out, errOut := runBinary(t, "validate", bad)
	want := bad + `: interfaces[0]: unknown field "adresses"; did you mean "addresses"?
` + bad + `: interfaces[1].mtu: expected an integer, got a string
` + bad + `: interfaces[2].addresses[0]: "198.51.100.1/33" is not a valid CIDR address (like 192.0.2.10/24)
` + bad + `: routes[1].dev: interface "nosuch0" is not defined
` + bad + `: routes[2].to: 10.1.0.1/8 has host bits set (did you mean 10.0.0.0/8?)
netagent: invalid intent: 5 problems; nothing was changed
`
	if code != exitFailed || out != "" || errOut != want {
		t.Errorf("validate: exit %d\nstdout:\n%s\nstderr:\n%s\nwant:\n%s", code, out, errOut, want)
	}
	code, out, _ = runBinary(t, "validate", "--json", bad)
	var doc struct {
		Valid    bool
		Problems []struct{ Path, Message string }
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || code != exitFailed || doc.Valid || len(doc.Problems) != 5 || doc.Problems[4].Path != "routes[2].to" {
		t.Errorf("validate --json: exit %d, %v, %+v", code, err, doc)
	}
}

// A YAML file (netplan's) is refused as JSON that looks like YAML,
// naming the import that converts it (issue 29, point 5: intents are
// JSON, docs/intent.md says why), through the binary.
func TestBinaryYAMLSaysSo(t *testing.T) {
	y := writeIntent(t, "01-netcfg.yaml", "network:\n  version: 2\n  ethernets:\n    eth0:\n      dhcp4: true\n")
	code, out, errOut := runBinary(t, "validate", y)
	want := y + ": invalid JSON at line 1, column 3: invalid character 'e' in literal null (expecting 'u'); " +
		"intents are JSON, and this looks like YAML (netplan's YAML converts with `netagent import netplan FILE`)\n" +
		"netagent: invalid intent: 1 problem; nothing was changed\n"
	if code != exitFailed || out != "" || errOut != want {
		t.Errorf("validate of YAML: exit %d\nstdout:\n%s\nstderr:\n%s\nwant:\n%s", code, out, errOut, want)
	}
}
