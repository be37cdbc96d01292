//go:build !vmtest

package netns_test

import (
	"strings"
	"testing"
)

// A link another program named with terminal escapes (the kernel takes
// any byte but '/', ':' and white space) is printed escaped by show --all,
// never as a sequence the terminal acts on.
func TestCLIShowEscapesForeignNames(t *testing.T) {
	e := cliNewEnv(t)
	e.ip("link", "add", "ev\x1b[2J", "type", "veth", "peer", "name", "ev\x1b]0;x\x07")
	e.ip("addr", "add", "10.66.0.1/24", "dev", "ev\x1b[2J")
	res := e.mustRun(0, "show", "--all")
	if strings.ContainsAny(res.stdout, "\x1b\x07") {
		t.Fatalf("show --all printed raw escapes:\n%q", res.stdout)
	}
	for _, want := range []string{`foreign link ev\x1b[2J`, `foreign link ev\x1b]0;x\x07`, `dev ev\x1b[2J`} {
		if !strings.Contains(res.stdout, want) {
			t.Errorf("show --all lacks %s:\n%s", want, res.stdout)
		}
	}
}
