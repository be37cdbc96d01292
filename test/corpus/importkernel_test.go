//go:build !vmtest

package corpus_test

import (
	"strings"
	"testing"

	"github.com/netagent/netagent/internal/testbin"
)

// On a namespace configured by hand, import kernel names every object of
// others it leaves out in a warning (none is dropped silently) and prints
// a valid intent; a physical-like link (no kind) would be a physical
// interface, the others are not converted yet.
func TestImportKernelHandMade(t *testing.T) {
	e := newEnv(t, false)
	e.ip("link", "add", "h0", "type", "veth", "peer", "name", "h1")
	e.ip("link", "set", "h0", "up")
	e.ip("addr", "add", "10.77.0.1/24", "dev", "h0")
	e.ip("route", "add", "10.78.0.0/16", "via", "10.77.0.2")
	e.ip("rule", "add", "from", "10.77.0.0/24", "lookup", "100", "pref", "100")
	e.ip("neigh", "add", "10.77.0.5", "lladdr", "02:00:00:00:00:05", "dev", "h0", "nud", "permanent")
	r := testbin.Run(t, e.bin, nil, "--state-dir", e.stateDir, "--netns", e.tgt.Name, "import", "kernel")
	if r.Code != 0 {
		t.Fatalf("import kernel: exit %d\n%s", r.Code, r.Stderr)
	}
	for _, want := range []string{"link h0: veth", "link h1: veth", "address 10.77.0.1/24 dev h0",
		"route 10.78.0.0/16 via 10.77.0.2 dev h0", "rule ipv4 100: from 10.77.0.0/24 lookup 100",
		"neighbor 10.77.0.5 dev h0 lladdr 02:00:00:00:00:05"} {
		if !strings.Contains(r.Stderr, "warning: kernel: "+want) {
			t.Errorf("no warning for %q:\n%s", want, r.Stderr)
		}
	}
	if res := e.netagent("validate", e.writeFile("imported.json", r.Stdout)); res.code != 0 {
		t.Errorf("the imported intent does not validate: %s", res)
	}
}
