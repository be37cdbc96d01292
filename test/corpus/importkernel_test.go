//go:build !vmtest

package corpus_test

import (
	"strings"
	"testing"

	"github.com/netagent/netagent/internal/testbin"
)

// On a namespace configured by hand, import kernel describes every object
// of others (none is dropped; nothing here needs a warning) and prints a
// valid intent: the veth pair, its address, the route, the rule, the
// permanent neighbour.
func TestImportKernelHandMade(t *testing.T) {
	e := newEnv(t, false)
	e.ip("link", "add", "h0", "type", "veth", "peer", "name", "h1")
	e.ip("link", "set", "h0", "up")
	e.ip("addr", "add", "10.77.0.1/24", "dev", "h0")
	e.ip("route", "add", "10.78.0.0/16", "via", "10.77.0.2")
	e.ip("rule", "add", "from", "10.77.0.0/24", "lookup", "100", "pref", "100")
	e.ip("neigh", "add", "10.77.0.5", "lladdr", "02:00:00:00:00:05", "dev", "h0", "nud", "permanent")
	r := testbin.Run(t, e.bin, nil, "--state-dir", e.stateDir, "--netns", e.tgt.Name, "import", "kernel")
	if r.Code != 0 || r.Stderr != "" {
		t.Fatalf("import kernel: exit %d\n%s", r.Code, r.Stderr)
	}
	for _, want := range []string{`"name": "h0"`, `"peer": "h1"`, `"10.77.0.1/24"`, `"to": "10.78.0.0/16"`,
		`"from": "10.77.0.0/24"`, `"mac": "02:00:00:00:00:05"`} {
		if !strings.Contains(r.Stdout, want) {
			t.Errorf("the import lacks %s:\n%s", want, r.Stdout)
		}
	}
	if res := e.netagent("validate", e.writeFile("imported.json", r.Stdout)); res.code != 0 {
		t.Errorf("the imported intent does not validate: %s", res)
	}
}
